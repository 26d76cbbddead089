import ipaddress
import random
import re
import threading

from nova import context as nova_context
from nova import exception
from nova.model import network as network_model
from nova.network import api as network_api
from nova import objects
from nova.objects import network as network_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf

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
        # Two generators started alike draw the same MACs: the second
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

    def test_ports_read_earlier_bind_like_fresh_ones(self):
        # The agent marks the port ACTIVE after the operation read it:
        # binding what was read still writes DOWN and the new host.
        self.api.allocate_for_instance(self.ctxt, self.instance, ['public'],
                                       host='compute1')
        read = self.api.get_ports(self.ctxt, self.instance)
        [port] = self._ports()
        port.status = network_obj.ACTIVE
        port.save()
        bound = self.api.bind(self.ctxt, self.instance, 'compute2',
                              ports=read)
        [port] = self._ports()
        self.assertEqual(('compute2', network_obj.DOWN),
                         (port.binding_host, port.status))
        self.assertTrue(bound.all_bound_to('compute2'))
        self.assertEqual([port.uuid],
                         [v.id for v in bound.network_info().inactive()])

    def test_get_ports_reads_the_networks_it_is_not_given(self):
        private = self.api.create_network(self.ctxt, 'private', 'br-priv')
        self.api.allocate_for_instance(self.ctxt, self.instance,
                                       ['public', 'private'])
        read = self.api.get_ports(self.ctxt, self.instance,
                                  networks={self.public.uuid: self.public})
        self.assertIs(self.public, read.networks[self.public.uuid])
        self.assertEqual(private.uuid, read.networks[private.uuid].uuid)
        self.assertEqual({'br-public', 'br-priv'},
                         {v.network.bridge for v in read.network_info()})
        self.assertFalse(read.any_bound_to('compute1'))

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


