"""/os-availability-zone and its /detail: exactly the reference's shape."""

from nova import objects
from nova.objects import aggregate as aggregate_obj
from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/os-availability-zone'


class AvailabilityZoneTestCase(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.conductor = self.make_service('ctl', binary='nova-conductor')
        self.make_service('host3')
        aggregate = aggregate_obj.Aggregate.create(
            self.ctx, 'rack1', {'availability_zone': 'az1'})
        aggregate_obj.Aggregate.add_host(self.ctx, aggregate.id, 'host3')

    def zones(self, path=PATH, token=fakes.USER_TOKEN):
        response = self.request('GET', path, token=token)
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual(['availabilityZoneInfo'], list(response.json))
        return response.json['availabilityZoneInfo']

    def test_users_see_the_zones_without_hosts_nor_the_internal_one(self):
        self.assertEqual([
            {'zoneName': 'nova', 'zoneState': {'available': True},
             'hosts': None},
            {'zoneName': 'az1', 'zoneState': {'available': True},
             'hosts': None}], self.zones())

    def test_a_zone_whose_services_are_all_disabled_is_unavailable(self):
        service = objects.Service.get_by_host_and_binary(
            self.ctx, 'host3', 'nova-compute')
        service.disabled = True
        service.save()
        self.assertEqual(
            [('nova', True), ('az1', False)],
            [(z['zoneName'], z['zoneState']['available'])
             for z in self.zones()])
        detail = self.zones(PATH + '/detail', token=fakes.ADMIN_TOKEN)
        self.assertEqual(None, detail[-1]['hosts'])

    def test_detail_shows_each_hosts_services_to_administrators(self):
        self.assertFault(self.request('GET', PATH + '/detail',
                                      token=fakes.USER_TOKEN),
                         403, 'forbidden')
        detail = {z['zoneName']: z for z in self.zones(
            PATH + '/detail', token=fakes.ADMIN_TOKEN)}
        self.assertEqual({'nova', 'az1', 'internal'}, set(detail))
        self.assertEqual({'host1', 'host2'}, set(detail['nova']['hosts']))
        self.assertEqual({'ctl'}, set(detail['internal']['hosts']))
        compute = detail['az1']['hosts']['host3']['nova-compute']
        self.assertEqual({'available', 'active', 'updated_at'}, set(compute))
        self.assertEqual((True, True), (compute['available'],
                                        compute['active']))
        self.assertEqual({'zoneName', 'zoneState', 'hosts'},
                         set(detail['az1']))
