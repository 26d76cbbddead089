from oslo_utils import uuidutils

from nova import exception
from nova.image import meta
from nova.tests import base


class TestImageMeta(base.TestCase):

    def test_round_trip(self):
        image = meta.ImageMeta(id=uuidutils.generate_uuid(), name='c',
                               disk_format='qcow2',
                               kernel_id=uuidutils.generate_uuid(),
                               os_command_line='root=/dev/vda')
        self.assertEqual(image, meta.ImageMeta.from_dict(image.to_dict()))
        self.assertTrue(image.boots_with_kernel)
        self.assertTrue(image.is_bootable_disk)

    def test_refuses_bad_ids_and_formats(self):
        self.assertRaises(exception.InvalidUUID, meta.ImageMeta, id='x',
                          name='c', disk_format='raw')
        self.assertRaises(exception.ImageUnacceptable, meta.ImageMeta,
                          id=uuidutils.generate_uuid(), name='c',
                          disk_format='vmdk')
        self.assertRaises(exception.InvalidUUID, meta.ImageMeta,
                          id=uuidutils.generate_uuid(), name='c',
                          disk_format='raw', kernel_id='../k')

    def test_kernel_is_not_a_disk(self):
        kernel = meta.ImageMeta(id=uuidutils.generate_uuid(), name='k',
                                disk_format='aki')
        self.assertFalse(kernel.is_bootable_disk)
