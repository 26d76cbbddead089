"""nova.testing.cluster.guest: the boot sector the cluster's guests run."""

import os

from nova.testing.cluster import guest as cluster_guest
from nova.tests import base


class TestBootSector(base.TestCase):

    def test_layout(self):
        sector = cluster_guest.boot_sector(b'hello')
        self.assertEqual(512, len(sector))
        self.assertEqual(b'\x55\xaa', sector[-2:])
        # mov si, imm16 (offset 6) points at the message, loaded at 0x7c00.
        self.assertEqual(0xbe, sector[6])
        address = int.from_bytes(sector[7:9], 'little')
        self.assertEqual(b'hello\r\n\0', sector[address - 0x7c00:][:8])

    def test_banner_too_long(self):
        self.assertRaises(ValueError, cluster_guest.boot_sector, b'x' * 500)

    def test_image_is_qcow2_with_the_sector(self):
        path = cluster_guest.write_image(os.path.join(self.tmp, 'b.qcow2'))
        with open(path, 'rb') as f:
            self.assertEqual(b'QFI\xfb', f.read(4))
        with open(path + '.raw', 'rb') as f:
            self.assertEqual(cluster_guest.boot_sector(), f.read(512))
