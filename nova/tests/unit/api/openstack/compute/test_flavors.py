"""GET /flavors, /flavors/detail, /flavors/{id}."""

from nova import objects
from nova.tests.unit.api.openstack import fakes


class FlavorsTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        objects.Flavor.create(self.ctx, '2', 'm1.small', 2048, 1, 20,
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
