import random
import re

from nova import context as nova_context
from nova import exception
from nova.network import api as network_api
from nova.network import model as network_model
from nova import objects
from nova.objects import network as network_obj
from nova.tests import base

MAC_RE = re.compile(r'^fa:16:3e(:[0-9a-f]{2}){3}$')


class TestNetworkAPI(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctxt = nova_context.get_admin_context()
        self.api = network_api.API()
        self.public = self.api.create_network(self.ctxt, 'public',
                                              'br-public')
        self.instance = objects.Instance(self.ctxt, display_name='vm1',
                                         host='compute1').create()

    def _ports(self):
        return objects.Port.get_by_instance_uuid(self.ctxt,
                                                 self.instance.uuid)

    def test_allocate_creates_down_ports_and_inactive_vifs(self):
        nw_info = self.api.allocate_for_instance(self.ctxt, self.instance,
                                                 [self.public.uuid])
        self.assertIsInstance(nw_info, network_model.NetworkInfo)
        [vif] = nw_info
        self.assertFalse(vif.active)
        self.assertRegex(vif.address, MAC_RE)
        self.assertEqual(('public', 'br-public', self.public.uuid),
                         (vif.network.label, vif.network.bridge,
                          vif.network.id))
        [port] = self._ports()
        self.assertEqual((vif.id, vif.address, network_obj.DOWN, None),
                         (port.uuid, port.mac_address, port.status,
                          port.binding_host))

    def test_networks_by_name_dict_or_the_only_one(self):
        by_name = self.api.allocate_for_instance(self.ctxt, self.instance,
                                                 ['public'])
        by_dict = self.api.allocate_for_instance(
            self.ctxt, self.instance, [{'uuid': self.public.uuid}])
        auto = self.api.allocate_for_instance(self.ctxt, self.instance)
        none = self.api.allocate_for_instance(self.ctxt, self.instance,
                                              'none')
        self.assertEqual([1, 1, 1, 0],
                         [len(by_name), len(by_dict), len(auto), len(none)])
        self.assertEqual(3, len(self._ports()))

    def test_auto_with_several_networks_is_ambiguous(self):
        self.api.create_network(self.ctxt, 'private', 'br-private')
        self.assertRaises(exception.NetworkAmbiguous,
                          self.api.allocate_for_instance, self.ctxt,
                          self.instance)
        self.assertEqual([], self._ports())

    def test_unknown_network_creates_no_port(self):
        self.assertRaises(exception.NetworkNotFound,
                          self.api.allocate_for_instance, self.ctxt,
                          self.instance, ['public', 'nope'])
        self.assertEqual([], self._ports())

    def test_macs_are_unique_even_when_the_draw_repeats(self):
        # Two generators with the same seed draw the same MACs: the second
        # API must notice the collision in the database and draw again.
        first = network_api.API(rand=random.Random(7))
        second = network_api.API(rand=random.Random(7))
        a = first.allocate_for_instance(self.ctxt, self.instance, ['public'])
        b = second.allocate_for_instance(self.ctxt, self.instance,
                                         ['public'])
        self.assertNotEqual(a[0].address, b[0].address)

    def test_bind_ports_sets_host_and_down(self):
        self.api.allocate_for_instance(self.ctxt, self.instance, ['public'],
                                       host='compute1')
        [port] = self._ports()
        port.status = network_obj.ACTIVE
        port.save()
        nw_info = self.api.bind_ports(self.ctxt, self.instance, 'compute2')
        [port] = self._ports()
        self.assertEqual(('compute2', network_obj.DOWN),
                         (port.binding_host, port.status))
        self.assertEqual([port.uuid], [v.id for v in nw_info.inactive()])

    def test_nw_info_follows_port_status(self):
        self.api.allocate_for_instance(self.ctxt, self.instance, ['public'])
        [port] = self._ports()
        port.status = network_obj.ACTIVE
        port.save()
        [vif] = self.api.get_instance_nw_info(self.ctxt, self.instance)
        self.assertTrue(vif.active)

    def test_deallocate_removes_only_this_instances_ports(self):
        other = objects.Instance(self.ctxt, display_name='vm2').create()
        self.api.allocate_for_instance(self.ctxt, self.instance, ['public'])
        self.api.allocate_for_instance(self.ctxt, other, ['public'])
        self.api.deallocate_for_instance(self.ctxt, self.instance)
        self.api.deallocate_for_instance(self.ctxt, self.instance)
        self.assertEqual([], self._ports())
        self.assertEqual(1, len(objects.Port.get_by_instance_uuid(
            self.ctxt, other.uuid)))

    def test_ensure_network_is_idempotent(self):
        again = self.api.ensure_network(self.ctxt, 'public', 'br-public')
        self.assertEqual(self.public.uuid, again.uuid)
        new = self.api.ensure_network(self.ctxt, 'private', 'br-private')
        self.assertEqual('br-private', self.api.get_network(
            self.ctxt, new.uuid).bridge)

    def test_ports_by_host(self):
        self.api.allocate_for_instance(self.ctxt, self.instance, ['public'],
                                       host='compute1')
        self.assertEqual(1, len(self.api.get_ports_by_host(self.ctxt,
                                                           'compute1')))
        self.assertEqual([], self.api.get_ports_by_host(self.ctxt,
                                                        'compute2'))
