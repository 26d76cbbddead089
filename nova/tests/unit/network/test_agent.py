import os
import threading
import time

from nova.compute import instance_events
from nova.conf import host_settings
from nova import context as nova_context
from nova.model import external_event
from nova.network import agent as agent_mod
from nova.network import api as network_api
from nova import objects
from nova.objects import network as network_obj
from nova.tests import base
from nova.virt import fake


class RecordingSender:
    """Stands in for the delivery path (RPC/REST), tested on its own."""

    def __init__(self, fail=0):
        self.sent = []
        self.fail = fail
        self.got = threading.Event()

    def send(self, context, events):
        if self.fail:
            self.fail -= 1
            return False
        self.sent.extend(events)
        self.got.set()
        return True


class RebindingAfterRead(network_api.API):
    """Moves every port it lists to ``to_host`` right after listing it:
    an evacuation binding the ports to its target between the agent's
    read and its write (a race that cannot be timed otherwise)."""

    def __init__(self, to_host):
        super().__init__()
        self.to_host = to_host

    def get_ports_by_host(self, context, host, instance_uuids=None,
                          uuids=None):
        ports = super().get_ports_by_host(
            context, host, instance_uuids=instance_uuids, uuids=uuids)
        for port in ports:
            moved = objects.Port.get_by_uuid(context, port.uuid)
            moved.binding_host = self.to_host
            moved.save()
        return ports


class ChangingBeforeRead(network_api.API):
    """Calls ``change()`` before a full look reads the ports it found out
    of date: something changing them between the look's two reads."""

    def __init__(self, change):
        super().__init__()
        self.change = change

    def get_ports_by_host(self, context, host, instance_uuids=None,
                          uuids=None):
        if uuids is not None:
            self.change()
        return super().get_ports_by_host(
            context, host, instance_uuids=instance_uuids, uuids=uuids)


class CountingObjects(network_api.API):
    """Counts the Port objects the looks build."""

    def __init__(self):
        super().__init__()
        self.built = 0

    def get_ports_by_host(self, context, host, instance_uuids=None,
                          uuids=None):
        ports = super().get_ports_by_host(
            context, host, instance_uuids=instance_uuids, uuids=uuids)
        self.built += len(ports)
        return ports


class RecordingReads(network_api.API):
    """Records which ports each look asked for: None for every port bound
    to the host, else the instances named."""

    def __init__(self):
        super().__init__()
        self.reads = []
        self.read = threading.Event()

    def get_port_states_by_host(self, context, host):
        states = super().get_port_states_by_host(context, host)
        self._record(None)
        return states

    def get_ports_by_host(self, context, host, instance_uuids=None,
                          uuids=None):
        ports = super().get_ports_by_host(
            context, host, instance_uuids=instance_uuids, uuids=uuids)
        if instance_uuids is not None:
            self._record(set(instance_uuids))
        return ports

    def _record(self, what):
        self.reads.append(what)
        self.read.set()


