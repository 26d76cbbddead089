"""Port bindings of an evacuation: each operation reads the ports once."""

from nova.compute import port_bindings
from nova import context as nova_context
from nova.network import api as network_api
from nova import objects
from nova.objects import network as network_obj
from nova.tests import base


class CountingAPI(network_api.API):
    """The built-in network API, counting how often the ports are read."""

    def __init__(self):
        super().__init__()
        self.reads = 0

    def get_ports(self, context, instance, networks=None):
        self.reads += 1
        return super().get_ports(context, instance, networks=networks)


class TestPortBindings(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctxt = nova_context.get_admin_context()
        self.api = CountingAPI()
        self.api.create_network(self.ctxt, 'public', 'br-public',
                                '10.0.0.0/24')
        self.instance = objects.Instance(self.ctxt, display_name='vm1',
                                         host='source').create()
        self.instance.network_info = self.api.allocate_for_instance(
            self.ctxt, self.instance, ['public'], host='source')
        self.set_status(network_obj.ACTIVE)
        self.api.reads = 0

    def port(self):
        [port] = objects.Port.get_by_instance_uuid(self.ctxt,
                                                   self.instance.uuid)
        return port

    def set_status(self, status):
        # What the agent of the host the port is bound to does.
        port = self.port()
        port.status = status
        port.save()

    def test_bind_here_moves_the_ports_and_gives_inactive_vifs(self):
        binding = port_bindings.bind_here(self.api, 'target', self.ctxt,
                                          self.instance)
        port = self.port()
        self.assertEqual(('target', network_obj.DOWN),
                         (port.binding_host, port.status))
        self.assertEqual([port.uuid],
                         [v.id for v in binding.network_info.inactive()])
        self.assertEqual(1, self.api.reads)

    def test_a_failed_evacuation_binds_back_what_it_bound_unread(self):
        binding = port_bindings.bind_here(self.api, 'target', self.ctxt,
                                          self.instance)
        self.set_status(network_obj.ACTIVE)     # the target's agent
        port_bindings.rebind_to_owner(self.api, 'target', self.ctxt,
                                      self.instance, binding)
        port = self.port()
        self.assertEqual(('source', network_obj.DOWN),
                         (port.binding_host, port.status))
        self.assertEqual(1, self.api.reads)

    def test_without_a_binding_the_ports_are_read_once(self):
        port_bindings.bind_here(self.api, 'target', self.ctxt,
                                self.instance)
        self.api.reads = 0
        # A restarted target ends the evacuation a crash cut short.
        port_bindings.rebind_to_owner(self.api, 'target', self.ctxt,
                                      self.instance)
        self.assertEqual(('source', network_obj.DOWN),
                         (self.port().binding_host, self.port().status))
        self.assertEqual(1, self.api.reads)

    def test_ports_never_moved_here_stay_where_they_are(self):
        port_bindings.rebind_to_owner(self.api, 'target', self.ctxt,
                                      self.instance)
        self.assertEqual(('source', network_obj.ACTIVE),
                         (self.port().binding_host, self.port().status))

    def test_after_spawn_sees_what_the_agent_reported(self):
        binding = port_bindings.bind_here(self.api, 'target', self.ctxt,
                                          self.instance)
        self.set_status(network_obj.ACTIVE)
        [vif] = port_bindings.after_spawn(self.api, self.ctxt,
                                          self.instance, binding)
        self.assertTrue(vif.active)
        self.assertEqual('br-public', vif.network.bridge)

    def test_after_spawn_without_ports_keeps_the_bound_vifs(self):
        self.api.deallocate_for_instance(self.ctxt, self.instance)
        binding = port_bindings.bind_here(self.api, 'target', self.ctxt,
                                          self.instance)
        [vif] = port_bindings.after_spawn(self.api, self.ctxt,
                                          self.instance, binding)
        self.assertEqual(self.instance.network_info[0].id, vif.id)
        self.assertFalse(vif.active)

    def test_reset_state_binds_the_ports_to_the_owner(self):
        port_bindings.bind_here(self.api, 'target', self.ctxt,
                                self.instance)
        self.api.reads = 0
        port_bindings.bind_to_owner(self.api, self.ctxt, self.instance)
        self.assertEqual(('source', network_obj.DOWN),
                         (self.port().binding_host, self.port().status))
        self.assertEqual(1, self.api.reads)
