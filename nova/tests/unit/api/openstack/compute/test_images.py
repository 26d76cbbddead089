"""GET /images (the image proxy, up to microversion 2.35)."""

from nova.tests.unit.api.openstack import fakes


class ImagesTest(fakes.APITestCase):

    def test_index(self):
        response = self.request('GET', '/v2.1/images')
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual({fakes.IMAGE.id: 'cirros', fakes.KERNEL.id: 'kernel'},
                         {i['id']: i['name']
                          for i in response.json['images']})
        response = self.request('GET', '/v2.1/images?name=cirros')
        self.assertEqual([fakes.IMAGE.id],
                         [i['id'] for i in response.json['images']])

    def test_detail_and_show(self):
        response = self.request('GET', '/v2.1/images/%s' % fakes.IMAGE.id)
        image = response.json['image']
        self.assertEqual(('ACTIVE', 100, 1024),
                         (image['status'], image['progress'],
                          image['OS-EXT-IMG-SIZE:size']))
        response = self.request('GET', '/v2.1/images/detail')
        self.assertEqual(2, len(response.json['images']))

    # The reference's fields, exactly (no server: nothing is a snapshot).
    BASIC = {'id', 'name', 'links'}
    DETAIL = BASIC | {'minRam', 'minDisk', 'metadata', 'created', 'updated',
                      'status', 'progress', 'OS-EXT-IMG-SIZE:size'}

    def test_exactly_the_reference_fields(self):
        for version in ('2.1', '2.35'):
            with self.subTest(version=version):
                listed = self.request('GET', '/v2.1/images',
                                      version=version).json['images']
                self.assertEqual([self.BASIC] * 2, [set(i) for i in listed])
                detailed = self.request('GET', '/v2.1/images/detail',
                                        version=version).json['images']
                self.assertEqual([self.DETAIL] * 2,
                                 [set(i) for i in detailed])
                image = self.request('GET', '/v2.1/images/%s'
                                     % fakes.IMAGE.id,
                                     version=version).json['image']
                self.assertEqual(self.DETAIL, set(image))

    def test_created_and_updated_are_when_the_image_was_added(self):
        image = self.request('GET', '/v2.1/images/%s'
                             % fakes.IMAGE.id).json['image']
        self.assertEqual(('2024-05-06T07:08:09Z', '2024-05-06T07:08:09Z'),
                         (image['created'], image['updated']))

    def test_removed_from_236(self):
        for path in ('/v2.1/images', '/v2.1/images/detail',
                     '/v2.1/images/%s' % fakes.IMAGE.id):
            with self.subTest(path=path):
                self.assertEqual(200, self.request(
                    'GET', path, version='2.35').status_int)
                self.assertFault(self.request('GET', path, version='2.36'),
                                 404, 'itemNotFound')

    def test_unknown_or_invalid_id_is_404(self):
        for image_id in ('3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c', 'cirros',
                         '%252e%252e'):
            with self.subTest(image_id=image_id):
                self.assertFault(self.request('GET', '/v2.1/images/%s'
                                              % image_id), 404,
                                 'itemNotFound')

    # Filters Tempest's list tests use, on the local store's images.
    def _ids(self, query):
        return [i['id'] for i in self.request(
            'GET', '/v2.1/images' + query).json['images']]

    def test_status_filter_and_limit(self):
        ids = self._ids
        self.assertEqual(2, len(ids('?status=ACTIVE')))
        self.assertEqual([], ids('?status=SAVING'))
        self.assertEqual(1, len(ids('?limit=1')))

    def test_metadata_of_the_local_store_is_read_only(self):
        path = '/v2.1/images/%s/metadata' % fakes.IMAGE.id
        response = self.request('GET', path)
        self.assertEqual((200, {'metadata': {}}),
                         (response.status_int, response.json))
        self.assertFault(self.request('GET', path + '/missing'), 404,
                         'itemNotFound')
        response = self.request('PUT', path, body={'metadata': {'a': 'b'}})
        self.assertEqual(405, response.status_int, response.text)
        self.assertEqual({'metadata': {}}, self.request('GET', path).json)
        self.assertEqual(405, self.request(
            'DELETE', '/v2.1/images/%s' % fakes.IMAGE.id).status_int)
        self.assertEqual(200, self.request(
            'GET', '/v2.1/images/%s' % fakes.IMAGE.id).status_int)

    def test_metadata_of_an_unknown_image_is_404(self):
        path = '/v2.1/images/3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c/metadata'
        self.assertFault(self.request('GET', path), 404, 'itemNotFound')
        self.assertFault(self.request('PUT', path,
                                      body={'metadata': {'a': 'b'}}),
                         404, 'itemNotFound')