class TestNetworkAgent(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctxt = nova_context.get_admin_context()
        self.settings = host_settings.HostSettings(
            host='compute1', instances_path=os.path.join(self.tmp, 'inst'),
            bridges=('br-public', 'br-private'))
        self.driver = fake.FakeDriver(instance_events.ComputeVirtAPI(),
                                      self.settings)
        self.driver.init_host('compute1')
        self.network_api = network_api.API()
        self.network_api.create_network(self.ctxt, 'public', 'br-public')
        self.instance = objects.Instance(self.ctxt, display_name='vm1',
                                         host='compute1').create()
        self.sender = RecordingSender()

    def _agent(self, bridges=None, sender=None):
        return agent_mod.NetworkAgent(
            self.settings, self.driver, sender or self.sender,
            bridges=bridges, poll_interval=0.05,
            compute_driver='fake.FakeDriver')

    def _allocate(self, host='compute1'):
        return self.network_api.allocate_for_instance(
            self.ctxt, self.instance, ['public'], host=host)

    def _port(self, port_id):
        return objects.Port.get_by_uuid(self.ctxt, port_id)

    def test_plugged_port_becomes_active_and_is_reported(self):
        nw_info = self._allocate()
        agent = self._agent()
        self.assertEqual([], agent.poll_once())      # not plugged yet
        self.driver.plug_vifs(self.instance, nw_info)
        sent = agent.poll_once()
        expected = external_event.InstanceExternalEvent(
            self.instance.uuid, 'network-vif-plugged', nw_info[0].id,
            'completed')
        self.assertEqual([expected], sent)
        self.assertEqual([expected], self.sender.sent)
        self.assertEqual(network_obj.ACTIVE, self._port(nw_info[0].id).status)
        self.assertEqual([], agent.poll_once())      # reported once

    def test_missing_bridge_fails_the_port(self):
        nw_info = self._allocate()
        # The hypervisor side could plug it, but the network side of this
        # host does not offer br-public.
        agent = self._agent(bridges=agent_mod.ConfiguredBridges(
            ['br-private']))
        self.driver.plug_vifs(self.instance, nw_info)
        [event] = agent.poll_once()
        self.assertEqual(('network-vif-plugged', 'failed'),
                         (event.name, event.status))
        self.assertEqual(network_obj.ERROR, self._port(nw_info[0].id).status)

    def test_failed_port_is_judged_again_after_unplug(self):
        nw_info = self._allocate()
        bridges = agent_mod.ConfiguredBridges([])
        agent = self._agent(bridges=bridges)
        self.driver.plug_vifs(self.instance, nw_info)
        agent.poll_once()
        self.driver.unplug_vifs(self.instance, nw_info)
        self.assertEqual([], agent.poll_once())      # silently back to DOWN
        self.assertEqual(network_obj.DOWN, self._port(nw_info[0].id).status)
        # The operator created the bridge; the next plug succeeds.
        agent.bridges = agent_mod.ConfiguredBridges(['br-public'])
        self.driver.plug_vifs(self.instance, nw_info)
        [event] = agent.poll_once()
        self.assertEqual('completed', event.status)

    def test_unplugging_an_active_port_is_reported(self):
        nw_info = self._allocate()
        agent = self._agent()
        self.driver.plug_vifs(self.instance, nw_info)
        agent.poll_once()
        self.driver.unplug_vifs(self.instance, nw_info)
        [event] = agent.poll_once()
        self.assertEqual(('network-vif-unplugged', nw_info[0].id),
                         (event.name, event.tag))
        self.assertEqual(network_obj.DOWN, self._port(nw_info[0].id).status)

    def test_ports_bound_elsewhere_are_not_ours(self):
        nw_info = self._allocate(host='compute2')
        self.driver.plug_vifs(self.instance, nw_info)
        self.assertEqual([], self._agent().poll_once())
        self.assertEqual(network_obj.DOWN, self._port(nw_info[0].id).status)

    def test_a_port_evacuated_away_is_left_to_its_new_host(self):
        nw_info = self._allocate()
        agent = self._agent()
        self.driver.plug_vifs(self.instance, nw_info)
        agent.poll_once()
        # Evacuated to compute2 while this host was down; back up, this
        # host removes its copy of the guest.
        self.network_api.bind_ports(self.ctxt, self.instance, 'compute2')
        self.driver.unplug_vifs(self.instance, nw_info)
        self.assertEqual([], agent.poll_once())
        port = self._port(nw_info[0].id)
        self.assertEqual(('compute2', network_obj.DOWN),
                         (port.binding_host, port.status))

    def test_a_port_rebound_after_the_read_is_not_written(self):
        nw_info = self._allocate()
        self.driver.plug_vifs(self.instance, nw_info)
        agent = agent_mod.NetworkAgent(
            self.settings, self.driver, self.sender,
            network_api_=RebindingAfterRead('compute2'),
            compute_driver='fake.FakeDriver')
        # It read DOWN and plugged here, but the port is compute2's now:
        # no ACTIVE written for compute2's port, no event sent for it.
        self.assertEqual([], agent.poll_once())
        self.assertEqual([], self.sender.sent)
        port = self._port(nw_info[0].id)
        self.assertEqual(('compute2', network_obj.DOWN),
                         (port.binding_host, port.status))

    def test_a_full_look_builds_only_the_ports_out_of_date(self):
        counting = CountingObjects()
        agent = self._agent()
        agent.network_api = counting
        infos = [self._allocate()]
        for n in range(3):
            other = objects.Instance(self.ctxt, display_name='vm%d' % n,
                                     host='compute1').create()
            infos.append(self.network_api.allocate_for_instance(
                self.ctxt, other, ['public'], host='compute1'))
            self.driver.plug_vifs(other, infos[-1])
        self.assertEqual(3, len(agent.poll_once()))
        self.assertEqual(3, counting.built)     # the three plugged
        self.assertEqual([], agent.poll_once())
        self.assertEqual(3, counting.built)     # nothing out of date
        self.driver.plug_vifs(self.instance, infos[0])
        [event] = agent.poll_once()
        self.assertEqual(infos[0][0].id, event.tag)
        self.assertEqual(4, counting.built)
        self.assertEqual(
            [network_obj.ACTIVE] * 4,
            [self._port(info[0].id).status for info in infos])

    def test_a_port_changed_between_the_reads_waits_for_the_next_look(self):
        # ERROR and unplugged when the look reads the statuses: due to go
        # back to DOWN. Before it reads the port itself, the port is
        # ACTIVE and plugged again. Judged by the plug state read before
        # that change, it would go DOWN with a network-vif-unplugged; it
        # must be left alone.
        nw_info = self._allocate()
        port = self._port(nw_info[0].id)
        port.status = network_obj.ERROR
        port.save()

        def replugged():
            again = self._port(nw_info[0].id)
            again.status = network_obj.ACTIVE
            again.save()
            self.driver.plug_vifs(self.instance, nw_info)

        agent = self._agent()
        agent.network_api = ChangingBeforeRead(replugged)
        self.assertEqual([], agent.poll_once())
        self.assertEqual(network_obj.ACTIVE, self._port(nw_info[0].id).status)
        self.assertEqual([], self.sender.sent)

    def test_rebinding_makes_the_new_host_report_again(self):
        nw_info = self._allocate()
        agent = self._agent()
        self.driver.plug_vifs(self.instance, nw_info)
        agent.poll_once()
        # An evacuation binds the port to this host afresh.
        self.network_api.bind_ports(self.ctxt, self.instance, 'compute1')
        [event] = agent.poll_once()
        self.assertEqual('network-vif-plugged', event.name)

    def test_unsent_events_are_retried_then_dropped(self):
        nw_info = self._allocate()
        sender = RecordingSender(fail=1)
        agent = self._agent(sender=sender)
        self.driver.plug_vifs(self.instance, nw_info)
        self.assertEqual([], agent.poll_once())
        [event] = agent.poll_once()
        self.assertEqual(nw_info[0].id, event.tag)

        other = objects.Instance(self.ctxt, display_name='vm2').create()
        nw2 = self.network_api.allocate_for_instance(
            self.ctxt, other, ['public'], host='compute1')
        sender.fail = agent_mod.SEND_ATTEMPTS
        self.driver.plug_vifs(other, nw2)
        for _ in range(agent_mod.SEND_ATTEMPTS):
            agent.poll_once()
        sender.fail = 0
        self.assertEqual([], agent.poll_once())     # given up
        self.assertEqual([nw_info[0].id], [e.tag for e in sender.sent])

    def test_thread_reports_without_being_polled_by_hand(self):
        nw_info = self._allocate()
        agent = self._agent()
        agent.start()
        self.addCleanup(agent.stop, 10)
        self.driver.plug_vifs(self.instance, nw_info)
        self.assertTrue(self.sender.got.wait(10))
        agent.stop(10)
        self.assertEqual(nw_info[0].id, self.sender.sent[0].tag)


class TestBridgeChecker(base.TestCase):

    def _settings(self, **kw):
        return host_settings.HostSettings(host='h', instances_path='/x',
                                          bridges=('br-a',), **kw)

    def test_noop_and_test_uris_use_configured_bridges(self):
        for settings, driver in (
                (self._settings(vif_driver='noop'), 'libvirt.LibvirtDriver'),
                (self._settings(connection_uri='test:///n.xml'),
                 'libvirt.LibvirtDriver'),
                (self._settings(), 'fake.FakeDriver')):
            checker = agent_mod.bridge_checker(settings, driver)
            self.assertIn('br-a', checker)
            self.assertNotIn('br-b', checker)

    def test_linuxbridge_looks_for_bridge_devices(self):
        checker = agent_mod.bridge_checker(
            self._settings(connection_uri='qemu:///system'))
        self.assertIsInstance(checker, agent_mod.LinuxBridges)

    def test_linux_bridges_from_sysfs(self):
        sysfs = os.path.join(self.tmp, 'net')
        os.makedirs(os.path.join(sysfs, 'br0', 'bridge'))
        os.makedirs(os.path.join(sysfs, 'eth0'))
        bridges = agent_mod.LinuxBridges(sysfs)
        self.assertIn('br0', bridges)
        self.assertNotIn('eth0', bridges)      # a device, not a bridge
        self.assertNotIn('../net/br0', bridges)
        self.assertNotIn('', bridges)


class TestAgentIsTold(TestNetworkAgent):
    """The agent looks when the driver plugs, not only when it polls: with
    a poll interval of an hour, the event still leaves."""

    HOUR = 3600

    def started_agent(self, **kwargs):
        agent = agent_mod.NetworkAgent(
            self.settings, self.driver, self.sender,
            poll_interval=self.HOUR, compute_driver='fake.FakeDriver',
            **kwargs)
        agent.start()
        self.addCleanup(agent.stop, 10)
        # The first look, at start, finds nothing to report.
        return agent

    def test_a_plug_wakes_the_agent(self):
        nw_info = self._allocate()
        self.started_agent()
        self.driver.plug_vifs(self.instance, nw_info)
        self.assertTrue(self.sender.got.wait(30), 'no event was sent')
        self.assertEqual([('network-vif-plugged', nw_info[0].id)],
                         [(e.name, e.tag) for e in self.sender.sent])

    def test_an_unplug_wakes_it_too(self):
        nw_info = self._allocate()
        self.started_agent()
        self.driver.plug_vifs(self.instance, nw_info)
        self.assertTrue(self.sender.got.wait(30))
        self.sender.got.clear()
        self.driver.unplug_vifs(self.instance, nw_info)
        self.assertTrue(self.sender.got.wait(30), 'no event was sent')
        self.assertEqual('network-vif-unplugged', self.sender.sent[-1].name)

    def test_a_plug_reads_only_that_instances_ports(self):
        # Another instance's port, plugged without the agent being told
        # (as if the agent had missed it): a told look must not read it,
        # the next full look must. Its port is made after the first look
        # read the ports, so that look cannot have seen it.
        reads = RecordingReads()
        agent = self.started_agent(network_api_=reads)
        self.assertTrue(reads.read.wait(30))
        self.assertEqual([None], reads.reads)       # the first look: all
        other = objects.Instance(self.ctxt, display_name='vm2',
                                 host='compute1').create()
        other_info = self.network_api.allocate_for_instance(
            self.ctxt, other, ['public'], host='compute1')
        listeners = self.driver._vif_listeners
        self.driver._vif_listeners = []
        self.driver.plug_vifs(other, other_info)
        self.driver._vif_listeners = listeners
        nw_info = self._allocate()
        self.driver.plug_vifs(self.instance, nw_info)
        self.assertTrue(self.sender.got.wait(30), 'no event was sent')
        self.assertEqual([None, {self.instance.uuid}], reads.reads)
        self.assertEqual([nw_info[0].id], [e.tag for e in self.sender.sent])
        self.sender.got.clear()
        agent.wake()        # names no instance: every port
        self.assertTrue(self.sender.got.wait(30), 'no event was sent')
        self.assertEqual([nw_info[0].id, other_info[0].id],
                         [e.tag for e in self.sender.sent])
        self.assertIsNone(reads.reads[-1])

    def test_being_told_does_not_put_off_the_full_look(self):
        reads = RecordingReads()
        agent = agent_mod.NetworkAgent(
            self.settings, self.driver, self.sender, poll_interval=0.2,
            compute_driver='fake.FakeDriver', network_api_=reads)
        agent.start()
        self.addCleanup(agent.stop, 10)
        self.assertTrue(reads.read.wait(30))
        # Told again and again, faster than the poll interval: the full
        # look must still come (a look that put it off would never end
        # this loop; the deadline only turns that into a failure).
        deadline = time.monotonic() + 60
        while None not in reads.reads[1:]:
            self.assertLess(time.monotonic(), deadline,
                            'no full look while being told')
            agent.wake(self.instance.uuid)
            reads.read.clear()
            reads.read.wait(1)
        self.assertIn({self.instance.uuid}, reads.reads)

    def test_stop_returns_while_the_agent_waits(self):
        agent = self.started_agent()
        stopped = threading.Thread(target=agent.stop, args=(30,))
        stopped.start()
        stopped.join(30)
        self.assertFalse(stopped.is_alive())
