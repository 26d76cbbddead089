"""Host: the connection, its events, and the guests it lists."""

import queue
import threading

from oslo_utils import uuidutils

from nova import exception
from nova.tests import base
from nova.tests.unit.virt.libvirt import fixtures
from nova.tests.unit.virt.libvirt import test_guest
from nova.virt import event as virtevent
from nova.virt.libvirt import binding
from nova.virt.libvirt import host as libvirt_host


class TestLifecycleTransition(base.TestCase):

    def test_mapping(self):
        cases = {
            (binding.EVENT_STARTED, 0): virtevent.EVENT_LIFECYCLE_STARTED,
            (binding.EVENT_SUSPENDED, 0): virtevent.EVENT_LIFECYCLE_PAUSED,
            (binding.EVENT_RESUMED, 0): virtevent.EVENT_LIFECYCLE_RESUMED,
            (binding.EVENT_STOPPED, 0): virtevent.EVENT_LIFECYCLE_STOPPED,
            (binding.EVENT_STOPPED, binding.EVENT_STOPPED_SAVED):
                virtevent.EVENT_LIFECYCLE_SUSPENDED,
            (binding.EVENT_PMSUSPENDED, 0):
                virtevent.EVENT_LIFECYCLE_SUSPENDED,
            (binding.EVENT_CRASHED, 0): virtevent.EVENT_LIFECYCLE_STOPPED,
            (binding.EVENT_SHUTDOWN, 0): None,
        }
        for (event, detail), expected in cases.items():
            self.assertEqual(expected, libvirt_host.lifecycle_transition(
                event, detail), (event, detail))


class TestHost(test_guest.GuestTestCase):

    def test_list_find_and_get(self):
        guest = self.define()
        self.assertEqual([guest.uuid],
                         [g.uuid for g in self.host.list_guests()])
        self.assertEqual(guest.uuid, self.host.get_guest(guest.uuid).uuid)
        missing = uuidutils.generate_uuid()
        self.assertIsNone(self.host.find_guest(missing))
        self.assertRaises(exception.InstanceNotFound, self.host.get_guest,
                          missing)

    def test_define_validates_against_the_schema(self):
        xml = test_guest.DOMAIN_XML.format(
            uuid=uuidutils.generate_uuid()).replace('<devices/>',
                                                    '<bogus/><devices/>')
        self.assertRaises(exception.InternalError, self.host.define_guest,
                          xml)
        self.assertEqual([], self.host.list_guests())

    def test_node_info(self):
        node = self.host.get_node_info()
        self.assertEqual(('x86_64', 8192, 4, 'TEST'),
                         (node.arch, node.memory_mb, node.cpus,
                          node.hypervisor_type))

    def test_unreachable_daemon_is_hypervisor_unavailable(self):
        host = libvirt_host.Host(
            'qemu+unix:///system?socket=%s/none.sock' % self.tmp, 'h')
        with self.assertRaises(exception.HypervisorUnavailable) as ctx:
            host.connect()
        self.assertIn('on host: h', str(ctx.exception))

    def test_reconnects_after_the_connection_broke(self):
        first = self.host.get_connection()
        first.close()
        second = self.host.get_connection()
        self.assertIsNot(first, second)
        self.assertTrue(second.isAlive())


class TestEvents(base.TestCase):

    def test_events_reach_the_handler_and_close_stops_dispatching(self):
        events = queue.Queue()
        uri = fixtures.write_node_xml(self.tmp + '/node.xml')
        host = libvirt_host.Host(uri, 'evhost', lifecycle_handler=events.put)
        self.addCleanup(host.close)
        guest = host.define_guest(test_guest.DOMAIN_XML.format(
            uuid=uuidutils.generate_uuid()))
        guest.launch()
        event = events.get(timeout=10)
        self.assertEqual((guest.uuid, virtevent.EVENT_LIFECYCLE_STARTED),
                         (event.uuid, event.transition))
        guest.poweroff()
        self.assertEqual(virtevent.EVENT_LIFECYCLE_STOPPED,
                         events.get(timeout=10).transition)
        host.close()
        self.assertNotIn('libvirt-events-evhost',
                         [t.name for t in threading.enumerate()])
