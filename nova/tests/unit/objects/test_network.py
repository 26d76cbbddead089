"""Networks and ports."""

from nova import context
from nova import exception
from nova import objects
from nova.objects import network as network_obj
from nova.tests import base

INSTANCE = '00000000-0000-0000-0000-0000000000aa'


class NetworkTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()

    def test_create_get_save(self):
        network = objects.Network(self.ctx, name='private',
                                  bridge='br0').create()
        found = objects.Network.get_by_uuid(self.ctx, network.uuid)
        self.assertEqual(network.to_dict(), found.to_dict())
        found.bridge = 'br1'
        found.save()
        self.assertEqual(['br1'], [n.bridge for n in
                                   objects.Network.get_all(self.ctx)])
        self.assertRaises(exception.NetworkNotFound,
                          objects.Network.get_by_uuid, self.ctx, 'none')
        self.assertRaises(exception.NetworkExists, objects.Network(
            self.ctx, uuid=network.uuid, name='x', bridge='br2').create)


class PortTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()
        self.network = objects.Network(self.ctx, name='private',
                                       bridge='br0').create()

    def _create(self, mac='fa:16:3e:00:00:01', **values):
        return objects.Port(self.ctx, network_uuid=self.network.uuid,
                            mac_address=mac, **values).create()

    def test_create_and_get(self):
        port = self._create(mac='FA:16:3E:00:00:01', instance_uuid=INSTANCE,
                            device_owner='compute:nova')
        found = objects.Port.get_by_uuid(self.ctx, port.uuid)
        self.assertEqual(port.to_dict(), found.to_dict())
        self.assertEqual(('fa:16:3e:00:00:01', network_obj.DOWN, None),
                         (found.mac_address, found.status,
                          found.binding_host))
        self.assertRaises(exception.PortNotFound, objects.Port.get_by_uuid,
                          self.ctx, 'none')

    def test_mac_is_unique(self):
        self._create()
        self.assertRaises(exception.PortExists, self._create)

    def test_unknown_network(self):
        port = objects.Port(self.ctx, network_uuid='none',
                            mac_address='fa:16:3e:00:00:09')
        self.assertRaises(exception.NetworkNotFound, port.create)

    def test_status_must_be_known(self):
        self.assertRaises(ValueError, objects.Port, status='UP')

    def test_bind_with_expected_status(self):
        port = self._create()
        port.binding_host = 'h1'
        port.status = network_obj.BUILD
        port.save(expected_status=network_obj.DOWN)
        stale = objects.Port.get_by_uuid(self.ctx, port.uuid)
        port.status = network_obj.ACTIVE
        port.save(expected_status=network_obj.BUILD)
        stale.status = network_obj.ERROR
        with self.assertRaises(exception.UnexpectedPortStatusError) as ctx:
            stale.save(expected_status=network_obj.BUILD)
        self.assertEqual(network_obj.ACTIVE, ctx.exception.kwargs['actual'])
        found = objects.Port.get_by_uuid(self.ctx, port.uuid)
        self.assertEqual(('h1', network_obj.ACTIVE),
                         (found.binding_host, found.status))

    def test_list_by_instance_and_network(self):
        mine = self._create(instance_uuid=INSTANCE)
        free = self._create(mac='fa:16:3e:00:00:02')
        self.assertEqual([mine.uuid], [p.uuid for p in
                         objects.Port.get_by_instance_uuid(self.ctx,
                                                           INSTANCE)])
        self.assertEqual([mine.uuid, free.uuid], [
            p.uuid for p in objects.Port.get_by_network_uuid(
                self.ctx, self.network.uuid)])

    def test_destroy(self):
        port = self._create()
        port.destroy()
        self.assertRaises(exception.PortNotFound, objects.Port.get_by_uuid,
                          self.ctx, port.uuid)

    def test_binding_host_compare_and_swap(self):
        port = self._create(binding_host='h1')
        stale = objects.Port.get_by_uuid(self.ctx, port.uuid)
        port.binding_host = 'h2'
        port.save()
        # The agent of h1 read the port before it moved to h2.
        stale.status = network_obj.ACTIVE
        with self.assertRaises(exception.UnexpectedPortStatusError) as ctx:
            stale.save(expected_status=network_obj.DOWN,
                       expected_binding_host='h1')
        self.assertEqual('h2', ctx.exception.kwargs['actual_host'])
        found = objects.Port.get_by_uuid(self.ctx, port.uuid)
        self.assertEqual(('h2', network_obj.DOWN),
                         (found.binding_host, found.status))
        found.status = network_obj.ACTIVE
        found.save(expected_status=network_obj.DOWN,
                   expected_binding_host='h2')
        self.assertEqual(network_obj.ACTIVE, objects.Port.get_by_uuid(
            self.ctx, port.uuid).status)

    def test_by_binding_host(self):
        on_h1 = self._create(binding_host='h1')
        self._create(mac='fa:16:3e:00:00:02', binding_host='h2')
        self._create(mac='fa:16:3e:00:00:03')
        self.assertEqual([on_h1.uuid], [
            p.uuid for p in objects.Port.get_by_binding_host(self.ctx,
                                                             'h1')])
        self.assertEqual([], objects.Port.get_by_binding_host(self.ctx,
                                                              'h3'))

    def test_by_binding_host_of_some_instances(self):
        other = '22222222-2222-4222-8222-222222222222'
        mine = self._create(binding_host='h1', instance_uuid=INSTANCE)
        self._create(mac='fa:16:3e:00:00:02', binding_host='h1',
                     instance_uuid=other)
        self._create(mac='fa:16:3e:00:00:03', binding_host='h2',
                     instance_uuid=INSTANCE)
        self._create(mac='fa:16:3e:00:00:04', binding_host='h1')

        def uuids(instance_uuids):
            return [p.uuid for p in objects.Port.get_by_binding_host(
                self.ctx, 'h1', instance_uuids=instance_uuids)]

        self.assertEqual([mine.uuid], uuids({INSTANCE}))
        self.assertEqual(2, len(uuids({INSTANCE, other})))
        self.assertEqual([], uuids(set()))
        self.assertEqual(3, len(uuids(None)))


