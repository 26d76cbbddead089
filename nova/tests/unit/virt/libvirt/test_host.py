"""Host: the connection, its events, and the guests it lists."""

import gc
import os
import queue
import socket
import threading
import weakref

from oslo_utils import uuidutils

from nova import exception
from nova.model import power_state
from nova.tests import base
from nova.tests.fixtures import libvirt_host as fixtures
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

    def test_power_states_of_every_domain_at_once(self):
        running, paused, saved, off = (self.define() for _ in range(4))
        for guest in (running, saved):
            guest.launch()
        paused.launch(pause=True)
        saved.managed_save()
        self.assertEqual({running.uuid: power_state.RUNNING,
                          paused.uuid: power_state.PAUSED,
                          saved.uuid: power_state.SUSPENDED,
                          off.uuid: power_state.SHUTDOWN},
                         self.host.power_states())
        # The same as asking each guest.
        for guest in (running, paused, saved, off):
            self.assertEqual(self.host.power_states()[guest.uuid],
                             guest.get_power_state())

    def test_define_refuses_what_libvirt_cannot_parse(self):
        # The schema itself is checked on the golden files
        # (test_golden_schema), not at each define.
        xml = test_guest.DOMAIN_XML.format(
            uuid=uuidutils.generate_uuid()).replace('<devices/>',
                                                    '<devices>')
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


class TestConnectionRelease(base.TestCase):

    def test_close_releases_the_connection_and_the_host(self):
        # A callback libvirt still holds keeps the connection (and, through
        # it, the Host) alive after close: nothing may be left registered.
        uri = fixtures.write_node_xml(self.tmp + '/node.xml')
        host = libvirt_host.Host(uri, 'relhost',
                                 lifecycle_handler=lambda event: None)
        host.connect()
        conn_ref = weakref.ref(host.get_connection())
        host_ref = weakref.ref(host)
        host.close()
        del host
        gc.collect()
        self.assertIsNone(conn_ref())
        self.assertIsNone(host_ref())

    def test_is_available_says_no_without_raising(self):
        host = libvirt_host.Host(
            'qemu+unix:///system?socket=%s/none.sock' % self.tmp, 'h')
        self.addCleanup(host.close)
        self.assertFalse(host.is_available())
        self.assertRaises(exception.HypervisorUnavailable, host.list_guests)

    def test_is_available_on_a_live_connection(self):
        uri = fixtures.write_node_xml(self.tmp + '/node.xml')
        host = libvirt_host.Host(uri, 'h')
        self.addCleanup(host.close)
        self.assertTrue(host.is_available())
        conn = host.get_connection()
        self.assertTrue(host.is_available())
        self.assertIs(conn, host.get_connection())


class TestUnansweringDaemon(base.TestCase):
    """A socket that accepts connections but never answers: a hung
    libvirtd. Real: libvirt's client really waits on it."""

    def setUp(self):
        super().setUp()
        path = os.path.join(self.tmp, 'hung.sock')
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(self.listener.close)
        self.listener.bind(path)
        self.listener.listen(8)
        self.host = libvirt_host.Host('qemu+unix:///system?socket=' + path,
                                      'hunghost', open_timeout=0.1)
        # Runs before the listener closes: the abandoned open then fails
        # and its thread ends.
        self.addCleanup(self.host.close)

    def _opening_threads(self):
        return [t for t in threading.enumerate()
                if t.name == 'libvirt-open-hunghost']

    def test_open_gives_up_and_waits_for_the_same_attempt_again(self):
        self.assertRaises(exception.HypervisorUnavailable, self.host.connect)
        self.assertFalse(self.host.is_available())
        self.assertRaises(exception.HypervisorUnavailable,
                          self.host.list_guests)
        # Three calls, one attempt: no thread per call piling up.
        self.assertEqual(1, len(self._opening_threads()))
