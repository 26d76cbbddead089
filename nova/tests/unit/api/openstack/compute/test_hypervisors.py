"""/os-hypervisors: lists, show, statistics, uptime, search and servers,
by microversion; figures from compute_nodes and the database's usage."""

from nova.compute import hypervisors
from nova.model import hardware
from nova.model import task_states
from nova import objects
from nova.scheduler import target
from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/os-hypervisors'
LISTED = {'id', 'hypervisor_hostname', 'state', 'status'}
DETAIL_288 = LISTED | {'hypervisor_type', 'hypervisor_version', 'host_ip',
                       'service'}
DETAIL = DETAIL_288 | {'vcpus', 'memory_mb', 'local_gb', 'vcpus_used',
                       'memory_mb_used', 'local_gb_used', 'free_ram_mb',
                       'free_disk_gb', 'current_workload', 'running_vms',
                       'disk_available_least', 'cpu_info'}
STATISTICS = {'count', 'vcpus', 'memory_mb', 'local_gb', 'vcpus_used',
              'memory_mb_used', 'local_gb_used', 'free_ram_mb',
              'free_disk_gb', 'current_workload', 'running_vms',
              'disk_available_least'}
UPTIME = ' 10:00:00 up 3 days,  1:02,  1 user,  load average: 0.1, 0.2, 0.3'


