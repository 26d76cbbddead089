"""The image cache: fetched once under a lock, never half-written."""

import dataclasses
import hashlib
import os
import threading
import time

from unittest import mock

from oslo_concurrency import lockutils
from oslo_utils import uuidutils

from nova import exception
from nova.image import qemu_img
from nova.tests import base
from nova.tests.fixtures import libvirt_host as fixtures
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

    def test_a_fetch_reads_the_image_with_qemu_img_once(self):
        # The format check's qemu-img info describes the new base file:
        # a host's first spawn of an image forks one qemu-img, not two.
        spy = mock.patch.object(qemu_img, 'info', wraps=qemu_img.info)
        info = spy.start()
        self.addCleanup(spy.stop)
        cached = self.cache.fetch(self.store, self.image)
        self.assertEqual(1, info.call_count)
        self.assertEqual(('qcow2', 16 * 1024 ** 2),
                         (cached.format, cached.virtual_size))
        # Fetched again: described already, no qemu-img at all.
        self.assertEqual(cached, self.cache.fetch(self.store, self.image))
        self.assertEqual(1, info.call_count)
        # A new cache (a restarted service) finds the base file there and
        # reads it once, as the format its metadata states.
        again = imagecache.ImageCache(self.instances).fetch(self.store,
                                                            self.image)
        self.assertEqual(cached, again)
        self.assertEqual(2, info.call_count)
        self.assertEqual(mock.call(cached.path, expected_format='qcow2'),
                         info.call_args)

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

    def _with_digest(self, algo, data_path):
        with open(data_path, 'rb') as f:
            digest = hashlib.new(algo, f.read()).hexdigest()
        return dataclasses.replace(self.image, checksum=digest,
                                   checksum_algo=algo)

    def test_checksum_is_verified_with_the_records_algorithm(self):
        # Glance's records say SHA-512 (os_hash_algo), the local store's
        # SHA-256: the cache checks with the one the metadata names.
        meta = self._with_digest('sha512',
                                 self.store.data_path(self.image.id))
        cached = self.cache.fetch(self.store, meta)
        self.assertTrue(os.path.isfile(cached.path))

    def test_checksum_of_another_algorithm_is_refused_before_rename(self):
        meta = self._with_digest('sha512',
                                 self.store.data_path(self.image.id))
        meta = dataclasses.replace(meta, checksum_algo='sha384')
        self.assertRaises(exception.ImageUnacceptable, self.cache.fetch,
                          self.store, meta)
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

    def age(self, path, seconds=3600):
        when = time.time() - seconds
        os.utime(path, (when, when))

    def test_every_fetch_makes_the_base_young(self):
        cached = self.cache.fetch(self.store, self.image)
        self.age(cached.path)
        self.cache.fetch(self.store, self.image)
        self.assertGreater(os.stat(cached.path).st_mtime, time.time() - 60)

    def test_entries_name_bases_and_leftovers_only(self):
        cached = self.cache.fetch(self.store, self.image)
        hash_ = imagecache.image_hash(self.image.id)
        part = '%s.part-%s' % (cached.path, uuidutils.generate_uuid())
        for name in (part, os.path.join(self.cache.base_dir, 'img')):
            with open(name, 'w') as f:
                f.write('x')
        os.symlink(cached.path, os.path.join(self.cache.base_dir, 'a' * 40))
        found, other = self.cache.entries()
        self.assertEqual([(hash_, cached.path, False), (hash_, part, True)],
                         [(e.image_hash, e.path, e.part) for e in found])
        self.assertEqual(sorted(os.path.join(self.cache.base_dir, n)
                                for n in ('a' * 40, 'img')), other)

    def test_remove_if_older_reads_the_age_under_the_lock(self):
        cached = self.cache.fetch(self.store, self.image)
        name = os.path.basename(cached.path)
        self.assertEqual(False, self.cache.remove_if_older(
            name, time.time() - 60)[0])
        self.age(cached.path)
        self.assertEqual(True, self.cache.remove_if_older(
            name, time.time() - 60, dry_run=True)[0])
        self.assertTrue(os.path.exists(cached.path))
        with lockutils.lock(imagecache.lock_name(name), external=True,
                            lock_path=self.cache.lock_path):
            removed, why = self.cache.remove_if_older(name,
                                                      time.time() - 60)
        self.assertEqual((False, 'a fetch of the image holds its lock'),
                         (removed, why))
        self.assertTrue(self.cache.remove_if_older(name,
                                                   time.time() - 60)[0])
        self.assertFalse(os.path.exists(cached.path))
        self.assertEqual((False, 'not a file the image cache names'),
                         self.cache.remove_if_older('img', time.time()))
        # Fetched again, not described from memory.
        self.assertTrue(os.path.exists(
            self.cache.fetch(self.store, self.image).path))
