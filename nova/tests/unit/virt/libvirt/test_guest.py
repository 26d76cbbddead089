"""Guest on libvirt's test driver: states, transitions, errors."""

from oslo_utils import uuidutils

from nova.compute import power_state
from nova import exception
from nova.tests import base
from nova.tests.unit.virt.libvirt import fixtures
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
