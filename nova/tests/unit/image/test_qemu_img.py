import os

from nova import exception
from nova.image import qemu_img
from nova.tests import base


class TestQemuImg(base.TestCase):

    def test_create_info_and_resize(self):
        path = os.path.join(self.tmp, 'd.qcow2')
        qemu_img.create(path, 'qcow2', size=1024 ** 2)
        self.assertEqual(('qcow2', 1024 ** 2), (qemu_img.info(path).format,
                                                qemu_img.info(path)
                                                .virtual_size))
        qemu_img.resize(path, 'qcow2', 2 * 1024 ** 2)
        self.assertEqual(2 * 1024 ** 2, qemu_img.info(path).virtual_size)

    def test_failures_are_project_exceptions(self):
        missing = os.path.join(self.tmp, 'missing')
        self.assertRaises(exception.ImageUnacceptable, qemu_img.info,
                          missing)
        self.assertRaises(exception.DiskCreationFailed, qemu_img.create,
                          os.path.join(self.tmp, 'big'), 'qcow2',
                          size=2 ** 62)
