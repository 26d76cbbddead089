"""LibvirtDriver.spawn on a real libvirtd + QEMU host.

Every failure is real: a bridge the host does not have, a
network-vif-plugged event that never comes or says failed, QEMU refusing
a guest larger than the host's memory, a disk qemu-img cannot create. A
failed spawn must leave the host as it was (no domain, no tap, no
instance directory; the shared image cache stays), and a retry of the
same instance must then work (doc/source/cleanup.rst, "Operation by
operation", spawn row).
"""

import os

from nova import exception
from nova.model import external_event
from nova.testing import netdev
from nova.tests.integration.libvirt import driver_base
from nova.virt.libvirt import imagecache


class TestSpawn(driver_base.DriverTestCase):

    def assertSpawnFailsLeavingNothing(self, exc, instance, network_info,
                                       image=None):
        before = self.observe('before spawn', instance, network_info)
        self.assertTrue(before.nothing)
        self.assertRaises(exc, self.spawn, instance, network_info, image)
        after = self.observe('after failed spawn', instance, network_info)
        self.assertNothingLeft(after)
        # The image cache is shared by every instance: never cleaned up
        # with one.
        cache = imagecache.ImageCache(self.host.instances_path)
        image = image or self.image
        if os.path.exists(cache.path_for(image.id)):
            self.assertFalse([n for n in os.listdir(cache.base_dir)
                              if '.part' in n])

    def assertRetryRuns(self, instance, network_info, image=None):
        self.spawn(instance, network_info, image)
        seen = self.observe('after retry', instance, network_info)
        self.assertRunningWithTap(seen, network_info)
        return seen

    def test_spawn_boots_a_guest_with_a_tap_on_the_bridge(self):
        instance, network_info = self.booted()
        seen = self.observe('spawned', instance, network_info)
        self.assertEqual({'console.log', 'disk', 'disk.info', 'libvirt.xml',
                          '.nova-owner'}, set(seen.files))
        self.assertIn(network_info[0].devname,
                      netdev.bridge_ports(self.bridge.name))
        self.assertEqual([('network-vif-plugged', network_info[0].id)],
                         [tuple(e) for e in self.virtapi.waited_for])

    def test_spawn_of_a_kernel_image_boots_with_kernel_and_ramdisk(self):
        uec = driver_base.add_bootable_uec_image(self.store, self.tmp)
        instance, network_info = self.booted(image=uec)
        seen = self.observe('spawned', instance, network_info)
        self.assertEqual({'console.log', 'disk', 'disk.info', 'kernel',
                          'ramdisk', 'libvirt.xml', '.nova-owner'},
                         set(seen.files))

    def test_missing_bridge(self):
        instance = self.make_instance()
        missing = netdev.LinuxBridge(netdev.unique_name('nvmiss'))
        network_info = self.make_network_info(bridge=missing.name)
        self.assertSpawnFailsLeavingNothing(
            exception.VirtualInterfacePlugException, instance, network_info)

        self.addCleanup(missing.remove)
        missing.create()
        self.assertRetryRuns(instance, network_info)

    def test_vif_plugged_event_never_arrives(self):
        instance = self.make_instance()
        network_info = self.make_network_info()
        self.virtapi.deliver = False
        self.assertSpawnFailsLeavingNothing(
            exception.VirtualInterfaceCreateException, instance,
            network_info)

        self.virtapi.deliver = True
        self.assertRetryRuns(instance, network_info)

    def test_vif_plugged_event_failed(self):
        instance = self.make_instance()
        network_info = self.make_network_info()
        self.virtapi.event_status = external_event.STATUS_FAILED
        self.assertSpawnFailsLeavingNothing(
            exception.VirtualInterfaceCreateException, instance,
            network_info)

        self.virtapi.event_status = external_event.STATUS_COMPLETED
        self.assertRetryRuns(instance, network_info)

    def test_qemu_refuses_a_guest_larger_than_the_host(self):
        instance = self.make_instance(
            memory_mb=driver_base.TOO_MUCH_MEMORY_MB)
        network_info = self.make_network_info()
        self.assertSpawnFailsLeavingNothing(
            exception.NovaException, instance, network_info)

        # The same instance, given a flavor the host can hold.
        instance.flavor.memory_mb = 64
        self.assertRetryRuns(instance, network_info)

    def test_disk_that_cannot_be_created(self):
        # The root disk is made first, then the ephemeral disk fails:
        # the root disk made by this attempt goes too.
        instance = self.make_instance(ephemeral_gb=driver_base.IMPOSSIBLE_GB)
        network_info = self.make_network_info()
        self.assertSpawnFailsLeavingNothing(
            exception.NovaException, instance, network_info)

        instance.flavor.ephemeral_gb = 1
        seen = self.assertRetryRuns(instance, network_info)
        self.assertIn('disk.eph0', seen.files)
