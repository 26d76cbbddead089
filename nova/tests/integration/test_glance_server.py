"""The test Glance (``nova.testing.glance``): a real Glance behind a real
Keystone, reached through the catalog, its data in its file store.

An image is created, its data uploaded, shown and deleted through the
Image API v2 with a token of a Keystone user; the catalog names Glance
as the ``image`` service; the data file is in the store while the image
is there and gone after; a request without a token is refused; and
stopping the server leaves no process. (One test: a Keystone and a
Glance take most of a minute to start here.)
"""

import hashlib
import json
import os
import unittest
import urllib.request

from nova.testing import glance
from nova.testing import keystone
from nova.tests import base

_MISSING = glance.missing_reason()


@unittest.skipIf(_MISSING, 'Glance unavailable: %s' % _MISSING)
class TestGlanceServer(base.TestCase):

    def setUp(self):
        super().setUp()
        self.keystone = keystone.KeystoneServer(
            os.path.join(self.tmp, 'keystone')).start()
        self.addCleanup(self.keystone.stop)
        self.glance = glance.GlanceServer(
            os.path.join(self.tmp, 'glance'), self.keystone).start()
        self.addCleanup(self.glance.stop)
        self.keystone.add_user('demo', 'demo-pass', project='demo',
                               role='member')
        self.token = self.keystone.token('demo', 'demo-pass', 'demo')

    def _catalog_image_url(self):
        request = urllib.request.Request(
            self.keystone.url + '/auth/catalog',
            headers={'X-Auth-Token': self.token})
        with urllib.request.urlopen(request, timeout=30) as resp:
            catalog = json.loads(resp.read())['catalog']
        (image,) = [s for s in catalog if s['type'] == 'image']
        return image['endpoints'][0]['url']

    def test_image_lifecycle(self):
        self.assertEqual(self.glance.url, self._catalog_image_url())
        data = os.urandom(4096)
        path = os.path.join(self.tmp, 'disk.raw')
        with open(path, 'wb') as f:
            f.write(data)

        record = self.glance.upload(self.token, 'tiny', path, 'raw',
                                    visibility='private')

        self.assertEqual('active', record['status'])
        self.assertEqual(len(data), record['size'])
        self.assertEqual(record['os_hash_algo'], 'sha512')
        self.assertEqual(hashlib.sha512(data).hexdigest(),
                         record['os_hash_value'])
        stored = os.path.join(self.glance.store_dir, record['id'])
        with open(stored, 'rb') as f:
            self.assertEqual(data, f.read())
        status, shown = self.glance.request(
            'GET', '/v2/images/%s' % record['id'], self.token)
        self.assertEqual((200, 'tiny'), (status, shown['name']))

        status, _ = self.glance.request(
            'DELETE', '/v2/images/%s' % record['id'], self.token)

        self.assertEqual(204, status)
        self.assertFalse(os.path.exists(stored))
        status, _ = self.glance.request(
            'GET', '/v2/images/%s' % record['id'], self.token)
        self.assertEqual(404, status)
        status, _ = self.glance.request('GET', '/v2/images', token='')
        self.assertEqual(401, status)

        pid = self.glance.pid
        self.glance.stop()
        self.assertFalse(os.path.exists('/proc/%d' % pid))
