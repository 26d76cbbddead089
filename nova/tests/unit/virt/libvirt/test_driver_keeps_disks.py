"""Every caller but spawn keeps the disks when a start fails (bug 1660647).

power_on (through _hard_reboot), reboot, resume and
resume_state_on_host_boot: after any failure the instance directory and
every disk are byte-for-byte intact, and the next attempt succeeds.
"""

import os
from unittest import mock

from oslo_utils import uuidutils

from nova import exception
from nova.model import external_event
from nova.model import power_state
from nova.tests.fixtures import libvirt_host as fixtures
from nova.tests.unit.virt.libvirt import test_driver
from nova.virt.libvirt import guest as libvirt_guest


class TestBug1660647(test_driver.LibvirtTestCase):
    """Nova bug 1660647, its exact steps, on a cirros-*-uec style image."""

    def test_boot_stop_start_with_plug_failure_then_start_again(self):
        # Boot an instance using local disks.
        uec = fixtures.add_uec_image(self.store, self.tmp)
        instance = self.make_instance(image=uec)
        network_info = self.spawn(instance, image=uec)
        # Stop the instance.
        self.driver.power_off(instance)
        idir = self.host.instance_dir(instance.uuid)
        before = self.disk_files(instance)
        self.assertEqual({'console.log', 'disk', 'disk.info', 'kernel',
                          'ramdisk', 'libvirt.xml', '.nova-owner'},
                         set(before))
        # Start the instance, causing a failure during plug_vifs: the host
        # lost the port's bridge.
        self.host.remove_bridge()
        self.assertRaises(exception.VirtualInterfacePlugException,
                          self.driver.power_on, self.context, instance,
                          network_info)
        # The local instance files are left on the host, unchanged.
        self.assertTrue(os.path.isdir(idir))
        self.assertEqual(before, self.disk_files(instance))
        self.assertFalse(self.host.is_running(instance.uuid))
        self.assertEqual(frozenset(), self.host.plugged_vifs())
        # Attempt to start the instance again: it works.
        self.host.add_bridge()
        self.driver.power_on(self.context, instance, network_info)
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual(before, self.disk_files(instance))

    def test_start_with_failed_vif_event_keeps_files(self):
        instance = self.make_instance()
        network_info = fixtures.make_network_info(active=False)
        self.spawn(instance, network_info)
        self.driver.power_off(instance)
        before = self.disk_files(instance)
        self.host.virtapi.event_status = external_event.STATUS_FAILED
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          self.driver.power_on, self.context, instance,
                          network_info)
        self.assertEqual(before, self.disk_files(instance))
        self.host.virtapi.event_status = external_event.STATUS_COMPLETED
        self.driver.power_on(self.context, instance, network_info)
        self.assertTrue(self.host.is_running(instance.uuid))

    def test_start_with_vif_event_timeout_keeps_files(self):
        host = self.make_host('slow', vif_plugging_timeout=0.01)
        instance = self.make_instance()
        network_info = fixtures.make_network_info(active=False)
        self.spawn(instance, network_info, host=host)
        host.driver.power_off(instance)
        before = self.disk_files(instance, host)
        host.virtapi.deliver = False
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          host.driver.power_on, self.context, instance,
                          network_info)
        self.assertEqual(before, self.disk_files(instance, host))
        host.virtapi.deliver = True
        host.driver.power_on(self.context, instance, network_info)
        self.assertTrue(host.is_running(instance.uuid))


