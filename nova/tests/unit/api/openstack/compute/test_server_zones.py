"""Servers and availability zones: ``availability_zone`` in POST /servers
places the server only on a host of that zone, and the server shows its
host's zone (``OS-EXT-AZ:availability_zone``)."""

from nova import objects
from nova.objects import aggregate as aggregate_obj
from nova.tests.unit.api.openstack import fakes

ZONE_KEY = 'OS-EXT-AZ:availability_zone'


class ServerZonesTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        # host1 is busier than host2: without a zone, the choice is host2.
        self.make_instance('host1', name='busy')
        self.az1 = aggregate_obj.Aggregate.create(self.ctx, 'rack1',
                                                  {'availability_zone': 'az1'})
        aggregate_obj.Aggregate.add_host(self.ctx, self.az1.id, 'host1')

    def create(self, token=fakes.USER_TOKEN, version=None, **changes):
        server = {'name': 'placed', 'imageRef': fakes.IMAGE.id,
                  'flavorRef': '1'}
        server.update(changes)
        return self.request('POST', '/v2.1/servers', {'server': server},
                            token=token, version=version)

    def created(self, response):
        self.assertEqual(202, response.status_int, response.text)
        return self.reload(objects.Instance(
            self.ctx, uuid=response.json['server']['id']))

    def placed(self):
        return sorted(i.display_name for i in objects.Instance.get_all(
            self.ctx))

    def show(self, instance):
        return self.request('GET', '/v2.1/servers/%s' % instance.uuid,
                            token=fakes.USER_TOKEN).json['server']

    def test_a_build_with_a_zone_lands_only_in_that_zone(self):
        in_az1 = self.created(self.create(availability_zone='az1'))
        self.assertEqual(('host1', 'az1'),
                         (in_az1.host, in_az1.availability_zone))
        in_nova = self.created(self.create(availability_zone='nova'))
        self.assertEqual('host2', in_nova.host)
        anywhere = self.created(self.create())
        self.assertEqual((None, 'host2'),
                         (anywhere.availability_zone, anywhere.host))

    def test_servers_show_their_hosts_zone(self):
        in_az1 = self.created(self.create(availability_zone='az1'))
        anywhere = self.created(self.create())
        self.assertEqual(('az1', 'nova'), (self.show(in_az1)[ZONE_KEY],
                                           self.show(anywhere)[ZONE_KEY]))
        listed = self.request('GET', '/v2.1/servers/detail',
                              token=fakes.USER_TOKEN).json['servers']
        self.assertEqual({'az1', 'nova'}, {s[ZONE_KEY] for s in listed})

    def test_unknown_zones_are_400_and_create_nothing(self):
        before = self.placed()
        for zone in ('nowhere', 'internal', 'a:b:c:d'):
            with self.subTest(zone=zone):
                self.assertFault(self.create(availability_zone=zone), 400,
                                 'badRequest')
        # A zone whose every compute host is disabled takes nothing.
        self.host1.disabled = True
        self.host1.save()
        self.assertFault(self.create(availability_zone='az1'), 400,
                         'badRequest', 'az1')
        self.assertEqual(before, self.placed())
        self.assertEqual([], self.compute_rpc.casts)

    def test_a_full_zone_is_refused_rather_than_left(self):
        self.set_down(self.host1)
        self.assertFault(self.create(availability_zone='az1'), 400,
                         'badRequest')
        self.assertEqual(['busy'], self.placed())

    def test_zone_and_host_are_for_administrators(self):
        self.assertFault(self.create(availability_zone='nova:host2'), 403,
                         'forbidden', 'forced_host')
        on_host = self.created(self.create(
            availability_zone='az1:host1', token=fakes.ADMIN_TOKEN))
        self.assertEqual(('host1', 'az1'),
                         (on_host.host, on_host.availability_zone))
        any_zone = self.created(self.create(
            availability_zone=':host1', token=fakes.ADMIN_TOKEN))
        self.assertEqual(('host1', None),
                         (any_zone.host, any_zone.availability_zone))
        # A host outside the zone named with it is no valid host.
        self.assertFault(self.create(availability_zone='az1:host2',
                                     token=fakes.ADMIN_TOKEN), 400,
                         'badRequest')

    def test_274_host_keeps_to_the_zone_too(self):
        response = self.create(token=fakes.ADMIN_TOKEN, version='2.74',
                               networks='none', host='host2',
                               availability_zone='az1')
        self.assertFault(response, 400, 'badRequest')
        placed = self.created(self.create(
            token=fakes.ADMIN_TOKEN, version='2.74', networks='none',
            host='host1', availability_zone='az1'))
        self.assertEqual('host1', placed.host)
