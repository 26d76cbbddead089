"""Instance disks made with qemu-img, and disk.info."""

import json
import os

from nova import exception
from nova.image import qemu_img
from nova.tests import base
from nova.tests.fixtures import libvirt_host as fixtures
from nova.virt.libvirt import imagebackend
from nova.virt.libvirt import imagecache

MiB = 1024 ** 2


class TestDisks(base.TestCase):

    def setUp(self):
        super().setUp()
        store = fixtures.make_image_store(self.tmp)
        image = fixtures.add_disk_image(store, self.tmp, size_mb=16)
        self.base = imagecache.ImageCache(self.tmp).fetch(store, image)

    def test_qcow2_overlay_is_backed_by_the_base_and_grows(self):
        path = os.path.join(self.tmp, 'disk')
        imagebackend.create_root_disk(path, 'qcow2', self.base, 64 * MiB)
        info = qemu_img.info(path, 'qcow2')
        self.assertEqual((self.base.path, 'qcow2', 64 * MiB),
                         (info.backing_file, info.backing_format,
                          info.virtual_size))

    def test_qcow2_overlay_keeps_image_size_without_flavor_size(self):
        path = os.path.join(self.tmp, 'disk')
        imagebackend.create_root_disk(path, 'qcow2', self.base, None)
        self.assertEqual(16 * MiB, qemu_img.info(path).virtual_size)

    def test_raw_disk_is_an_independent_copy(self):
        path = os.path.join(self.tmp, 'disk')
        imagebackend.create_root_disk(path, 'raw', self.base, 32 * MiB)
        info = qemu_img.info(path, 'raw')
        self.assertEqual(('raw', None, 32 * MiB),
                         (info.format, info.backing_file,
                          info.virtual_size))

    def test_smaller_than_image_is_refused_before_writing(self):
        path = os.path.join(self.tmp, 'disk')
        self.assertRaises(exception.FlavorDiskSmallerThanImage,
                          imagebackend.create_root_disk, path, 'qcow2',
                          self.base, 1 * MiB)
        self.assertFalse(os.path.exists(path))

    def test_blank_disk(self):
        path = os.path.join(self.tmp, 'disk.eph0')
        imagebackend.create_blank_disk(path, 'qcow2', 8 * MiB)
        info = qemu_img.info(path)
        self.assertEqual(('qcow2', 8 * MiB, None),
                         (info.format, info.virtual_size, info.backing_file))

    def test_unknown_format_is_refused(self):
        self.assertRaises(exception.InvalidConfiguration,
                          imagebackend.create_blank_disk,
                          os.path.join(self.tmp, 'x'), 'vmdk', MiB)

    def test_disk_info_round_trip(self):
        path = os.path.join(self.tmp, 'disk.info')
        self.assertEqual({}, imagebackend.read_disk_info(path).formats)
        imagebackend.write_disk_info(path, {'disk': 'qcow2'})
        self.assertEqual(imagebackend.DiskInfo({'disk': 'qcow2'}),
                         imagebackend.read_disk_info(path))
        self.assertEqual(['disk.info'], [n for n in os.listdir(self.tmp)
                                         if n.startswith('disk.info')])

    def test_old_absolute_entries_are_read_by_name(self):
        # Written by an older release, on a host that mounts the shared
        # storage at another path: the names still match.
        idir = os.path.join(self.tmp, 'some-uuid')
        os.makedirs(idir)
        path = os.path.join(idir, 'disk.info')
        with open(path, 'w') as f:
            json.dump({'/mnt/elsewhere/some-uuid/disk': 'raw',
                       '/mnt/elsewhere/some-uuid/disk.eph0': 'qcow2',
                       '/var/lib/other-uuid/disk.swap': 'raw'}, f)
        info = imagebackend.read_disk_info(path)
        self.assertEqual(imagebackend.DiskInfo(
            {'disk': 'raw', 'disk.eph0': 'qcow2'}, legacy=True), info)

    def test_a_disk_with_no_recorded_format_is_never_probed(self):
        info = imagebackend.DiskInfo({'disk': 'raw'})
        disk = os.path.join(self.tmp, 'disk.eph0')
        imagebackend.create_blank_disk(disk, 'qcow2', MiB)
        self.assertRaisesRegex(exception.UnknownDiskFormat,
                               'refusing to guess',
                               imagebackend.existing_format, disk, info)
        self.assertRaisesRegex(
            exception.UnknownDiskFormat, "says 'vmdk'",
            imagebackend.existing_format, disk,
            imagebackend.DiskInfo({'disk.eph0': 'vmdk'}))
        self.assertEqual('raw', imagebackend.existing_format(
            os.path.join(self.tmp, 'disk'), info))

    def test_a_disk_info_that_is_not_names_to_formats_is_corrupt(self):
        path = os.path.join(self.tmp, 'disk.info')
        for bad in ('[]', '{"disk": 1}', '"raw"'):
            with open(path, 'w') as f:
                f.write(bad)
            self.assertRaises(exception.InternalError,
                              imagebackend.read_disk_info, path)

    def test_corrupt_disk_info_is_reported(self):
        path = os.path.join(self.tmp, 'disk.info')
        with open(path, 'w') as f:
            f.write('{not json')
        self.assertRaises(exception.InternalError,
                          imagebackend.read_disk_info, path)
