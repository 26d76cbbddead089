"""The image cache: fetched once under a lock, never half-written."""

import os
import threading

from nova import exception
from nova.tests import base
from nova.tests.unit.virt.libvirt import fixtures
from nova.virt.libvirt import imagecache


class TestImageCache(base.TestCase):

    def setUp(self):
        super().setUp()
        self.store = fixtures.make_image_store(self.tmp)
        self.image = fixtures.add_disk_image(self.store, self.tmp)
        self.instances = os.path.join(self.tmp, 'instances')
        self.cache = imagecache.ImageCache(self.instances)

    def test_fetch_names_the_base_by_the_sha1_of_the_image_id(self):
        cached = self.cache.fetch(self.store, self.image)
        self.assertEqual(os.path.join(self.instances, '_base',
                                      imagecache.image_hash(self.image.id)),
                         cached.path)
        self.assertEqual(('qcow2', 16 * 1024 ** 2),
                         (cached.format, cached.virtual_size))
        self.assertEqual(0o644, os.stat(cached.path).st_mode & 0o777)

    def test_concurrent_fetches_copy_once(self):
        results = []
        threads = [threading.Thread(target=lambda: results.append(
            self.cache.fetch(self.store, self.image))) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(1, len({r.path for r in results}))
        self.assertEqual([imagecache.image_hash(self.image.id)],
                         os.listdir(os.path.join(self.instances, '_base')))

    def test_existing_base_is_not_fetched_again(self):
        cached = self.cache.fetch(self.store, self.image)
        inode = os.stat(cached.path).st_ino
        os.unlink(self.store.data_path(self.image.id))
        self.assertEqual(inode, os.stat(
            self.cache.fetch(self.store, self.image).path).st_ino)

    def test_failed_fetch_leaves_no_file(self):
        with open(self.store.data_path(self.image.id), 'ab') as f:
            f.write(b'tampered')
        self.assertRaises(exception.ImageUnacceptable, self.cache.fetch,
                          self.store, self.image)
        self.assertEqual([], os.listdir(os.path.join(self.instances,
                                                     '_base')))

    def test_image_whose_data_is_not_its_stated_format_is_refused(self):
        # Metadata says raw but the file is a qcow2 (a guest could make
        # the host open another file through a backing file otherwise).
        qcow2 = fixtures.add_disk_image(self.store, self.tmp, name='q')
        lying = self.store.get(qcow2.id).__class__(
            id=qcow2.id, name='q', disk_format='raw')
        self.assertRaises(exception.ImageUnacceptable, self.cache.fetch,
                          self.store, lying)
        self.assertFalse(os.path.exists(self.cache.path_for(qcow2.id)))