class TestFixedAddresses(base.TestCase):
    """Fixed IP addresses from a network's cidr, on real port rows."""

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctxt = nova_context.get_admin_context()
        self.api = network_api.API()
        self.public = self.api.create_network(self.ctxt, 'public',
                                              'br-public', '172.24.4.0/24')

    def _instance(self, name='vm'):
        return objects.Instance(self.ctxt, display_name=name).create()

    def _addresses(self, instance):
        return [p.ip_address for p in objects.Port.get_by_instance_uuid(
            self.ctxt, instance.uuid)]

    def test_lowest_free_host_address_after_the_gateway(self):
        first, second = self._instance(), self._instance()
        [vif] = self.api.allocate_for_instance(self.ctxt, first, ['public'])
        self.api.allocate_for_instance(self.ctxt, second, ['public'])
        # .0 is the network, .1 the gateway's.
        self.assertEqual(('172.24.4.2',), vif.ips)
        self.assertEqual(['172.24.4.2'], self._addresses(first))
        self.assertEqual(['172.24.4.3'], self._addresses(second))
        # Every later view of the port carries it.
        [vif] = self.api.get_instance_nw_info(self.ctxt, first)
        self.assertEqual(('172.24.4.2',), vif.ips)
        [vif] = self.api.bind_ports(self.ctxt, first, 'compute1')
        self.assertEqual(('172.24.4.2',), vif.ips)

    def test_deallocation_frees_the_addresses(self):
        first, second = self._instance(), self._instance()
        self.api.allocate_for_instance(self.ctxt, first, ['public'])
        self.api.allocate_for_instance(self.ctxt, second, ['public'])
        self.api.deallocate_for_instance(self.ctxt, first)
        third = self._instance()
        self.api.allocate_for_instance(self.ctxt, third, ['public'])
        self.assertEqual(['172.24.4.2'], self._addresses(third))
        self.assertEqual({'172.24.4.2', '172.24.4.3'},
                         objects.Port.get_ip_addresses(self.ctxt,
                                                       self.public.uuid))

    def test_exhausted_network_refuses_and_keeps_no_port(self):
        # A /29: .1-.6 are host addresses, .1 is the gateway's: 5 ports.
        self.api.create_network(self.ctxt, 'small', 'br-small',
                                '10.9.0.0/29')
        taken = []
        for _ in range(5):
            [vif] = self.api.allocate_for_instance(
                self.ctxt, self._instance(), ['small'])
            taken.extend(vif.ips)
        self.assertEqual(['10.9.0.%d' % i for i in range(2, 7)], taken)
        late = self._instance()
        with self.assertRaises(exception.NoMoreFixedIps) as ctx:
            # The port on 'public' made first is deleted again.
            self.api.allocate_for_instance(self.ctxt, late,
                                           ['public', 'small'])
        self.assertEqual(
            'No more IP addresses available on network small.',
            str(ctx.exception))
        self.assertEqual(409, ctx.exception.code)
        self.assertEqual([], self._addresses(late))
        self.assertEqual(set(), objects.Port.get_ip_addresses(
            self.ctxt, self.public.uuid))

    def test_concurrent_allocations_never_share_an_address(self):
        # Eight requests at once for five addresses: each reads the same
        # free ones, the unique key lets one insert of each address win
        # and the others take the next (or find none left).
        self.api.create_network(self.ctxt, 'small', 'br-small',
                                '10.9.0.0/29')
        instances = [self._instance('vm%d' % i) for i in range(8)]
        barrier = threading.Barrier(len(instances))
        outcomes = {}

        def allocate(instance):
            api = network_api.API()
            barrier.wait()
            try:
                [vif] = api.allocate_for_instance(self.ctxt, instance,
                                                  ['small'])
                outcomes[instance.uuid] = vif.ips[0]
            except exception.NovaException as e:
                outcomes[instance.uuid] = type(e).__name__

        threads = [threading.Thread(target=allocate, args=(i,))
                   for i in instances]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        results = sorted(outcomes.values())
        self.assertEqual(['10.9.0.%d' % i for i in range(2, 7)]
                         + ['NoMoreFixedIps'] * 3, results)
        rows = [self._addresses(i) for i in instances]
        self.assertEqual(sorted(r[0] for r in rows if r),
                         ['10.9.0.%d' % i for i in range(2, 7)])

    def test_allocations_of_one_process_do_not_choose_the_same_address(self):
        # Eight requests at once in one process, on a network with room:
        # each chooses another address, so no INSERT of a port fails and
        # no one reads the free addresses twice.
        instances = [self._instance('vm%d' % i) for i in range(8)]
        barrier = threading.Barrier(len(instances))
        errors = []

        def allocate(instance):
            api = network_api.API()
            barrier.wait()
            try:
                api.allocate_for_instance(self.ctxt, instance, ['public'])
            except Exception as e:
                errors.append(e)

        threads = [threading.Thread(target=allocate, args=(i,))
                   for i in instances]
        with dbf.recorded_statements() as statements:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
        self.assertEqual([], errors)
        self.assertEqual(8, len([s for s in statements
                                 if s.startswith('INSERT INTO ports')]))
        self.assertEqual(8, len([s for s in statements
                                 if 'ports.ip_address IS NOT NULL' in s]))
        self.assertEqual(sorted('172.24.4.%d' % i for i in range(2, 10)),
                         sorted(a for i in instances
                                for a in self._addresses(i)))

    def test_network_without_cidr_gives_no_address(self):
        self.api.create_network(self.ctxt, 'flat', 'br-flat')
        instance = self._instance()
        [vif] = self.api.allocate_for_instance(self.ctxt, instance,
                                               ['flat'])
        self.assertEqual((), vif.ips)
        self.assertEqual([None], self._addresses(instance))

    def test_ipv6_subnet(self):
        self.api.create_network(self.ctxt, 'v6', 'br-v6', '2001:db8::/64')
        [vif] = self.api.allocate_for_instance(self.ctxt, self._instance(),
                                               ['v6'])
        self.assertEqual(('2001:db8::2',), vif.ips)

    def test_cidr_must_be_a_network(self):
        for bad in ('172.24.4.1/24', 'public', '300.1.1.0/24', ''):
            self.assertRaises(exception.InvalidInput,
                              self.api.create_network, self.ctxt, 'x',
                              'br-x', bad)
        self.assertEqual(['public'], [n.name for n in
                                      objects.Network.get_all(self.ctxt)])

    def test_ensure_network_gives_a_legacy_network_its_cidr(self):
        legacy = self.api.create_network(self.ctxt, 'old', 'br-old')
        self.api.ensure_network(self.ctxt, 'old', 'br-old', '10.1.0.0/24')
        self.assertEqual('10.1.0.0/24', objects.Network.get_by_uuid(
            self.ctxt, legacy.uuid).cidr)
        # A network that has one keeps it.
        self.api.ensure_network(self.ctxt, 'public', 'br-public',
                                '10.2.0.0/24')
        self.assertEqual('172.24.4.0/24', objects.Network.get_by_uuid(
            self.ctxt, self.public.uuid).cidr)

    def test_free_address_edges(self):
        self.assertEqual('10.0.0.1', network_api.free_address(
            '10.0.0.0/31', set()))
        self.assertIsNone(network_api.free_address('10.0.0.0/32', set()))
        self.assertIsNone(network_api.free_address('10.0.0.0/30',
                                                   {'10.0.0.2'}))
        self.assertEqual('10.0.0.1', network_api.gateway_address(
            '10.0.0.0/24'))
        # Never the broadcast address.
        taken = {'10.0.0.%d' % i for i in range(2, 255)}
        self.assertIsNone(network_api.free_address('10.0.0.0/24', taken))

    def test_free_address_is_the_lowest_host_after_the_gateway(self):
        # Against the definition, on ipaddress's own hosts(): random
        # subsets of small networks of every shape.
        rand = random.Random(7)
        for cidr in ('10.0.0.0/32', '10.0.0.0/31', '10.0.0.0/30',
                     '10.0.0.0/29', '192.168.1.128/25', '172.24.0.0/22'):
            hosts = [str(a) for a in ipaddress.ip_network(cidr).hosts()]
            for _ in range(50):
                taken = set(rand.sample(hosts, rand.randint(0, len(hosts))))
                expected = next((a for a in hosts[1:] if a not in taken),
                                None)
                self.assertEqual(expected,
                                 network_api.free_address(cidr, taken),
                                 (cidr, sorted(taken)))
        # Addresses of another family among the taken change nothing.
        self.assertEqual('10.0.0.2', network_api.free_address(
            '10.0.0.0/29', {'fd00::2', '10.0.0.1'}))
        self.assertEqual('fd00::2', network_api.free_address(
            'fd00::/64', {'10.0.0.2'}))


class TestPortsByHost(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctxt = nova_context.get_admin_context()
        self.api = network_api.API()
        self.api.create_network(self.ctxt, 'public', 'br-public')
        self.api.create_network(self.ctxt, 'private', 'br-private')

    def test_one_query_across_networks(self):
        instance = objects.Instance(self.ctxt, display_name='vm').create()
        nw_info = self.api.allocate_for_instance(
            self.ctxt, instance, ['public', 'private'], host='compute1')
        self.assertEqual(sorted(v.id for v in nw_info), sorted(
            p.uuid for p in self.api.get_ports_by_host(self.ctxt,
                                                       'compute1')))
        self.api.bind_ports(self.ctxt, instance, 'compute2')
        self.assertEqual([], self.api.get_ports_by_host(self.ctxt,
                                                        'compute1'))
        self.assertEqual(2, len(self.api.get_ports_by_host(self.ctxt,
                                                           'compute2')))
