from nova import objects
from nova.tests import base
from nova.virt.libvirt import blockinfo


class TestDisksFor(base.TestCase):

    def test_root_only_keeps_the_image_size(self):
        flavor = objects.Flavor(flavorid='1', name='f', memory_mb=64,
                                vcpus=1, root_gb=0)
        self.assertEqual([blockinfo.DiskSpec('disk', 'root', None, 'vda')],
                         blockinfo.disks_for(flavor))

    def test_root_ephemeral_and_swap_in_guest_order(self):
        flavor = objects.Flavor(flavorid='1', name='f', memory_mb=64,
                                vcpus=1, root_gb=2, ephemeral_gb=1, swap=512)
        self.assertEqual(
            [('disk', 'root', 2 * blockinfo.GiB, 'vda'),
             ('disk.eph0', 'ephemeral', 1 * blockinfo.GiB, 'vdb'),
             ('disk.swap', 'swap', 512 * blockinfo.MiB, 'vdc')],
            [(d.name, d.kind, d.size, d.target_dev)
             for d in blockinfo.disks_for(flavor)])
