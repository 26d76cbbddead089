"""Port bindings through an evacuation, with the real network agents.

The evacuation harness (``evacuate_harness``), but without its stand-in
network backend: every host runs the real ``NetworkAgent`` on its real
libvirt driver, ports and fixed addresses are real rows made by the real
network API, and the ``network-vif-plugged`` events a spawn waits for come
only from the agent of the host its ports are bound to, through the
compute API's external events path, as in ``nova-all``.

So an evacuation can only succeed when the ports are bound to the target
before it spawns; afterwards they must stay bound there (the source's
agent, when it comes back, must not take them), and after a failed one
they must be bound to the source again.
"""

import threading

from nova.compute import instance_events
from nova.network import agent as agent_mod
from nova.network import api as network_api
from nova.network import events as network_events
from nova import objects
from nova.objects import network as network_obj
from nova.tests.functional import evacuate_harness as harness

CIDR = '172.24.4.0/24'


class RecordingSender:
    """The agents' delivery path: the test's compute API, as nova-all's
    ``ComputeAPIEventSender``; keeps (host, event) of what was sent."""

    def __init__(self, test, host):
        self.test = test
        self.host = host

    def send(self, context, events):
        api = getattr(self.test, 'api', None)
        if api is None:
            return False        # setUp not done yet: try next round
        sent = network_events.ComputeAPIEventSender(api).send(context,
                                                              events)
        if sent:
            with self.test.sent_lock:
                self.test.sent.extend((self.host, e) for e in events)
        return sent


class NetworkEvacuateTestCase(harness.EvacuateTestCase):

    # Bridges the network agent of a host offers, when not its settings'.
    AGENT_BRIDGES = {}

    def setUp(self):
        self.agents = {}
        self.sent = []
        self.sent_lock = threading.Lock()
        super().setUp()
        self.network_api = network_api.API()
        self.network = self.network_api.create_network(
            self.ctx, 'public', harness.BRIDGE, CIDR)

    def start_compute(self, name, domains=(), running=True, **settings):
        # The real VirtAPI: events come from the agents, nothing else.
        host = super().start_compute(
            name, domains=domains, running=running,
            virtapi=instance_events.ComputeVirtAPI(), **settings)
        agent = agent_mod.NetworkAgent(
            host.sim.settings, host.driver, RecordingSender(self, name),
            bridges=self.AGENT_BRIDGES.get(name), poll_interval=0.05,
            compute_driver='libvirt.LibvirtDriver')
        agent.start()
        self.addCleanup(agent.stop)
        self.agents[name] = agent
        return host

    def kill(self, name):
        # The agent runs beside the compute service and dies with it.
        self.agents.pop(name).stop()
        return super().kill(name)

    def boot_with_port(self, host='a'):
        """Built on ``host`` with a real port on 'public', reported by
        that host's agent."""
        def allocate(ctx, instance):
            network_info = self.network_api.allocate_for_instance(
                ctx, instance, ['public'], host=host)
            instance.network_info = network_info
            instance.save()
            return network_info
        return self.boot(host, network_info_for=allocate)

    def port(self, instance):
        [port] = objects.Port.get_by_instance_uuid(self.ctx, instance.uuid)
        return port

    def plugged_events_from(self, host, port):
        with self.sent_lock:
            return [e.status for h, e in self.sent
                    if h == host and e.tag == port.uuid
                    and e.name == agent_mod.VIF_PLUGGED]


class TestPortsFollowTheEvacuation(NetworkEvacuateTestCase):

    def test_bound_to_the_target_before_spawn_and_kept_there(self):
        instance = self.boot_with_port('a')
        port = self.port(instance)
        self.assertEqual(('a', network_obj.ACTIVE, '172.24.4.2'),
                         (port.binding_host, port.status, port.ip_address))
        self.kill('a')

        migration = self.evacuate(instance, host='c')

        # Only c's agent could have sent the event c's spawn waited for:
        # it reports only ports bound to c.
        self.assertLandedOn('c', instance, migration)
        self.assertEqual(['completed'], self.plugged_events_from('c', port))
        port = self.port(instance)
        self.assertEqual(('c', network_obj.ACTIVE, '172.24.4.2'),
                         (port.binding_host, port.status, port.ip_address))
        [vif] = self.fresh(instance).network_info
        self.assertEqual((port.uuid, True, ('172.24.4.2',)),
                         (vif.id, vif.active, vif.ips))

        # The source comes back and removes its copy of the guest (VIF
        # unplugged there). Its agent leaves the port alone: it is c's.
        a = self.restart('a')
        self.assertNoTrace(a, instance)
        self.assertEqual([], self.agents['a'].poll_once())
        self.assertEqual([], self.agents['c'].poll_once())
        port = self.port(instance)
        self.assertEqual(('c', network_obj.ACTIVE),
                         (port.binding_host, port.status))


class TestPortsBackToTheSourceAfterAFailure(NetworkEvacuateTestCase):

    # b's hypervisor side has the bridge, its network side does not: b's
    # agent answers the plug with a failed network-vif-plugged event.
    AGENT_BRIDGES = {'b': ()}

    def test_failed_event_on_the_target_then_retry_elsewhere(self):
        instance = self.boot_with_port('a')
        self.kill('a')

        migration = self.evacuate(instance, host='b')

        self.assertFailedOnSource(instance, migration)
        self.assertNoTrace(self.hosts['b'], instance)
        port = self.port(instance)
        # b's agent judged it (bound to b then) and said so...
        self.assertEqual(['failed'], self.plugged_events_from('b', port))
        # ... and the failed evacuation gave it back to the source, DOWN
        # so that a's agent reports it again once a plugs it. Its
        # address stays with it.
        self.assertEqual(('a', network_obj.DOWN, '172.24.4.2'),
                         (port.binding_host, port.status, port.ip_address))
        self.assertEqual([], self.agents['b'].poll_once())

        migration = self.evacuate(instance, host='c')

        self.assertLandedOn('c', instance, migration)
        port = self.port(instance)
        self.assertEqual(('c', network_obj.ACTIVE),
                         (port.binding_host, port.status))

    def test_plug_error_on_the_target(self):
        instance = self.boot_with_port('a')
        self.kill('a')
        # c lacks the bridge altogether: plugging fails in the driver.
        self.hosts['c'].sim.remove_bridge(harness.BRIDGE)

        migration = self.evacuate(instance, host='c')

        self.assertFailedOnSource(instance, migration)
        self.assertNoTrace(self.hosts['c'], instance)
        self.assertEqual([], self.plugged_events_from('c',
                                                      self.port(instance)))
        port = self.port(instance)
        self.assertEqual(('a', network_obj.DOWN),
                         (port.binding_host, port.status))
