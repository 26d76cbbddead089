"""/os-hosts, up to 2.42: the hosts of the enabled services, a compute
host's resources, and the actions libvirt never supports (501)."""

from nova.model import hardware
from nova import objects
from nova.objects import aggregate as aggregate_obj
from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/os-hosts'


class HostsTestCase(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        conductor = self.make_service('ctl', binary='nova-conductor')
        conductor.topic = 'conductor'
        conductor.save()
        aggregate = aggregate_obj.Aggregate.create(
            self.ctx, 'rack1', {'availability_zone': 'az1'})
        aggregate_obj.Aggregate.add_host(self.ctx, aggregate.id, 'host2')

    def hosts(self, query=''):
        response = self.request('GET', PATH + query)
        self.assertEqual(200, response.status_int, response.text)
        return response.json['hosts']

    def test_index_lists_enabled_services_by_zone(self):
        self.assertEqual([
            {'host_name': 'ctl', 'service': 'conductor',
             'zone': 'internal'},
            {'host_name': 'host1', 'service': 'compute', 'zone': 'nova'},
            {'host_name': 'host2', 'service': 'compute', 'zone': 'az1'},
        ], sorted(self.hosts(), key=lambda h: h['host_name']))
        self.assertEqual(['host2'], [h['host_name']
                                     for h in self.hosts('?zone=az1')])
        self.assertEqual(3, len(self.hosts('?zone=')))
        self.assertEqual([], self.hosts('?zone=xxx'))
        self.host1.disabled = True
        self.host1.save()
        self.assertNotIn('host1', [h['host_name'] for h in self.hosts()])

    def test_show_gives_the_reference_rows(self):
        objects.ComputeNode.create_or_update(
            self.ctx, 'host1', _resources())
        self.make_instance(project_id='p1')
        self.make_instance(project_id='p2', name='vm2')
        rows = self.request('GET', PATH + '/host1').json['host']
        self.assertEqual([{'resource'}] * 5, [set(r) for r in rows])
        resources = [r['resource'] for r in rows]
        self.assertEqual([{'host', 'project', 'cpu', 'memory_mb', 'disk_gb'}]
                         * 5, [set(r) for r in resources])
        self.assertEqual(
            [('(total)', 8, 4096, 100), ('(used_now)', 0, 0, 0),
             ('(used_max)', 2, 1024, 2), ('p1', 1, 512, 1),
             ('p2', 1, 512, 1)],
            [(r['project'], r['cpu'], r['memory_mb'], r['disk_gb'])
             for r in resources])
        self.assertEqual({'host1'}, {r['host'] for r in resources})

    def test_unknown_hosts_are_404_and_users_403(self):
        for method, suffix in (('GET', ''), ('GET', '/reboot'),
                               ('GET', '/shutdown'), ('GET', '/startup')):
            with self.subTest(suffix=suffix):
                self.assertFault(self.request(method, PATH + '/nowhere'
                                              + suffix), 404, 'itemNotFound')
                self.assertFault(self.request(method, PATH + '/host1' + suffix,
                                              token=fakes.USER_TOKEN),
                                 403, 'forbidden')
        self.assertFault(self.request('PUT', PATH + '/nowhere',
                                      {'status': 'enable'}),
                         404, 'itemNotFound')
        self.assertFault(self.request('GET', PATH, token=fakes.USER_TOKEN),
                         403, 'forbidden')

    def test_power_and_update_are_not_supported_by_libvirt(self):
        for suffix in ('/reboot', '/shutdown', '/startup'):
            self.assertFault(self.request('GET', PATH + '/host1' + suffix),
                             501, 'notImplemented')
        self.assertFault(self.request('PUT', PATH + '/host1',
                                      {'status': 'disable'}),
                         501, 'notImplemented')
        # Nothing was disabled on the way.
        self.assertFalse(self.reload_service(self.host1).disabled)

    def test_update_bodies_are_checked(self):
        for body in ({}, {'status': None, 'maintenance_mode': None},
                     {'status': 'invalid', 'maintenance_mode': 'enable'},
                     {'status': 'enable', 'maintenance_mode': 'invalid'},
                     {'status': 'enable', 'other': 1}):
            with self.subTest(body=body):
                self.assertFault(self.request('PUT', PATH + '/host1', body),
                                 400, 'badRequest')

    def test_gone_from_243(self):
        for method, suffix in (('GET', ''), ('GET', '/host1'),
                               ('GET', '/host1/reboot')):
            self.assertEqual(404, self.request(method, PATH + suffix,
                                               version='2.43').status_int)

    def reload_service(self, service):
        return objects.Service.get_by_id(self.ctx, service.id)


def _resources():
    return hardware.HostResources(hypervisor_hostname='host1', vcpus=8,
                                  memory_mb=4096, local_gb=100)