class TestOtherCallersKeepDisks(test_driver.LibvirtTestCase):
    """Every caller of ``_create_domain_and_network`` but spawn keeps the
    disks when the start fails (Nova bug 1660647): power on (above), hard
    reboot, resume, resume on host boot; spawn's failures remove what its
    attempt made (``test_driver.TestSpawnFailureLeavesHostAsBefore``).
    """

    def fail_then_succeed(self, operation, instance, network_info):
        before = self.disk_files(instance)
        self.host.remove_bridge()
        self.assertRaises(exception.VirtualInterfacePlugException,
                          operation, self.context, instance, network_info)
        self.assertEqual(before, self.disk_files(instance))
        self.assertFalse(self.host.is_running(instance.uuid))
        self.assertEqual(frozenset(), self.host.plugged_vifs())
        self.host.add_bridge()
        operation(self.context, instance, network_info)
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual(before, self.disk_files(instance))

    def test_hard_reboot(self):
        instance, network_info = self.booted()

        def hard_reboot(ctx, inst, net):
            self.driver.reboot(ctx, inst, net, 'HARD')
        self.fail_then_succeed(hard_reboot, instance, network_info)

    def test_resume_keeps_the_saved_guest(self):
        instance, network_info = self.booted()
        self.driver.suspend(self.context, instance)
        self.fail_then_succeed(self.driver.resume, instance, network_info)

    def test_failed_resume_keeps_the_suspended_definition(self):
        instance, network_info = self.booted()
        self.driver.suspend(self.context, instance)
        self.host.remove_bridge()
        self.assertRaises(exception.VirtualInterfacePlugException,
                          self.driver.resume, self.context, instance,
                          network_info)
        self.assertEqual(power_state.SUSPENDED,
                         self.host.power_state(instance.uuid))

    def test_resume_of_a_guest_whose_definition_is_gone(self):
        instance, network_info = self.booted()
        self.driver.destroy(self.context, instance, network_info,
                            destroy_disks=False)
        self.driver.resume(self.context, instance, network_info)
        self.assertTrue(self.host.is_running(instance.uuid))

    def test_resume_state_on_host_boot(self):
        instance, network_info = self.booted()
        self.driver.power_off(instance)
        self.fail_then_succeed(self.driver.resume_state_on_host_boot,
                               instance, network_info)

    def test_resume_state_on_host_boot_leaves_running_guest(self):
        instance, network_info = self.booted()
        self.host.remove_bridge()  # it would fail if it tried anything
        self.driver.resume_state_on_host_boot(self.context, instance,
                                              network_info)
        self.assertTrue(self.host.is_running(instance.uuid))

    def test_resume_state_on_host_boot_after_libvirt_lost_the_domain(self):
        instance, network_info = self.booted()
        self.driver.destroy(self.context, instance, network_info,
                            destroy_disks=False)
        self.driver.resume_state_on_host_boot(self.context, instance,
                                              network_info)
        self.assertTrue(self.host.is_running(instance.uuid))

    def test_power_on_with_a_missing_disk_changes_nothing(self):
        instance, network_info = self.booted()
        self.driver.power_off(instance)
        os.unlink(os.path.join(self.host.instance_dir(instance.uuid),
                               'disk'))
        before = test_driver.host_state(self.host)
        self.assertRaises(exception.DiskNotFound, self.driver.power_on,
                          self.context, instance, network_info)
        self.assertLeftAsBefore(before)
        self.assertEqual(power_state.SHUTDOWN,
                         self.host.power_state(instance.uuid))

    def test_power_on_fetches_a_base_image_the_cache_lost(self):
        instance, network_info = self.booted()
        self.driver.power_off(instance)
        base = self.driver.image_cache.path_for(self.image.id)
        os.unlink(base)
        self.driver.power_on(self.context, instance, network_info)
        self.assertTrue(os.path.exists(base))
        self.assertTrue(self.host.is_running(instance.uuid))


class TestRebootAndPower(test_driver.LibvirtTestCase):

    def test_soft_reboot_keeps_running_and_vifs(self):
        instance, network_info = self.booted()
        self.driver.reboot(self.context, instance, network_info, 'SOFT')
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual({network_info[0].id}, self.host.plugged_vifs())

    def test_soft_reboot_of_a_stopped_guest_reboots_hard(self):
        instance, network_info = self.booted()
        self.driver.power_off(instance)
        self.driver.reboot(self.context, instance, network_info, 'SOFT')
        self.assertTrue(self.host.is_running(instance.uuid))

    def test_power_off_clean_and_forced(self):
        instance, network_info = self.booted()
        self.driver.power_off(instance, timeout=1, retry_interval=1)
        self.assertEqual(power_state.SHUTDOWN,
                         self.host.power_state(instance.uuid))
        self.driver.power_on(self.context, instance, network_info)
        self.driver.power_off(instance, timeout=0)
        self.assertEqual(power_state.SHUTDOWN,
                         self.host.power_state(instance.uuid))
        # Stopping a stopped guest is fine.
        self.driver.power_off(instance)

    def test_suspend_of_a_stopped_guest_is_refused(self):
        instance, _ = self.booted()
        self.driver.power_off(instance)
        self.assertRaises(exception.InstanceSuspendFailure,
                          self.driver.suspend, self.context, instance)

    def test_power_operations_on_unknown_instance(self):
        instance = self.make_instance()
        self.assertRaises(exception.InstanceNotFound, self.driver.power_off,
                          instance)
        self.assertRaises(exception.InstanceNotFound, self.driver.suspend,
                          self.context, instance)
        self.assertRaises(exception.DiskNotFound, self.driver.power_on,
                          self.context, instance,
                          fixtures.make_network_info())


