"""The Glance image backend (``nova.image.glance``) against a real Glance
behind a real Keystone (``nova.testing.glance``).

nova-compute's fetch: the image cache downloads an image Glance holds to
a ``.part-`` name, checks it against Glance's record (SHA-512, qcow2, as
Glance says, not as probed) and renames it; a record whose checksum the
data does not match leaves nothing in ``_base``. The proxy API's calls:
properties set, replaced and removed with the user's own token, and a
private image of one project unseen by another's user.
"""

import dataclasses
import hashlib
import os
import shutil
import tempfile
import unittest

from nova.conf import host_settings
from nova import exception
from nova.image import glance
from nova.image import qemu_img
from nova.testing import glance as glance_server
from nova.testing import keystone
from nova.virt.libvirt import imagecache

_MISSING = glance_server.missing_reason()


@unittest.skipIf(_MISSING, 'Glance unavailable: %s' % _MISSING)
class TestGlanceImages(unittest.TestCase):

    # One Keystone and one Glance for the class: each takes most of a
    # minute to start here.
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='nova-glance-')
        cls.keystone = keystone.KeystoneServer(
            os.path.join(cls.tmp, 'keystone')).start()
        try:
            cls.glance = glance_server.GlanceServer(
                os.path.join(cls.tmp, 'glance'), cls.keystone).start()
            cls.keystone.add_user('nova', 'nova-pass', project='service',
                                  role='admin')
            for name in ('demo', 'other'):
                cls.keystone.add_user(name, name + '-pass', project=name,
                                      role='member')
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, 'glance', None) is not None:
            cls.glance.stop()
        cls.keystone.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.work = tempfile.mkdtemp(dir=self.tmp)
        # The catalog says where Glance is: no endpoint is configured.
        self.images = glance.GlanceImages.from_settings(
            host_settings.GlanceSettings(
                auth_type='password', auth_options=(
                    ('auth_url', self.keystone.url), ('username', 'nova'),
                    ('password', 'nova-pass'), ('project_name', 'service'),
                    ('user_domain_name', 'Default'),
                    ('project_domain_name', 'Default'))))
        self.token = self.keystone.token('demo', 'demo-pass', 'demo')

    def _upload_qcow2(self, name):
        path = os.path.join(self.work, name + '.qcow2')
        qemu_img.create(path, 'qcow2', size=1024 ** 2)
        record = self.glance.upload(self.token, name, path, 'qcow2',
                                    visibility='private')
        with open(path, 'rb') as f:
            return record, f.read()

    def test_fetch_verifies_against_glances_record_then_renames(self):
        record, data = self._upload_qcow2('fetched')
        meta = self.images.get(record['id'])
        self.assertEqual(('qcow2', 'sha512', hashlib.sha512(data).hexdigest()),
                         (meta.disk_format, meta.checksum_algo,
                          meta.checksum))
        cache = imagecache.ImageCache(os.path.join(self.work, 'instances'))

        cached = cache.fetch(self.images, meta)

        with open(cached.path, 'rb') as f:
            self.assertEqual(data, f.read())
        self.assertEqual([os.path.basename(cached.path)],
                         os.listdir(cache.base_dir))
        self.assertEqual('qcow2', cached.format)

    def test_data_that_is_not_the_record_leaves_nothing(self):
        record, _ = self._upload_qcow2('tampered')
        meta = dataclasses.replace(self.images.get(record['id']),
                                   checksum='0' * 128)
        cache = imagecache.ImageCache(os.path.join(self.work, 'instances'))

        self.assertRaises(exception.ImageUnacceptable, cache.fetch,
                          self.images, meta)

        self.assertEqual([], os.listdir(cache.base_dir))

    def test_properties_are_changed_with_the_users_token(self):
        record, _ = self._upload_qcow2('props')
        image_id = record['id']

        self.images.set_properties(image_id, self.token,
                                   {'os_distro': 'cirros', 'a': '1'})
        self.images.set_properties(image_id, self.token, {'a': '2'})
        self.assertEqual({'os_distro': 'cirros', 'a': '2'},
                         self.images.record(image_id, self.token).properties)
        self.images.set_properties(image_id, self.token, {'b': '3'},
                                   replace=True)
        self.assertEqual({'b': '3'},
                         self.images.record(image_id, self.token).properties)
        self.images.delete_property(image_id, self.token, 'b')
        self.assertEqual({},
                         self.images.record(image_id, self.token).properties)
        self.assertRaises(exception.ImageMetadataKeyNotFound,
                          self.images.delete_property, image_id, self.token,
                          'b')

    def test_another_projects_user_does_not_see_a_private_image(self):
        record, _ = self._upload_qcow2('private')
        other = self.keystone.token('other', 'other-pass', 'other')

        self.assertRaises(exception.ImageNotFound, self.images.record,
                          record['id'], other)
        self.assertNotIn(record['id'],
                         [r.id for r in self.images.records(other)])
        self.assertIn(record['id'],
                      [r.id for r in self.images.records(self.token)])

        self.images.delete(record['id'], self.token)
        self.assertRaises(exception.ImageNotFound, self.images.get,
                          record['id'])
