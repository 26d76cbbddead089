"""Resume, and resume on host boot, on a real libvirtd + QEMU host.

Resume restores a managed save (``vifs_already_plugged=True``); resume on
host boot follows a real host failure (``LibvirtHost.crash()``: QEMU and
the daemons killed) and restart. A failure must keep the instance
directory and its files as they were (and, for resume, the saved memory),
run no guest and leave no tap; the next attempt must work
(doc/source/cleanup.rst, "Operation by operation", resume and resume on
host boot rows).
"""

from nova import exception
from nova.model import external_event
from nova.testing import netdev
from nova.tests.integration.libvirt import driver_base


class TestResume(driver_base.DriverTestCase):

    def suspended(self, bridge=None):
        instance, network_info = self.booted(bridge=bridge)
        self.driver.suspend(self.context, instance)
        seen = self.observe('suspended', instance, network_info)
        self.assertEqual('shut off', seen.domain)
        self.assertTrue(seen.managed_save)
        return instance, network_info, seen

    def test_suspend_then_resume(self):
        instance, network_info, _ = self.suspended()
        self.driver.resume(self.context, instance, network_info)
        seen = self.observe('resumed', instance, network_info)
        self.assertRunningWithTap(seen, network_info)
        self.assertFalse(seen.managed_save)

    def test_resume_without_the_bridge_keeps_files_and_saved_memory(self):
        bridge = self.own_bridge()
        instance, network_info, before = self.suspended(bridge=bridge.name)

        bridge.remove()
        self.assertRaises(exception.VirtualInterfacePlugException,
                          self.driver.resume, self.context, instance,
                          network_info)
        after = self.observe('after failed resume', instance, network_info)
        self.assertStoppedWithFilesIntact(after, before)
        self.assertTrue(after.managed_save)

        bridge.create()
        self.driver.resume(self.context, instance, network_info)
        seen = self.observe('resumed', instance, network_info)
        self.assertRunningWithTap(seen, network_info)
        self.assertFalse(seen.managed_save)


class TestResumeOnHostBoot(driver_base.DriverTestCase):
    """Each test crashes and restarts the class's host."""

    def crashed(self, bridge=None):
        instance, network_info = self.booted(bridge=bridge)
        self.host.crash()
        self.host.restart()
        # A rebooted host has lost its tap devices too.
        for vif in network_info:
            if netdev.link_exists(vif.devname):
                netdev.delete_link(vif.devname)
        seen = self.observe('host rebooted', instance, network_info)
        self.assertEqual('shut off', seen.domain)
        return instance, network_info, seen

    def boot_host(self, instance, network_info):
        self.driver.resume_state_on_host_boot(self.context, instance,
                                              network_info)

    def test_resume_on_host_boot_without_the_bridge_keeps_files(self):
        bridge = self.own_bridge()
        instance, network_info, before = self.crashed(bridge=bridge.name)

        bridge.remove()
        self.assertRaises(exception.VirtualInterfacePlugException,
                          self.boot_host, instance, network_info)
        after = self.observe('after failed host boot', instance,
                             network_info)
        self.assertStoppedWithFilesIntact(after, before)

        bridge.create()
        self.boot_host(instance, network_info)
        seen = self.observe('after host boot', instance, network_info)
        self.assertRunningWithTap(seen, network_info)

        # Once running, booting the host again leaves the guest alone.
        self.boot_host(instance, network_info)
        self.assertEqual(seen.qemu_pid, self.observe(
            'host boot again', instance, network_info).qemu_pid)

    def test_resume_on_host_boot_when_the_vif_event_failed(self):
        instance, network_info, before = self.crashed()

        self.virtapi.event_status = external_event.STATUS_FAILED
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          self.boot_host, instance, network_info)
        after = self.observe('after failed host boot', instance,
                             network_info)
        self.assertStoppedWithFilesIntact(after, before)

        self.virtapi.event_status = external_event.STATUS_COMPLETED
        self.boot_host(instance, network_info)
        self.assertRunningWithTap(
            self.observe('after host boot', instance, network_info),
            network_info)