class FixedAddressTestCase(base.TestCase):
    """networks.cidr and the unique (network, ip_address) of ports."""

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()
        self.network = objects.Network(self.ctx, name='public',
                                       bridge='br-public',
                                       cidr='172.24.4.0/24').create()
        self.other = objects.Network(self.ctx, name='private',
                                     bridge='br-private',
                                     cidr='172.24.4.0/24').create()
        self._macs = 0

    def _create(self, network=None, ip=None):
        self._macs += 1
        return objects.Port(self.ctx,
                            network_uuid=(network or self.network).uuid,
                            mac_address='fa:16:3e:00:01:%02x' % self._macs,
                            ip_address=ip).create()

    def test_cidr_and_address_are_stored(self):
        found = objects.Network.get_by_uuid(self.ctx, self.network.uuid)
        self.assertEqual('172.24.4.0/24', found.cidr)
        port = self._create(ip='172.24.4.2')
        self.assertEqual('172.24.4.2', objects.Port.get_by_uuid(
            self.ctx, port.uuid).ip_address)
        legacy = objects.Network(self.ctx, name='old', bridge='br0').create()
        self.assertIsNone(objects.Network.get_by_uuid(self.ctx,
                                                      legacy.uuid).cidr)

    def test_an_address_is_used_once_per_network(self):
        self._create(ip='172.24.4.2')
        with self.assertRaises(exception.FixedIpAlreadyInUse) as ctx:
            self._create(ip='172.24.4.2')
        self.assertIn('172.24.4.2', str(ctx.exception))
        # The same address on another network, and ports without any.
        self._create(network=self.other, ip='172.24.4.2')
        self._create()
        self._create()
        self.assertEqual({'172.24.4.2'}, objects.Port.get_ip_addresses(
            self.ctx, self.network.uuid))
        self.assertEqual(3, len(objects.Port.get_by_network_uuid(
            self.ctx, self.network.uuid)))

    def test_a_mac_collision_is_not_an_address_collision(self):
        port = self._create(ip='172.24.4.2')
        twin = objects.Port(self.ctx, network_uuid=self.network.uuid,
                            mac_address=port.mac_address,
                            ip_address='172.24.4.3')
        self.assertRaises(exception.PortExists, twin.create)

    def test_destroy_frees_the_address(self):
        port = self._create(ip='172.24.4.2')
        port.destroy()
        self.assertEqual(set(), objects.Port.get_ip_addresses(
            self.ctx, self.network.uuid))
        self._create(ip='172.24.4.2')
