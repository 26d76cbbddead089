"""Every caller but spawn keeps the disks when a start fails (bug 1660647).

power_on (through _hard_reboot), reboot, resume and
resume_state_on_host_boot: after any failure the instance directory and
every disk are byte-for-byte intact, and the next attempt succeeds.
"""

import os

from nova.compute import instance_events
from nova.compute import power_state
from nova import exception
from nova.tests.unit.virt.libvirt import fixtures
from nova.tests.unit.virt.libvirt import test_driver


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
        self.host.virtapi.event_status = instance_events.STATUS_FAILED
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          self.driver.power_on, self.context, instance,
                          network_info)
        self.assertEqual(before, self.disk_files(instance))
        self.host.virtapi.event_status = instance_events.STATUS_COMPLETED
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
