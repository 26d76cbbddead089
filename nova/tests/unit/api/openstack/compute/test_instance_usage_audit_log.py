"""/os-instance_usage_audit_log: the "no audit ran" document of a
period, every compute host not run; 400 for a bad time."""

import datetime

from nova.api.openstack.compute import instance_usage_audit_log as audit
from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/os-instance_usage_audit_log'
KEYS = {'hosts_not_run', 'log', 'num_hosts', 'num_hosts_done',
        'num_hosts_not_run', 'num_hosts_running', 'overall_status',
        'period_beginning', 'period_ending', 'total_errors',
        'total_instances'}


class InstanceUsageAuditLogTest(fakes.APITestCase):

    def test_before_a_time(self):
        self.make_service('ctl', binary='nova-conductor')
        response = self.request('GET', PATH + '/2024-03-15%2010:00:00')
        self.assertEqual(200, response.status_int, response.text)
        log = response.json['instance_usage_audit_log']
        self.assertEqual({
            'hosts_not_run': ['host1', 'host2'], 'log': {}, 'num_hosts': 2,
            'num_hosts_done': 0, 'num_hosts_not_run': 2,
            'num_hosts_running': 0,
            'overall_status': '0 of 2 hosts done. 0 errors.',
            'period_beginning': '2024-02-01 00:00:00',
            'period_ending': '2024-03-01 00:00:00', 'total_errors': 0,
            'total_instances': 0}, log)

    def test_index_is_the_last_month(self):
        response = self.request('GET', PATH)
        self.assertEqual(200, response.status_int, response.text)
        log = response.json['instance_usage_audit_logs']
        self.assertEqual(KEYS, set(log))
        now = datetime.datetime.utcnow()
        self.assertEqual(
            datetime.datetime(now.year, now.month, 1).strftime(
                '%Y-%m-%d %H:%M:%S'), log['period_ending'])

    def test_january_goes_back_a_year(self):
        self.assertEqual(
            (datetime.datetime(2023, 12, 1), datetime.datetime(2024, 1, 1)),
            audit.last_completed_month(datetime.datetime(2024, 1, 31, 5)))

    def test_invalid_time_is_400_and_admin_only(self):
        self.assertFault(self.request('GET', PATH + '/invalid_time'), 400,
                         'badRequest')
        for path in (PATH, PATH + '/2024-03-15%2010:00:00'):
            self.assertFault(self.request('GET', path,
                                          token=fakes.USER_TOKEN),
                             403, 'forbidden')
