"""GET /flavors, /flavors/detail, /flavors/{id}."""

from nova.api.openstack import auth
from nova.api import wsgi as api_wsgi
from nova.objects import flavor_catalog
from nova.tests.unit.api.openstack import fakes


class FlavorsTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        flavor_catalog.create(self.ctx, '2', 'm1.small', 2048, 1, 20,
                              swap=512)

    def test_index_and_detail(self):
        response = self.request('GET', '/v2.1/flavors',
                                token=fakes.USER_TOKEN)
        self.assertEqual([('1', 'm1.tiny'), ('2', 'm1.small')],
                         [(f['id'], f['name'])
                          for f in response.json['flavors']])
        response = self.request('GET', '/v2.1/flavors/detail?minRam=1024')
        (small,) = response.json['flavors']
        self.assertEqual((2048, 1, 20, 0, 512),
                         (small['ram'], small['vcpus'], small['disk'],
                          small['OS-FLV-EXT-DATA:ephemeral'],
                          small['swap']))

    def test_limit_and_marker(self):
        flavor_catalog.create(self.ctx, '3', 'm1.medium', 4096, 2, 40)
        for path in ('flavors', 'flavors/detail'):
            with self.subTest(path=path):
                first = self.request(
                    'GET', '/v2.1/%s?limit=2&minDisk=0' % path).json
                self.assertEqual(['1', '2'],
                                 [f['id'] for f in first['flavors']])
                # A full page links to the next one, the query kept.
                self.assertEqual(
                    [{'rel': 'next',
                      'href': 'http://localhost/v2.1/%s?limit=2&minDisk=0'
                              '&marker=2' % path}],
                    first['flavors_links'])
                rest = self.request(
                    'GET', '/v2.1/%s?limit=2&marker=2' % path).json
                self.assertEqual({'flavors'}, set(rest))
                self.assertEqual(['3'], [f['id'] for f in rest['flavors']])
                # Unlimited: the whole list and no link.
                every = self.request('GET', '/v2.1/%s' % path).json
                self.assertEqual({'flavors'}, set(every))
                self.assertEqual(3, len(every['flavors']))

    def test_a_page_is_at_most_max_limit(self):
        self.flags(group='api', max_limit=1)
        self.app = api_wsgi.make_app(self.compute_api,
                                     image_store=self.images,
                                     authenticator=auth.NoAuth2())
        response = self.request('GET', '/v2.1/flavors?limit=5')
        self.assertEqual(['1'], [f['id'] for f in
                                 response.json['flavors']])
        self.assertIn('marker=1', response.json['flavors_links'][0]['href'])

    def test_bad_limit_or_unknown_marker_is_400(self):
        for query in ('limit=x', 'limit=-1', 'marker=99'):
            with self.subTest(query=query):
                self.assertFault(self.request('GET', '/v2.1/flavors?'
                                              + query), 400, 'badRequest')

    def test_show(self):
        flavor = self.request('GET', '/v2.1/flavors/1').json['flavor']
        self.assertEqual(('m1.tiny', ''), (flavor['name'], flavor['swap']))
        self.assertEqual('http://localhost/v2.1/flavors/1',
                         flavor['links'][0]['href'])

    def test_unknown_is_404(self):
        for flavor_id in ('99', 'a b', '%252e'):
            with self.subTest(flavor_id=flavor_id):
                self.assertFault(self.request('GET', '/v2.1/flavors/%s'
                                              % flavor_id), 404,
                                 'itemNotFound')

    def test_bad_filter_is_400(self):
        self.assertFault(self.request('GET', '/v2.1/flavors?minRam=x'), 400,
                         'badRequest')

    def test_description_from_255(self):
        for path in ('/v2.1/flavors', '/v2.1/flavors/detail'):
            with self.subTest(path=path):
                (tiny, _small) = self.request(
                    'GET', path, version='2.54').json['flavors']
                self.assertNotIn('description', tiny)
                (tiny, _small) = self.request(
                    'GET', path, version='2.55').json['flavors']
                self.assertIsNone(tiny['description'])
        flavor = self.request('GET', '/v2.1/flavors/1',
                              version='2.55').json['flavor']
        self.assertIsNone(flavor['description'])

    def test_extra_specs_in_details_from_261(self):
        self.assertNotIn('extra_specs', self.request(
            'GET', '/v2.1/flavors/1', version='2.60').json['flavor'])
        self.assertEqual({}, self.request(
            'GET', '/v2.1/flavors/1', version='2.61').json['flavor'][
                'extra_specs'])
        (tiny, _small) = self.request('GET', '/v2.1/flavors/detail',
                                      version='2.61').json['flavors']
        self.assertEqual({}, tiny['extra_specs'])
        (tiny, _small) = self.request('GET', '/v2.1/flavors',
                                      version='2.61').json['flavors']
        self.assertNotIn('extra_specs', tiny)

    def test_no_swap_is_0_from_275(self):
        self.assertEqual('', self.request(
            'GET', '/v2.1/flavors/1', version='2.74').json['flavor']['swap'])
        self.assertEqual(0, self.request(
            'GET', '/v2.1/flavors/1', version='2.75').json['flavor']['swap'])
        self.assertEqual(512, self.request(
            'GET', '/v2.1/flavors/2', version='2.75').json['flavor']['swap'])
