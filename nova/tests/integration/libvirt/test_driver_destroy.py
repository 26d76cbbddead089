"""destroy, with and without disks, on a real libvirtd + QEMU host.

With disks (delete): nothing of the instance is left but the shared base
image. Without disks (a host that keeps the instance's storage, e.g. a
failed evacuation on shared storage): no domain, no tap, every file as
it was, and a later spawn reuses the disks (doc/source/cleanup.rst,
"Operation by operation", delete and evacuate rows).
"""

import os

from nova.tests.integration.libvirt import driver_base
from nova.virt.libvirt import imagecache


class TestDestroy(driver_base.DriverTestCase):

    def test_destroy_with_disks_leaves_only_the_base_image(self):
        instance, network_info = self.booted()
        self.driver.destroy(self.context, instance, network_info,
                            destroy_disks=True)
        self.assertNothingLeft(self.observe('destroyed', instance,
                                            network_info))
        cache = imagecache.ImageCache(self.host.instances_path)
        self.assertTrue(os.path.isfile(cache.path_for(self.image.id)))

        # Nothing left blocks booting the same instance again.
        self.spawn(instance, network_info)
        self.assertRunningWithTap(
            self.observe('spawned again', instance, network_info),
            network_info)

    def test_destroy_keeping_disks_then_spawn_reuses_them(self):
        instance, network_info, before = self.stopped()
        self.driver.destroy(self.context, instance, network_info,
                            destroy_disks=False)
        after = self.observe('destroyed, disks kept', instance,
                             network_info)
        self.assertIsNone(after.domain)
        self.assertEqual({}, after.taps)
        self.assertEqual(before.files, after.files)

        self.spawn(instance, network_info)
        seen = self.observe('spawned on the kept disks', instance,
                            network_info)
        self.assertRunningWithTap(seen, network_info)
        for name in ('disk', 'disk.info'):
            self.assertEqual(before.files[name], seen.files[name], name)
