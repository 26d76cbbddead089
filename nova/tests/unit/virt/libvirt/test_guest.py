"""Guest on libvirt's test driver: states, transitions, errors."""

import hashlib
from unittest import mock

from oslo_utils import uuidutils

from nova import exception
from nova.model import power_state
from nova.tests import base
from nova.tests.fixtures import libvirt_host as fixtures
from nova.virt.libvirt import binding
from nova.virt.libvirt import guest as guest_mod
from nova.virt.libvirt import host as libvirt_host

DOMAIN_XML = """<domain type='qemu'>
  <name>instance-{uuid}</name>
  <uuid>{uuid}</uuid>
  <memory unit='KiB'>65536</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>
  <devices/>
</domain>
"""


class GuestTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        uri = fixtures.write_node_xml(self.tmp + '/node.xml')
        self.host = libvirt_host.Host(uri, 'test-host')
        self.addCleanup(self.host.close)

    def define(self):
        uuid = uuidutils.generate_uuid()
        return self.host.define_guest(DOMAIN_XML.format(uuid=uuid))


class TestGuest(GuestTestCase):

    def test_defined_guest_is_shut_down(self):
        guest = self.define()
        self.assertFalse(guest.is_active())
        self.assertEqual(power_state.SHUTDOWN, guest.get_power_state())
        self.assertEqual((2, 64), guest.get_resources())
        self.assertIn(guest.uuid, guest.get_xml())

    def test_launch_paused_then_resume(self):
        # The test driver has no VIR_DOMAIN_START_PAUSED: the fallback
        # (start, then pause at once) runs here.
        guest = self.define()
        guest.launch(pause=True)
        self.assertEqual(power_state.PAUSED, guest.get_power_state())
        guest.resume()
        self.assertEqual(power_state.RUNNING, guest.get_power_state())

    def test_resume_of_a_guest_that_is_not_paused_fails(self):
        guest = self.define()
        guest.launch()
        self.assertRaises(exception.InstanceResumeFailure, guest.resume)

    def test_shutdown_and_poweroff(self):
        guest = self.define()
        guest.launch()
        guest.shutdown()
        self.assertTrue(guest.wait_for_power_state({power_state.SHUTDOWN},
                                                   5))
        guest.launch()
        guest.poweroff()
        guest.poweroff()  # already off is fine
        self.assertFalse(guest.is_active())

    def test_managed_save_reports_suspended_and_undefine_drops_it(self):
        guest = self.define()
        guest.launch()
        guest.managed_save()
        self.assertTrue(guest.has_managed_save())
        self.assertEqual(power_state.SUSPENDED, guest.get_power_state())
        guest.undefine()
        self.assertIsNone(self.host.find_guest(guest.uuid))

    def test_launch_restores_the_managed_save(self):
        guest = self.define()
        guest.launch()
        guest.managed_save()
        guest.launch()
        self.assertFalse(guest.has_managed_save())
        self.assertEqual(power_state.RUNNING, guest.get_power_state())

    def test_missing_domain_is_instance_not_found(self):
        guest = self.define()
        guest.undefine()
        for call in (guest.is_active, guest.get_power_state, guest.launch,
                     guest.poweroff, guest.undefine, guest.get_xml):
            self.assertRaises(exception.InstanceNotFound, call)

    def test_start_failure_is_power_on_failure(self):
        guest = self.define()
        guest.launch()
        self.assertRaises(exception.InstancePowerOnFailure, guest.launch)


def libvirt_error(code, domain, message):
    """A libvirtError as libvirt raises it (code, domain, message)."""
    error = binding.Error(message)
    error.err = (code, domain, message, 2, None, None, None, -1, -1)
    return error


# What libvirt 9.0 and QEMU 7.2 report (nova/tests/integration/libvirt/
# test_disk_leases.py provokes both on real daemons).
LOCKD_BUSY = ("resource busy: Lockspace resource '/srv/i/%s/disk' is "
              "locked")
