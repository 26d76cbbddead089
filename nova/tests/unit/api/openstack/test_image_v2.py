"""/image: the image store as the Image service v2 shows it."""

from nova.tests.unit.api.openstack import fakes


class ImageV2Test(fakes.APITestCase):

    def test_version_document_is_public(self):
        for path in ('/image', '/image/'):
            with self.subTest(path=path):
                response = self.request('GET', path, token=None)
                self.assertEqual(200, response.status_int, response.text)
                (version,) = response.json['versions']
                self.assertEqual('CURRENT', version['status'])
                self.assertTrue(version['links'][0]['href'].endswith(
                    '/image/v2/'))

    def test_list_and_filters(self):
        response = self.request('GET', '/image/v2/images')
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual({fakes.IMAGE.id: 'cirros', fakes.KERNEL.id: 'kernel'},
                         {i['id']: i['name'] for i in response.json['images']})
        for query, expected in (('name=cirros', [fakes.IMAGE.id]),
                                ('id=%s' % fakes.KERNEL.id,
                                 [fakes.KERNEL.id]),
                                ('name=none', [])):
            with self.subTest(query=query):
                response = self.request('GET', '/image/v2/images?' + query)
                self.assertEqual(expected, [
                    i['id'] for i in response.json['images']])

    def test_show_has_glance_fields(self):
        response = self.request('GET',
                                '/image/v2/images/%s' % fakes.IMAGE.id)
        self.assertEqual(200, response.status_int, response.text)
        image = response.json
        self.assertEqual(
            ('cirros', 'active', 'public', fakes.IMAGE.disk_format, 1024),
            (image['name'], image['status'], image['visibility'],
             image['disk_format'], image['size']))
        self.assertEqual('/v2/images/%s' % fakes.IMAGE.id, image['self'])
        # When the image entered the store; it never changes after.
        stored = self.images.get(fakes.IMAGE.id).created_at
        self.assertIsNotNone(stored)
        self.assertEqual((stored, stored),
                         (image['created_at'], image['updated_at']))

    def test_unknown_image_path_or_method(self):
        for path in ('/image/v2/images/3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c',
                     '/image/v2/images/cirros', '/image/v1/images',
                     '/image/v2/schemas/image',
                     '/image/v2/images/%s/file' % fakes.IMAGE.id):
            with self.subTest(path=path):
                self.assertFault(self.request('GET', path), 404,
                                 'itemNotFound')
        response = self.request('DELETE',
                                '/image/v2/images/%s' % fakes.IMAGE.id)
        self.assertEqual(405, response.status_int)
        self.assertEqual(2, len(self.images.list()))

    def test_needs_authentication(self):
        self.assertFault(self.request('GET', '/image/v2/images', token=None),
                         401, 'unauthorized')
