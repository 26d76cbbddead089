"""nova-manage ha alerts / recoveries / instance-failures: what
nova-hamonitor and the compute hosts recorded, read from the database
alone."""

import os

from nova.conf import CONF
from nova.db import api as db_api
from nova.db import migration
from nova import objects
from nova.objects import ha_alert
from nova.objects import ha_instance_failure
from nova.objects import ha_recovery as steps
from nova.tests import base
from nova.tests.fixtures import database as dbf
from nova.tests.unit.cmd import test_manage


class HaCommandsTestCase(base.TestCase):

    _run = test_manage.ManageTestCase._run

    def setUp(self):
        super().setUp()
        self.addCleanup(CONF, [], project='nova', default_config_files=[])
        self.addCleanup(db_api.dispose)
        url = 'sqlite:///' + os.path.join(self.tmp, 'manage.sqlite')
        db_api.configure(url)
        migration.db_sync()
        self.ctx = dbf.admin_context()
        self.conf = os.path.join(self.tmp, 'nova.conf')
        with open(self.conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n[database]\n'
                    'connection = %s\n' % (self.state_path, url))

    def test_nothing_recorded(self):
        self.assertEqual((0, 'No alerts.\n', ''),
                         self._run('--config-file', self.conf, 'ha',
                                   'alerts'))
        self.assertEqual((0, 'No recoveries.\n', ''),
                         self._run('--config-file', self.conf, 'ha',
                                   'recoveries'))
        self.assertEqual((0, 'No instance failures.\n', ''),
                         self._run('--config-file', self.conf, 'ha',
                                   'instance-failures'))

    def test_alerts_newest_first_and_by_host(self):
        ha_alert.HaAlert.record(self.ctx, 'c1', 'host c1 needs fencing')
        ha_alert.HaAlert.record(self.ctx, 'c2', 'host c2 was not fenced')
        code, out, _ = self._run('--config-file', self.conf, 'ha', 'alerts')
        self.assertEqual(0, code)
        lines = out.splitlines()
        self.assertEqual(['created_at', 'host', 'reason'],
                         lines[0].split())
        self.assertIn('c2', lines[1])
        self.assertIn('host c1 needs fencing', lines[2])
        code, out, _ = self._run('--config-file', self.conf, 'ha', 'alerts',
                                 '--host', 'c1')
        self.assertEqual(2, len(out.splitlines()))
        self.assertNotIn('c2', out)

    def test_recoveries_show_step_and_run(self):
        row = steps.HaHostRecovery.begin(self.ctx, 'c1', steps.FENCING,
                                         'ctl:1:ab', 'missed heartbeats')
        row.advance(steps.FENCING, steps.READY, 'ctl:1:ab', fenced=True)
        code, out, _ = self._run('--config-file', self.conf, 'ha',
                                 'recoveries')
        self.assertEqual(0, code)
        (header, line) = out.splitlines()
        self.assertIn('host-evacuate', header)
        self.assertEqual(['c1', 'ready', 'True', '-', '-', 'ctl:1:ab'],
                         line.split()[2:8])

    def test_recoveries_show_the_masakari_notification(self):
        row = steps.HaHostRecovery.begin(self.ctx, 'c1', steps.NOTIFYING,
                                         'ctl:1:ab', 'missed heartbeats')
        uuid = '0b7e3c2a-6a8e-4b0e-9d0f-3c1f3e0d9a11'
        row.advance(steps.NOTIFYING, steps.NOTIFIED, 'ctl:1:ab',
                    notification_uuid=uuid)
        code, out, _ = self._run('--config-file', self.conf, 'ha',
                                 'recoveries')
        self.assertEqual(0, code)
        (header, line) = out.splitlines()
        self.assertEqual(['created_at', 'host', 'step', 'fenced',
                          'host-evacuate', 'masakari', 'monitor', 'reason'],
                         header.split())
        self.assertEqual(['c1', 'notified', '-', '-', uuid, 'ctl:1:ab'],
                         line.split()[2:8])

    def test_instance_failures_newest_first_with_what_was_done(self):
        first = objects.HaInstanceFailure.record(
            self.ctx, '0b7e3c2a-6a8e-4b0e-9d0f-3c1f3e0d9a11', 'c1',
            'STOPPED_FAILED')
        first.advance(ha_instance_failure.SKIPPED, 'ctl:1:ab',
                      reason='not HA_Enabled')
        objects.HaInstanceFailure.record(
            self.ctx, '7d1e3c2a-6a8e-4b0e-9d0f-3c1f3e0d9a22', 'c2',
            'CRASHED')
        code, out, _ = self._run('--config-file', self.conf, 'ha',
                                 'instance-failures')
        self.assertEqual(0, code)
        (header, newest, oldest) = out.splitlines()
        self.assertEqual(['created_at', 'host', 'instance', 'event', 'step',
                          'masakari', 'monitor', 'reason'], header.split())
        self.assertEqual(['c2', '7d1e3c2a-6a8e-4b0e-9d0f-3c1f3e0d9a22',
                          'CRASHED', 'new', '-', '-'], newest.split()[2:8])
        self.assertEqual(['c1', 'STOPPED_FAILED', 'skipped', '-',
                          'ctl:1:ab', 'not'], [oldest.split()[i]
                                               for i in (2, 4, 5, 6, 7, 8)])
        code, out, _ = self._run('--config-file', self.conf, 'ha',
                                 'instance-failures', '--host', 'c1')
        self.assertEqual(2, len(out.splitlines()))
        self.assertNotIn('CRASHED', out)