QEMU_LOCKED = (
    'internal error: process exited while connecting to monitor: '
    '2026-01-01T00:00:00.000000Z qemu-system-x86_64: -blockdev '
    '{"node-name":"libvirt-1-format","read-only":false,"driver":"qcow2",'
    '"file":"libvirt-1-storage","backing":null}: Failed to get "write" '
    'lock\nIs another process using the image [/srv/i/%s/disk]?')


class TestLeaseRefusal(base.TestCase):
    """A start refused because a disk is in use elsewhere: one typed
    error, naming the disk, whichever guard refused it."""

    def test_lockd_refusal(self):
        refusal = guest_mod.lease_refusal(libvirt_error(
            binding.ERR_RESOURCE_BUSY, binding.FROM_LOCKSPACE,
            LOCKD_BUSY % 'u1'))
        self.assertIsInstance(refusal, exception.DiskLeaseHeld)
        self.assertEqual(409, refusal.code)
        self.assertEqual('/srv/i/u1/disk', refusal.disk)
        self.assertFalse(refusal.holder_known)
        self.assertTrue(refusal.format_message().startswith(
            'disk in use by another host: fence the host that runs it '
            'first (libvirt refused to start the guest: /srv/i/u1/disk is '
            'locked'), refusal.format_message())
        self.assertIn('lease', refusal.format_message())

    def test_qemu_image_lock_refusal(self):
        refusal = guest_mod.lease_refusal(libvirt_error(
            binding.ERR_INTERNAL_ERROR, binding.FROM_QEMU,
            QEMU_LOCKED % 'u2'))
        self.assertEqual('/srv/i/u2/disk', refusal.disk)
        self.assertIn('another QEMU has it open', refusal.format_message())

    def test_a_lease_in_a_lockspace_directory_is_named_by_its_disk(self):
        disk = '/srv/i/u3/disk'
        digest = hashlib.sha256(disk.encode()).hexdigest()
        refusal = guest_mod.lease_refusal(libvirt_error(
            binding.ERR_RESOURCE_BUSY, binding.FROM_LOCKSPACE,
            "resource busy: Lockspace resource '%s' is locked" % digest),
            disks=['/srv/i/u3/disk.eph0', disk])
        self.assertEqual(disk, refusal.disk)

    def test_other_errors_are_not_refusals(self):
        for error in (libvirt_error(binding.ERR_INTERNAL_ERROR,
                                    binding.FROM_QEMU, 'qemu died'),
                      libvirt_error(binding.ERR_OPERATION_INVALID,
                                    binding.FROM_QEMU,
                                    'domain is already running'),
                      ValueError('not libvirt')):
            self.assertIsNone(guest_mod.lease_refusal(error))

    def test_naming_the_holder(self):
        refusal = guest_mod.lease_refusal(libvirt_error(
            binding.ERR_RESOURCE_BUSY, binding.FROM_LOCKSPACE,
            LOCKD_BUSY % 'u4'))
        named = refusal.naming('compute1')
        self.assertTrue(named.holder_known)
        self.assertTrue(named.format_message().startswith(
            'disk in use by another host: fence compute1 first'))
        local = exception.DiskLeaseHeld(disk='/d', local_domain='other',
                                        reason='r')
        self.assertTrue(local.format_message().startswith(
            'disk in use by domain other on this host: stop it first'))


class TestLaunchRefused(GuestTestCase):
    """Guest.launch and Guest.resume raise the refusal (leases are taken
    when the vCPUs start: a guest started paused is refused by resume)."""

    def test_launch_and_resume(self):
        guest = self.define()
        busy = libvirt_error(binding.ERR_RESOURCE_BUSY,
                             binding.FROM_LOCKSPACE, LOCKD_BUSY % 'u5')
        with mock.patch.object(guest._domain, 'create', side_effect=busy):
            with self.assertRaises(exception.DiskLeaseHeld) as caught:
                guest.launch()
        self.assertEqual('/srv/i/u5/disk', caught.exception.disk)
        guest.launch(pause=True)
        with mock.patch.object(guest._domain, 'resume', side_effect=busy):
            self.assertRaises(exception.DiskLeaseHeld, guest.resume)