def _held(disk):
    return exception.DiskLeaseHeld(disk=disk, reason='its lease is held')


class TestDiskInUseElsewhere(test_driver.LibvirtTestCase):
    """libvirt refuses the start because a disk is in use elsewhere (its
    lease, or QEMU's own lock): the typed error goes on, and nothing of
    the disks is touched, for start, hard reboot and a spawn that reuses
    the disks on shared storage (an evacuation)."""

    def refuse_launch(self, instance, host=None):
        disk = os.path.join((host or self.host).instance_dir(instance.uuid),
                            'disk')
        return mock.patch.object(libvirt_guest.Guest, 'launch',
                                 side_effect=_held(disk))

    def test_start_and_hard_reboot_keep_every_file(self):
        instance, network_info = self.booted()
        self.driver.power_off(instance)
        before = self.disk_files(instance)
        operations = (
            lambda: self.driver.power_on(self.context, instance,
                                         network_info),
            lambda: self.driver.reboot(self.context, instance,
                                       network_info, 'HARD'))
        for operation in operations:
            with self.refuse_launch(instance):
                with self.assertRaises(exception.DiskLeaseHeld) as caught:
                    operation()
            self.assertFalse(caught.exception.holder_known)
            self.assertEqual(before, self.disk_files(instance))
            self.assertFalse(self.host.is_running(instance.uuid))
            self.assertEqual(frozenset(), self.host.plugged_vifs())
        # Once the disk is free, the start works.
        self.driver.power_on(self.context, instance, network_info)
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual(before, self.disk_files(instance))

    def test_spawn_on_shared_storage_keeps_the_disks_it_found(self):
        instance, network_info, other = self._left_on_shared_storage()
        before = self.disk_files(instance)
        with self.refuse_launch(instance, other):
            self.assertRaises(exception.DiskLeaseHeld, other.driver.spawn,
                              self.context, instance, None,
                              network_info=network_info)
        self.assertEqual(before, self.disk_files(instance, other))
        self.assertEqual(set(), other.domain_uuids())
        self.assertEqual(frozenset(), other.plugged_vifs())

    def _left_on_shared_storage(self):
        instance, network_info = self.booted()
        self.driver.destroy(self.context, instance, network_info,
                            destroy_disks=False)
        other = self.make_host(
            'compute2', instances_path=self.host.settings.instances_path)
        return instance, network_info, other

    def test_a_domain_of_this_host_on_the_disk_is_named(self):
        instance, network_info = self.booted()
        self.driver.power_off(instance)
        disk = os.path.join(self.host.instance_dir(instance.uuid), 'disk')
        intruder = self.driver.host.define_guest(INTRUDER_XML.format(
            uuid=uuidutils.generate_uuid(), disk=disk))
        intruder.launch()
        with self.refuse_launch(instance):
            with self.assertRaises(exception.DiskLeaseHeld) as caught:
                self.driver.power_on(self.context, instance, network_info)
        self.assertEqual(intruder.name, caught.exception.local_domain)
        self.assertTrue(caught.exception.format_message().startswith(
            'disk in use by domain intruder on this host: stop it first'))
        # A domain that does not run holds nothing.
        intruder.poweroff()
        with self.refuse_launch(instance):
            with self.assertRaises(exception.DiskLeaseHeld) as caught:
                self.driver.power_on(self.context, instance, network_info)
        self.assertIsNone(caught.exception.local_domain)


INTRUDER_XML = """<domain type='qemu'>
  <name>intruder</name>
  <uuid>{uuid}</uuid>
  <memory unit='KiB'>65536</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>
  <devices>
    <disk type='file' device='disk'>
      <source file='{disk}'/><target dev='vda' bus='virtio'/>
    </disk>
  </devices>
</domain>
"""
