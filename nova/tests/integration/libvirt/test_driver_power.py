"""Start (power_on) and hard reboot on a real libvirtd + QEMU host.

Both go through ``_hard_reboot`` and ``_create_domain_and_network(...,
destroy_disks_on_failures=False)``: a failed start must leave the
instance directory and every file in it exactly as they were, no guest
running and no tap left; the next start must work
(doc/source/cleanup.rst, "Operation by operation", start and hard reboot
rows). ``test_bug_1660647_...`` is Nova bug 1660647 step by step.
"""

import os

from nova import exception
from nova.model import external_event
from nova.tests.integration.libvirt import driver_base


class TestStart(driver_base.DriverTestCase):

    def assertStartFailsKeepingFiles(self, exc, instance, network_info,
                                     before):
        self.assertRaises(exc, self.driver.power_on, self.context, instance,
                          network_info)
        after = self.observe('after failed start', instance, network_info)
        self.assertStoppedWithFilesIntact(after, before)
        return after

    def assertStartRuns(self, instance, network_info):
        self.driver.power_on(self.context, instance, network_info)
        seen = self.observe('after start', instance, network_info)
        self.assertRunningWithTap(seen, network_info)
        return seen

    def test_bug_1660647_start_with_vif_plugging_failure_keeps_disks(self):
        # Boot with local disks (a kernel image: kernel and ramdisk are
        # copied into the instance directory too), stop.
        # The kernel writes a banner to the serial port: console.log is
        # not empty.
        uec = driver_base.add_bootable_uec_image(self.store, self.tmp)
        bridge = self.own_bridge()
        instance, network_info = self.booted(image=uec, bridge=bridge.name)
        console = self.wait_for_console(instance)
        self.assertEqual(driver_base.GUEST_BANNER, console)
        self.driver.power_off(instance)
        before = self.observe('powered off', instance, network_info)
        for name in ('disk', 'disk.info', 'console.log', 'kernel',
                     'ramdisk'):
            self.assertIn(name, before.files)

        # Start, with VIF plugging failing: the host lost the bridge.
        bridge.remove()
        self.assertStartFailsKeepingFiles(
            exception.VirtualInterfacePlugException, instance, network_info,
            before)

        # Start again once the bridge is back: the guest runs.
        bridge.create()
        seen = self.assertStartRuns(instance, network_info)
        for name in ('disk', 'disk.info', 'kernel', 'ramdisk'):
            self.assertEqual(before.files[name], seen.files[name], name)
        # The new boot appends to the console log; the old one is kept.
        self.assertTrue(self.wait_for_console(instance, banners=2)
                        .startswith(console))

    def test_start_when_the_vif_event_never_arrives(self):
        instance, network_info, before = self.stopped()
        self.virtapi.deliver = False
        self.assertStartFailsKeepingFiles(
            exception.VirtualInterfaceCreateException, instance,
            network_info, before)

        self.virtapi.deliver = True
        self.assertStartRuns(instance, network_info)

    def test_start_when_the_vif_event_failed(self):
        instance, network_info, before = self.stopped()
        self.virtapi.event_status = external_event.STATUS_FAILED
        self.assertStartFailsKeepingFiles(
            exception.VirtualInterfaceCreateException, instance,
            network_info, before)

        self.virtapi.event_status = external_event.STATUS_COMPLETED
        self.assertStartRuns(instance, network_info)

    def test_start_when_qemu_refuses_the_guest(self):
        # The definition is rebuilt from the instance at each start; a
        # flavor the host cannot hold makes QEMU itself exit.
        instance, network_info, before = self.stopped()
        instance.flavor.memory_mb = driver_base.TOO_MUCH_MEMORY_MB
        self.assertStartFailsKeepingFiles(
            exception.NovaException, instance, network_info, before)

        instance.flavor.memory_mb = 64
        self.assertStartRuns(instance, network_info)

    def test_start_with_a_lost_disk_creates_no_blank_one(self):
        instance, network_info, before = self.stopped()
        disk = os.path.join(self.instance_dir(instance), 'disk')
        aside = os.path.join(self.tmp, 'disk-aside')
        os.rename(disk, aside)    # the storage lost it, not the driver

        self.assertRaises(exception.DiskNotFound, self.driver.power_on,
                          self.context, instance, network_info)
        # Found before anything changed: the host is as it was.
        after = self.observe('after failed start', instance, network_info)
        self.assertEqual((before.domain, before.taps),
                         (after.domain, after.taps))
        self.assertFalse(os.path.exists(disk))
        self.assertEqual({n: h for n, h in before.files.items()
                          if n != 'disk'}, after.files)

        os.rename(aside, disk)
        self.assertStartRuns(instance, network_info)


class TestHardReboot(driver_base.DriverTestCase):

    def test_hard_reboot_without_the_bridge_keeps_files(self):
        bridge = self.own_bridge()
        instance, network_info = self.booted(bridge=bridge.name)
        before = self.observe('before reboot', instance, network_info)

        bridge.remove()
        self.assertRaises(exception.VirtualInterfacePlugException,
                          self.driver.reboot, self.context, instance,
                          network_info, 'HARD')
        after = self.observe('after failed reboot', instance, network_info)
        self.assertStoppedWithFilesIntact(after, before)

        bridge.create()
        self.driver.reboot(self.context, instance, network_info, 'HARD')
        self.assertRunningWithTap(
            self.observe('after reboot', instance, network_info),
            network_info)

    def test_hard_reboot_when_the_vif_event_never_arrives(self):
        instance, network_info = self.booted()
        before = self.observe('before reboot', instance, network_info)

        self.virtapi.deliver = False
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          self.driver.reboot, self.context, instance,
                          network_info, 'HARD')
        after = self.observe('after failed reboot', instance, network_info)
        self.assertStoppedWithFilesIntact(after, before)

        self.virtapi.deliver = True
        self.driver.reboot(self.context, instance, network_info, 'HARD')
        seen = self.observe('after reboot', instance, network_info)
        self.assertRunningWithTap(seen, network_info)
        self.assertNotEqual(before.qemu_pid, seen.qemu_pid)