class HypervisorsTestCase(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.set_down(self.host2)
        # Stale *_used values: what the API shows is counted now.
        self.node1 = self.record('host1', vcpus=8, memory_mb=16384,
                                 local_gb=200, vcpus_used=7)
        self.node2 = self.record('host2', vcpus=4, memory_mb=8192,
                                 local_gb=100)
        self.vm1 = self.make_instance(name='vm1')
        self.vm2 = self.make_instance(name='vm2',
                                      task_state=task_states.REBOOTING)
        self.compute_rpc.get_host_uptime = self.answer_uptime
        self.uptime_asked = []

    def answer_uptime(self, ctxt, host):
        # The compute host's answer (no compute service runs here).
        self.uptime_asked.append(host)
        return UPTIME

    def record(self, host, **figures):
        return objects.ComputeNode.create_or_update(
            self.ctx, host, hardware.HostResources(
                hypervisor_hostname=host + '.example.org',
                hypervisor_type='QEMU', **figures))

    def get(self, path='', version=None, token=fakes.ADMIN_TOKEN,
            status=200):
        response = self.request('GET', PATH + path, version=version,
                                token=token)
        self.assertEqual(status, response.status_int, response.text)
        return response.json

    def uuid(self, node):
        return hypervisors.node_uuid(node.host, node.hypervisor_hostname)


class ListTest(HypervisorsTestCase):

    def test_list_at_21(self):
        listed = self.get()['hypervisors']
        self.assertEqual([
            {'id': self.node1.id, 'hypervisor_hostname': 'host1.example.org',
             'state': 'up', 'status': 'enabled'},
            {'id': self.node2.id, 'hypervisor_hostname': 'host2.example.org',
             'state': 'down', 'status': 'enabled'}], listed)

    def test_exact_keys_by_microversion(self):
        for version, detail_keys in (('2.1', DETAIL), ('2.28', DETAIL),
                                     ('2.53', DETAIL), ('2.87', DETAIL),
                                     ('2.88', DETAIL_288),
                                     ('2.95', DETAIL_288)):
            with self.subTest(version=version):
                for h in self.get(version=version)['hypervisors']:
                    self.assertEqual(LISTED, set(h))
                for h in self.get('/detail', version=version)['hypervisors']:
                    self.assertEqual(detail_keys, set(h))
                    self.assertEqual({'host', 'id', 'disabled_reason'},
                                     set(h['service']))
                shown = self.get('/%s' % self.get(
                    version=version)['hypervisors'][0]['id'],
                    version=version)['hypervisor']
                self.assertEqual(
                    detail_keys | ({'uptime'} if version >= '2.88'
                                   else set()), set(shown))

    def test_figures_are_the_database_s(self):
        detail = self.get('/detail')['hypervisors'][0]
        flavor = self.flavor
        self.assertEqual(
            {'vcpus': 8, 'memory_mb': 16384, 'local_gb': 200,
             'vcpus_used': 2 * flavor.vcpus,
             'memory_mb_used': 2 * flavor.memory_mb,
             'local_gb_used': 2 * flavor.disk_gb,
             'free_ram_mb': 16384 - 2 * flavor.memory_mb,
             'free_disk_gb': 200 - 2 * flavor.disk_gb,
             'running_vms': 2, 'current_workload': 1,
             'hypervisor_type': 'QEMU', 'cpu_info': '{}',
             'disk_available_least': None},
            {k: detail[k] for k in (
                'vcpus', 'memory_mb', 'local_gb', 'vcpus_used',
                'memory_mb_used', 'local_gb_used', 'free_ram_mb',
                'free_disk_gb', 'running_vms', 'current_workload',
                'hypervisor_type', 'cpu_info', 'disk_available_least')})
        self.assertEqual({'host': 'host1', 'id': self.host1.id,
                          'disabled_reason': None}, detail['service'])
        self.assertEqual({}, self.get('/detail', version='2.28')[
            'hypervisors'][0]['cpu_info'])

    def test_figures_match_what_the_evacuation_chooser_counts(self):
        # An instance on host2 (down) to evacuate: host1 is the candidate.
        source = self.make_instance(host='host2', name='on-host2')
        candidate, = target.TargetChooser().candidates(self.ctx, source)
        self.assertEqual('host1', candidate.host)
        detail = self.get('/detail')['hypervisors'][0]
        self.assertEqual(
            (candidate.capacity.vcpus, candidate.capacity.memory_mb,
             candidate.capacity.local_gb, candidate.used.vcpus,
             candidate.used.memory_mb, candidate.used.disk_gb),
            (detail['vcpus'], detail['memory_mb'], detail['local_gb'],
             detail['vcpus_used'], detail['memory_mb_used'],
             detail['local_gb_used']))

    def test_status_and_state_come_from_the_service(self):
        self.host1.disabled = True
        self.host1.disabled_reason = 'maintenance'
        self.host1.save()
        detail = self.get('/detail')['hypervisors']
        self.assertEqual(('disabled', 'up', 'maintenance'),
                         (detail[0]['status'], detail[0]['state'],
                          detail[0]['service']['disabled_reason']))
        self.assertEqual('down', detail[1]['state'])

    def test_ids_are_uuids_from_253(self):
        listed = self.get(version='2.53')['hypervisors']
        self.assertEqual([self.uuid(self.node1), self.uuid(self.node2)],
                         [h['id'] for h in listed])
        detail = self.get('/detail', version='2.53')['hypervisors']
        self.assertEqual(self.host1.uuid, detail[0]['service']['id'])

    def test_paging_from_233(self):
        page = self.get('?limit=1', version='2.33')
        self.assertEqual([self.node1.id],
                         [h['id'] for h in page['hypervisors']])
        self.assertIn('marker=%d' % self.node1.id,
                      page['hypervisors_links'][0]['href'])
        page = self.get('/detail?limit=1&marker=%d' % self.node1.id,
                        version='2.33')
        self.assertEqual([self.node2.id],
                         [h['id'] for h in page['hypervisors']])
        page = self.get('?marker=%s' % self.uuid(self.node1),
                        version='2.53')
        self.assertEqual([self.uuid(self.node2)],
                         [h['id'] for h in page['hypervisors']])
        self.get('?marker=%s' % self.uuid(self.node1), version='2.33',
                 status=400)
        # Below 2.33 the parameters are not read.
        self.assertEqual(2, len(self.get('?limit=1')['hypervisors']))

    def test_pattern_and_with_servers_from_253(self):
        found = self.get('?hypervisor_hostname_pattern=host2&'
                         'with_servers=true', version='2.53')['hypervisors']
        # host2 has no servers: below 2.75 the key is left out.
        self.assertEqual([self.uuid(self.node2)], [h['id'] for h in found])
        self.assertNotIn('servers', found[0])
        found = self.get('/detail?hypervisor_hostname_pattern=host&'
                         'with_servers=1', version='2.75')['hypervisors']
        self.assertEqual(
            [[{'uuid': self.vm1.uuid, 'name': 'vm1'},
              {'uuid': self.vm2.uuid, 'name': 'vm2'}], []],
            [h['servers'] for h in found])
        self.get('?hypervisor_hostname_pattern=nothere', version='2.53',
                 status=404)

    def test_bad_queries_from_253_are_400(self):
        for query in ('?hypervisor_hostname_pattern=host&limit=1',
                      '?with_servers=maybe', '?unknown=1',
                      '?with_servers=true&with_servers=false',
                      '?marker=%s' % self.uuid(self.node1).replace('-', '')):
            with self.subTest(query=query):
                self.get(query, version='2.53', status=400)
        # Before 2.53 the same parameters are not read.
        self.assertEqual(2, len(self.get('?unknown=1')['hypervisors']))

    def test_admin_only(self):
        for path in ('', '/detail', '/statistics', '/%d' % self.node1.id,
                     '/%d/uptime' % self.node1.id, '/host/search',
                     '/host/servers'):
            with self.subTest(path=path):
                self.get(path, token=fakes.USER_TOKEN, status=403)
        self.assertEqual([], self.uptime_asked)


class ShowTest(HypervisorsTestCase):

    def test_show_by_id_below_253_and_by_uuid_from(self):
        shown = self.get('/%d' % self.node2.id)['hypervisor']
        self.assertEqual('host2.example.org', shown['hypervisor_hostname'])
        shown = self.get('/%s?with_servers=true' % self.uuid(self.node1),
                         version='2.53')['hypervisor']
        self.assertEqual([self.vm1.uuid, self.vm2.uuid],
                         [s['uuid'] for s in shown['servers']])

    def test_unknown_ids(self):
        self.get('/%s' % self.uuid(self.node1), status=404)
        self.get('/999', status=404)
        self.get('/999', version='2.53', status=400)
        self.get('/%s' % self.uuid(self.node1).replace('1', '2', 1)
                 .replace('a', 'b'), version='2.53', status=404)

    def test_show_gives_uptime_from_288(self):
        shown = self.get('/%s' % self.uuid(self.node1),
                         version='2.88')['hypervisor']
        self.assertEqual(UPTIME, shown['uptime'])
        # A host whose service is down is not asked.
        shown = self.get('/%s' % self.uuid(self.node2),
                         version='2.88')['hypervisor']
        self.assertIsNone(shown['uptime'])
        self.assertEqual(['host1'], self.uptime_asked)


class StatisticsTest(HypervisorsTestCase):

    def test_statistics_sum_the_nodes(self):
        stats = self.get('/statistics')['hypervisor_statistics']
        self.assertEqual(STATISTICS, set(stats))
        flavor = self.flavor
        self.assertEqual(
            (2, 12, 24576, 300, 2 * flavor.vcpus, 2 * flavor.memory_mb,
             24576 - 2 * flavor.memory_mb, 2, 1),
            (stats['count'], stats['vcpus'], stats['memory_mb'],
             stats['local_gb'], stats['vcpus_used'],
             stats['memory_mb_used'], stats['free_ram_mb'],
             stats['running_vms'], stats['current_workload']))

    def test_statistics_are_gone_from_288(self):
        self.get('/statistics', version='2.87')
        self.get('/statistics', version='2.88', status=404)


class UptimeTest(HypervisorsTestCase):

    def test_uptime_asks_the_host(self):
        shown = self.get('/%d/uptime' % self.node1.id)['hypervisor']
        self.assertEqual({'id': self.node1.id,
                          'hypervisor_hostname': 'host1.example.org',
                          'state': 'up', 'status': 'enabled',
                          'uptime': UPTIME}, shown)
        self.assertEqual(['host1'], self.uptime_asked)

    def test_uptime_of_a_down_host_is_400_and_unknown_404(self):
        self.get('/%d/uptime' % self.node2.id, status=400)
        self.get('/999/uptime', status=404)
        self.assertEqual([], self.uptime_asked)

    def test_uptime_a_driver_cannot_tell_is_501(self):
        def cannot(ctxt, host):
            raise NotImplementedError()
        self.compute_rpc.get_host_uptime = cannot
        self.get('/%d/uptime' % self.node1.id, status=501)

    def test_uptime_is_gone_from_288(self):
        self.get('/%s/uptime' % self.uuid(self.node1), version='2.88',
                 status=404)


class SearchAndServersTest(HypervisorsTestCase):

    def test_search_below_253(self):
        found = self.get('/host1/search')['hypervisors']
        self.assertEqual([{'id': self.node1.id,
                           'hypervisor_hostname': 'host1.example.org',
                           'state': 'up', 'status': 'enabled'}], found)
        self.get('/nothere/search', status=404)
        self.get('/host1/search', version='2.53', status=404)

    def test_servers_below_253(self):
        found = self.get('/example/servers', version='2.52')['hypervisors']
        self.assertEqual(
            [{'uuid': self.vm1.uuid, 'name': 'vm1'},
             {'uuid': self.vm2.uuid, 'name': 'vm2'}], found[0]['servers'])
        # A node without servers has no servers key.
        self.assertEqual(LISTED, set(found[1]))
        self.get('/nothere/servers', status=404)
        self.get('/host1/servers', version='2.53', status=404)
