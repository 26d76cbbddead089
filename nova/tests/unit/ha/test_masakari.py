"""The monitor with ``[ha] recovery = masakari`` against a real database
and a Masakari API over HTTP (``masakari_stub``; the integration tests run
the real one): it hands a fenced, forced-down host to Masakari once, and
never evacuates it itself."""

import datetime

from nova.compute import api as compute_api
from nova.conf import CONF
from nova.conf import masakari as masakari_conf
from nova import crashpoint
from nova import exception
from nova.ha.decision import Action
from nova.ha import evidence as evidence_mod
from nova.ha import fencer as fencer_mod
from nova.ha import lease as lease_mod
from nova.ha import masakari as masakari_mod
from nova.ha import monitor as monitor_mod
from nova import objects
from nova.objects import ha_alert
from nova.objects import ha_recovery as steps
from nova.objects import host_evacuation as run_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf
from nova.tests.unit.ha import fence_agents
from nova.tests.unit.ha import masakari_stub
from nova.tests.unit.ha import test_monitor
from nova.tests.unit.ha import test_probe


class MasakariRecoveryTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.flags(lease_duration=30, group='ha')
        self.conductor = test_monitor.RecordingConductor()
        self.api = compute_api.API(None, self.conductor)
        self.agent, self.record = fence_agents.recording_agent(self.tmp)
        dbf.make_service(self.ctx, 'a', up=False)
        dbf.make_service(self.ctx, 'b')
        dbf.make_instance(self.ctx, 'a')
        self.masakari = masakari_stub.MasakariStub().start()
        self.addCleanup(self.masakari.stop)
        # keystoneauth's "none" plugin: the stub checks no token. The
        # options are registered by Notifier.from_conf, after: here first.
        masakari_conf.register_keystoneauth_opts(CONF)
        self.flags(auth_type='none', endpoint_override=self.masakari.url,
                   group='masakari')
        self.flags(recovery='masakari', group='ha')

    def monitor(self, name='m1', probe=evidence_mod.no_probe):
        lease = lease_mod.MonitorLease('RegionOne', name, 30)
        return monitor_mod.Monitor(
            self.ctx, lease, fencer_mod.Fencer(self.agent, timeout=10),
            self.api, probe=probe,
            masakari=masakari_mod.Notifier.from_conf(CONF))

    def forced_down(self, host):
        return objects.Service.get_by_host_and_binary(
            self.ctx, host, 'nova-compute').forced_down

    def runs(self):
        return run_obj.HostEvacuation.get_all(self.ctx)

    def recovery(self):
        (row,) = steps.HaHostRecovery.get_all(self.ctx)
        return row

    def test_fenced_forced_down_then_handed_to_masakari(self):
        verdicts = self.monitor().check_once()
        self.assertEqual(Action.FENCE, verdicts['a'].action)
        self.assertEqual(['a'], fence_agents.fenced(self.record))
        self.assertTrue(self.forced_down('a'))
        (posted,) = self.masakari.posted
        sent = posted['notification']
        self.assertEqual(('COMPUTE_HOST', 'a'),
                         (sent['type'], sent['hostname']))
        self.assertEqual({'event': 'STOPPED', 'host_status': 'NORMAL',
                          'cluster_status': 'OFFLINE'}, sent['payload'])
        row = self.recovery()
        self.assertEqual(row.created_at.strftime('%Y-%m-%dT%H:%M:%SZ'),
                         sent['generated_time'])
        (taken,) = self.masakari.notifications
        self.assertEqual((steps.NOTIFIED, True, taken['notification_uuid'],
                          None),
                         (row.step, row.fenced, row.notification_uuid,
                          row.evacuation_uuid))
        # Masakari evacuates, not the monitor.
        self.assertEqual([], self.runs())
        self.assertEqual([], self.conductor.runs)
        # Later checks leave the host alone: one notification.
        self.assertEqual(Action.ALREADY_RECOVERED,
                         self.monitor().check_once()['a'].action)
        self.assertEqual(1, len(self.masakari.posted))

    def test_an_error_from_masakari_is_an_alert_and_retried(self):
        self.masakari.failing = 500
        monitor = self.monitor()
        self.assertEqual(Action.FENCE, monitor.check_once()['a'].action)
        self.assertTrue(self.forced_down('a'))
        self.assertEqual((steps.NOTIFYING, None),
                         (self.recovery().step,
                          self.recovery().notification_uuid))
        (alert,) = ha_alert.HaAlert.get_all(self.ctx)
        self.assertIn('Masakari was not told', alert.reason)
        self.assertIn('answered 500', alert.reason)
        self.assertEqual([], self.runs())
        # Still failing: posted again, the same alert, nothing evacuated.
        self.assertEqual(Action.CONTINUE, monitor.check_once()['a'].action)
        self.assertEqual(2, len(self.masakari.posted))
        self.assertEqual(1, len(ha_alert.HaAlert.get_all(self.ctx)))
        self.masakari.failing = None
        self.assertEqual(Action.CONTINUE, monitor.check_once()['a'].action)
        (taken,) = self.masakari.notifications
        self.assertEqual((steps.NOTIFIED, taken['notification_uuid']),
                         (self.recovery().step,
                          self.recovery().notification_uuid))
        # One fence for the whole failure, however many posts.
        self.assertEqual(['a'], fence_agents.fenced(self.record))
        self.assertEqual([], self.runs())
        self.assertEqual([], self.conductor.runs)

    def test_a_masakari_that_is_down_is_an_alert_and_retried(self):
        self.masakari.stop()
        monitor = self.monitor()
        self.assertEqual(Action.FENCE, monitor.check_once()['a'].action)
        self.assertEqual(steps.NOTIFYING, self.recovery().step)
        (alert,) = ha_alert.HaAlert.get_all(self.ctx)
        self.assertIn('Masakari was not told', alert.reason)
        self.assertEqual([], self.runs())
        self.assertEqual(Action.CONTINUE, monitor.check_once()['a'].action)
        self.assertEqual(steps.NOTIFYING, self.recovery().step)
        self.assertEqual([], self.runs())
        self.assertEqual([], self.conductor.runs)

    def test_a_monitor_that_stopped_after_posting_is_not_made_to_post(self):
        def dies(point):
            # The process stops after Masakari took the notification,
            # before it is recorded.
            if point == 'hamonitor.after_notify':
                raise RuntimeError('stopped')
        unobserve = crashpoint.observe(dies)
        self.monitor('m1').check_once()
        unobserve()
        self.assertEqual(steps.NOTIFYING, self.recovery().step)
        test_monitor.lease_row_expires_now()
        self.assertEqual(Action.CONTINUE,
                         self.monitor('m2').check_once()['a'].action)
        # Masakari refused the second post as a host under maintenance;
        # the monitor found its notification and recorded that one.
        self.assertEqual(2, len(self.masakari.posted))
        (taken,) = self.masakari.notifications
        self.assertEqual((steps.NOTIFIED, taken['notification_uuid']),
                         (self.recovery().step,
                          self.recovery().notification_uuid))
        self.assertEqual([], ha_alert.HaAlert.get_all(self.ctx))
        self.assertEqual(['a'], fence_agents.fenced(self.record))

    def test_a_flapping_host_is_notified_once(self):
        monitor = self.monitor()
        monitor.check_once()
        test_monitor.recovered_ten_minutes_ago()
        service = objects.Service.get_by_host_and_binary(
            self.ctx, 'a', 'nova-compute')
        service.forced_down = False
        service.save()
        dbf.set_up(service)
        self.assertEqual(Action.HEALTHY, monitor.check_once()['a'].action)
        dbf.set_down(objects.Service.get_by_host_and_binary(
            self.ctx, 'a', 'nova-compute'), seconds=120)
        self.assertEqual(Action.FLAPPED, monitor.check_once()['a'].action)
        self.assertEqual(1, len(self.masakari.posted))
        self.assertEqual(['a'], fence_agents.fenced(self.record))

    def test_only_the_lease_holder_posts(self):
        first, second = self.monitor('m1'), self.monitor('m2')
        self.assertIn('a', first.check_once())
        self.assertEqual({}, second.check_once())
        self.assertEqual(1, len(self.masakari.posted))

    def test_a_host_masakari_does_not_know_is_an_alert(self):
        self.masakari.hosts.pop('a')
        self.monitor().check_once()
        (alert,) = ha_alert.HaAlert.get_all(self.ctx)
        self.assertIn('answered 404', alert.reason)
        self.assertIn('no host a', alert.reason)
        self.assertEqual(steps.NOTIFYING, self.recovery().step)
        self.assertEqual([], self.runs())

    def test_a_monitor_without_masakari_leaves_a_notifying_host(self):
        # Begun with Masakari, carried on by a monitor configured for the
        # built-in recovery: evacuating could race the Masakari that may
        # have the host already.
        steps.HaHostRecovery.begin(self.ctx, 'a', steps.NOTIFYING, 'm0',
                                   'test')
        lease = lease_mod.MonitorLease('RegionOne', 'm1', 30)
        builtin = monitor_mod.Monitor(
            self.ctx, lease, fencer_mod.Fencer(self.agent, timeout=10),
            self.api)
        self.assertEqual(Action.CONTINUE, builtin.check_once()['a'].action)
        self.assertEqual(steps.NOTIFYING, self.recovery().step)
        (alert,) = ha_alert.HaAlert.get_all(self.ctx)
        self.assertIn('[ha] recovery is not masakari', alert.reason)
        self.assertEqual([], self.runs())
        self.assertEqual([], self.masakari.posted)

    def test_nova_compute_alone_stopped_is_a_process_failure(self):
        # Host busy's libvirtd (busy.xml) runs guests; Masakari is down
        # at first.
        self.masakari.hosts['busy'] = 'b0b0b0b0-0000-4000-8000-000000000001'
        busy = dbf.make_service(self.ctx, 'busy', up=False)
        monitor = self.monitor(probe=test_probe.hosts_probe(self.tmp))
        self.masakari.failing = 503
        self.assertEqual(Action.NOT_FAILED,
                         monitor.check_once()['busy'].action)
        # Posted again at every check while Masakari fails; each alert
        # written once all the same.
        monitor.check_once()
        told, failed = [a.reason for a in reversed(
            ha_alert.HaAlert.get_all(self.ctx, 'busy'))]
        self.assertIn('libvirtd reports guests running', told)
        self.assertIn('Masakari was not told', failed)
        self.masakari.failing = None
        for _ in range(3):
            monitor.check_once()
        self.assertEqual(2, len(ha_alert.HaAlert.get_all(self.ctx, 'busy')))
        processes = [n for n in self.masakari.notifications
                     if n['type'] == 'PROCESS']
        (sent,) = processes
        self.assertEqual({'event': 'STOPPED', 'process_name': 'nova-compute'},
                         sent['payload'])
        self.assertEqual(busy.last_seen_up.strftime('%Y-%m-%dT%H:%M:%SZ'),
                         sent['generated_time'])
        self.assertEqual(3, len([p for p in self.masakari.posted
                                 if p['notification']['type'] == 'PROCESS']))
        # Host a alone was fenced.
        self.assertEqual(['a'], fence_agents.fenced(self.record))
        self.assertFalse(self.forced_down('busy'))

    def test_an_unfenced_host_is_not_handed_to_masakari(self):
        # No fence agent; the disks on shared storage under working
        # leases. Masakari's evacuations would go to any host, where a
        # guest still running on a would get a second copy from the
        # image: the monitor evacuates it itself, to the sharing hosts.
        for host in ('a', 'b'):
            service = objects.Service.get_by_host_and_binary(
                self.ctx, host, 'nova-compute')
            service.storage_identity = 'nfs-1'
            service.disk_leases = 'lockd'
            service.save()
        self.agent = None
        self.assertEqual(Action.RECOVER, self.monitor().check_once()[
            'a'].action)
        self.assertEqual([], self.masakari.posted)
        (run,) = self.runs()
        self.assertIs(True, run.on_shared_storage)
        row = self.recovery()
        self.assertEqual((steps.STARTED, False, run.uuid),
                         (row.step, row.fenced, row.evacuation_uuid))
        self.assertFalse(self.forced_down('a'))


class NotifierTestCase(base.TestCase):

    def test_without_credentials_it_refuses_to_start(self):
        self.assertRaises(exception.InvalidConfiguration,
                          masakari_mod.Notifier.from_conf, CONF)

    def test_generated_time_is_utc(self):
        tz = datetime.timezone(datetime.timedelta(hours=2))
        failure = masakari_mod.HostFailure(
            'a', datetime.datetime(2026, 1, 1, 12, 0, 5, 123, tzinfo=tz))
        self.assertEqual('2026-01-01T10:00:05Z', failure.generated_time)
