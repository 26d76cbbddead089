"""/os-simple-tenant-usage: usage from the instance rows over a period,
deleted servers included for the time they lived; paging from 2.40."""

import datetime

from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/os-simple-tenant-usage'
TOTALS = {'tenant_id', 'start', 'stop', 'total_hours', 'total_vcpus_usage',
          'total_memory_mb_usage', 'total_local_gb_usage'}
SERVER = {'instance_id', 'name', 'tenant_id', 'flavor', 'vcpus',
          'memory_mb', 'local_gb', 'hours', 'state', 'uptime', 'started_at',
          'ended_at'}
T0 = datetime.datetime(2024, 5, 1, 0, 0, 0)
PERIOD = '?start=2024-05-01T00:00:00&end=2024-05-02T00:00:00'


def at(hours):
    return T0 + datetime.timedelta(hours=hours)


class SimpleTenantUsageTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        # demo: one server up all period long, one deleted after 6 h;
        # other: one launched 12 h in; never launched: counts nothing.
        self.whole = self.make_instance(name='whole', launched_at=at(-24))
        self.deleted = self.make_instance(name='gone', launched_at=at(2))
        self.deleted.destroy()
        self.deleted.terminated_at = at(8)
        self.deleted.save()
        self.other = self.make_instance(name='other', project_id='other',
                                        launched_at=at(12))
        self.make_instance(name='building', launched_at=None)

    def get(self, path, token=fakes.ADMIN_TOKEN, version=None, status=200):
        response = self.request('GET', PATH + path, token=token,
                                version=version)
        self.assertEqual(status, response.status_int, response.text)
        return response.json

    def test_index_totals_per_project(self):
        usages = self.get(PERIOD)['tenant_usages']
        self.assertEqual(['demo', 'other'], [u['tenant_id'] for u in usages])
        for usage in usages:
            self.assertEqual(TOTALS, set(usage))
        demo, other = usages
        memory = self.flavor.memory_mb
        self.assertEqual((30.0, 30.0 * memory, '2024-05-01T00:00:00',
                          '2024-05-02T00:00:00'),
                         (demo['total_hours'], demo['total_memory_mb_usage'],
                          demo['start'], demo['stop']))
        self.assertEqual(12.0, other['total_hours'])

    def test_detailed_index_and_show_list_servers(self):
        demo = self.get(PERIOD + '&detailed=1')['tenant_usages'][0]
        self.assertEqual(TOTALS | {'server_usages'}, set(demo))
        shown = self.get('/demo' + PERIOD,
                         token=fakes.USER_TOKEN)['tenant_usage']
        self.assertEqual(TOTALS | {'server_usages'}, set(shown))
        servers = {s['name']: s for s in shown['server_usages']}
        self.assertEqual({'whole', 'gone'}, set(servers))
        for server in servers.values():
            self.assertEqual(SERVER, set(server))
        gone = servers['gone']
        self.assertEqual(
            (self.deleted.uuid, 'terminated', 6.0, 6 * 3600,
             '2024-05-01T02:00:00', '2024-05-01T08:00:00', 'm1.tiny', 1),
            (gone['instance_id'], gone['state'], gone['hours'],
             gone['uptime'], gone['started_at'], gone['ended_at'],
             gone['flavor'], gone['local_gb']))
        self.assertEqual(('active', None, 24.0),
                         (servers['whole']['state'],
                          servers['whole']['ended_at'],
                          servers['whole']['hours']))

    def test_a_project_without_usage_is_empty(self):
        self.assertEqual({'tenant_usage': {}},
                         self.get('/nobody' + PERIOD))

    def test_paging_over_servers_from_240(self):
        page = self.get(PERIOD + '&detailed=1&limit=1', version='2.40')
        self.assertEqual([[self.whole.uuid]],
                         [[s['instance_id'] for s in u['server_usages']]
                          for u in page['tenant_usages']])
        self.assertIn('marker=%s' % self.whole.uuid,
                      page['tenant_usages_links'][0]['href'])
        page = self.get(PERIOD + '&detailed=1&marker=%s' % self.whole.uuid,
                        version='2.40')
        self.assertEqual([self.deleted.uuid, self.other.uuid],
                         [s['instance_id'] for u in page['tenant_usages']
                          for s in u['server_usages']])

    def test_bad_periods_are_400(self):
        for query in ('?start=yesterday',
                      '?start=2024-05-02T00:00:00&end=2024-05-01T00:00:00',
                      '?end=2024-05-01'):
            with self.subTest(query=query):
                self.get(query, status=400)

    def test_an_empty_tenant_id_is_404(self):
        self.get('/' + PERIOD, status=404)

    def test_policies(self):
        self.get(PERIOD, token=fakes.USER_TOKEN, status=403)
        self.get('/other' + PERIOD, token=fakes.USER_TOKEN, status=403)
