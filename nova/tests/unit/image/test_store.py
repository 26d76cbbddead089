"""The local image store: files plus metadata JSON."""

import datetime
import json
import os

from oslo_concurrency import processutils
from oslo_utils import uuidutils

from nova import exception
from nova.image import store as image_store
from nova.tests import base


class TestImageStore(base.TestCase):

    def setUp(self):
        super().setUp()
        self.store = image_store.ImageStore(os.path.join(self.tmp, 'images'))

    def source(self, fmt='qcow2', name='src'):
        path = os.path.join(self.tmp, name)
        processutils.execute('qemu-img', 'create', '-f', fmt, path, '1M')
        return path

    def test_add_detects_format_and_writes_metadata(self):
        image = self.store.add_from_file(self.source(), name='cirros')
        self.assertEqual('qcow2', image.disk_format)
        self.assertEqual(image, self.store.get(image.id))
        with open(os.path.join(self.store.path, image.id + '.json')) as f:
            self.assertEqual('cirros', json.load(f)['name'])
        self.assertEqual(os.path.getsize(self.store.data_path(image.id)),
                         image.size)
        self.assertEqual(64, len(image.checksum))
        self.assertEqual([image], self.store.list())
        self.assertEqual([image.id + '.img', image.id + '.json'],
                         sorted(os.listdir(self.store.path)))

    def test_the_time_an_image_was_added(self):
        before = datetime.datetime.now(datetime.timezone.utc).replace(
            microsecond=0)
        image = self.store.add_from_file(self.source(), name='cirros')
        with open(os.path.join(self.store.path, image.id + '.json')) as f:
            recorded = json.load(f)['created_at']
        self.assertEqual(image.created_at, recorded)
        added = datetime.datetime.strptime(
            recorded, '%Y-%m-%dT%H:%M:%SZ').replace(
                tzinfo=datetime.timezone.utc)
        self.assertLessEqual(before, added)
        # An image recorded before the store kept the time: its metadata
        # file's, which is written once, when the image is added.
        meta_path = os.path.join(self.store.path, image.id + '.json')
        with open(meta_path) as f:
            values = json.load(f)
        del values['created_at']
        with open(meta_path, 'w') as f:
            json.dump(values, f)
        os.utime(meta_path, (1700000000, 1700000000))
        self.assertEqual('2023-11-14T22:13:20Z',
                         self.store.get(image.id).created_at)

    def test_stated_format_must_match_the_data(self):
        self.assertRaises(exception.ImageUnacceptable,
                          self.store.add_from_file, self.source('raw'),
                          name='x', disk_format='qcow2')
        self.assertEqual([], self.store.list())

    def test_uec_image_with_kernel_and_ramdisk(self):
        kernel_file = os.path.join(self.tmp, 'vmlinuz')
        with open(kernel_file, 'wb') as f:
            f.write(b'kernel')
        kernel = self.store.add_from_file(kernel_file, 'k', 'aki')
        ramdisk = self.store.add_from_file(kernel_file, 'r', 'ari')
        image = self.store.add_from_file(self.source('raw'), 'uec', 'raw',
                                         kernel_id=kernel.id,
                                         ramdisk_id=ramdisk.id)
        self.assertEqual((kernel.id, ramdisk.id),
                         (self.store.get(image.id).kernel_id,
                          self.store.get(image.id).ramdisk_id))
        # A kernel id must name a kernel.
        self.assertRaises(exception.ImageUnacceptable,
                          self.store.add_from_file, self.source('raw', 'b'),
                          'bad', 'raw', kernel_id=ramdisk.id)

    def test_find_by_id_or_unique_name(self):
        first = self.store.add_from_file(self.source(), name='cirros')
        self.assertEqual(first, self.store.find('cirros'))
        self.assertEqual(first, self.store.find(first.id))
        self.store.add_from_file(self.source(name='s2'), name='cirros')
        self.assertRaises(exception.ImageNotFound, self.store.find, 'cirros')

    def test_ids_that_are_not_uuids_never_become_paths(self):
        for bad in ('../../etc/passwd', 'x', '', uuidutils.generate_uuid()
                    .replace('-', '')):
            self.assertRaises(exception.ImageNotFound, self.store.get, bad)
            self.assertRaises(exception.ImageNotFound, self.store.data_path,
                              bad)

    def test_delete(self):
        image = self.store.add_from_file(self.source(), name='cirros')
        self.store.delete(image.id)
        self.assertRaises(exception.ImageNotFound, self.store.get, image.id)
        self.assertEqual([], os.listdir(self.store.path))
        self.assertRaises(exception.ImageNotFound, self.store.delete,
                          image.id)

    def test_copy_data_never_overwrites(self):
        image = self.store.add_from_file(self.source(), name='cirros')
        dest = os.path.join(self.tmp, 'copy')
        self.store.copy_data(image.id, dest)
        self.assertRaises(FileExistsError, self.store.copy_data, image.id,
                          dest)
