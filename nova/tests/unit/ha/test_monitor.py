"""The monitor against a real database: what it records and changes for
each verdict, and that only the lease holder acts.

The conductor is the one part that cannot run here: a recording stand-in
takes the cast host-evacuate runs (the functional tests run them)."""

import datetime
import os

import sqlalchemy as sa

from nova.compute import api as compute_api
from nova import crashpoint
from nova.db import api as db_api
from nova.db import control_models
from nova.db import models
from nova.ha.decision import Action
from nova.ha import evidence as evidence_mod
from nova.ha import fencer as fencer_mod
from nova.ha import lease as lease_mod
from nova.ha import monitor as monitor_mod
from nova import objects
from nova.objects import base as obj_base
from nova.objects import ha_alert
from nova.objects import ha_recovery as steps
from nova.objects import host_evacuation
from nova.tests import base
from nova.tests.fixtures import database as dbf
from nova.tests.unit.ha import fence_agents
from nova.tests.unit.ha import test_probe


class RecordingConductor:
    def __init__(self):
        self.runs = []

    def run_host_evacuation(self, context, evacuation_uuid):
        self.runs.append(evacuation_uuid)


class MonitorTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.flags(lease_duration=30, group='ha')
        self.conductor = RecordingConductor()
        self.api = compute_api.API(None, self.conductor)
        self.agent, self.record = fence_agents.recording_agent(self.tmp)
        self.a = dbf.make_service(self.ctx, 'a', up=False)
        self.b = dbf.make_service(self.ctx, 'b')
        dbf.make_instance(self.ctx, 'a')

    def monitor(self, name='m1', agent=None, lease_seconds=30,
                probe=evidence_mod.no_probe):
        lease = lease_mod.MonitorLease('RegionOne', name, lease_seconds)
        fencer = fencer_mod.Fencer(agent, timeout=10)
        return monitor_mod.Monitor(self.ctx, lease, fencer, self.api,
                                   probe=probe)

    def service(self, host):
        return objects.Service.get_by_host_and_binary(self.ctx, host,
                                                      'nova-compute')

    def runs_of(self, host):
        return [r for r in host_evacuation.HostEvacuation.get_all(self.ctx)
                if r.source_host == host]

    def test_fenced_then_forced_down_then_evacuated(self):
        verdicts = self.monitor(agent=self.agent).check_once()
        self.assertEqual(Action.FENCE, verdicts['a'].action)
        self.assertEqual(Action.HEALTHY, verdicts['b'].action)
        self.assertEqual(['a'], fence_agents.fenced(self.record))
        self.assertTrue(self.service('a').forced_down)
        (run,) = self.runs_of('a')
        self.assertEqual([run.uuid], self.conductor.runs)
        (row,) = steps.HaHostRecovery.get_all(self.ctx)
        self.assertEqual((steps.STARTED, True, run.uuid),
                         (row.step, row.fenced, row.evacuation_uuid))

    def test_a_host_that_is_starting_is_not_fenced(self):
        # A new compute host registers in its init_host and heartbeats
        # only once that is done: found then, it is starting, not failed.
        # (The monitor had fenced every host of a cluster coming up.)
        objects.Service(self.ctx, host='c', binary='nova-compute',
                        topic='compute').create()
        verdicts = self.monitor(agent=self.agent).check_once()
        self.assertEqual(Action.HEALTHY, verdicts['c'].action)
        self.assertEqual(['a'], fence_agents.fenced(self.record))
        # One that never reported for longer than service_down_time has
        # failed.
        with db_api.session() as session:
            session.execute(sa.update(models.Service).where(
                models.Service.host == 'c').values(
                created_at=obj_base.utcnow() - datetime.timedelta(
                    minutes=10)))
        verdict = self.monitor(agent=self.agent).check_once()['c']
        self.assertEqual(Action.FENCE, verdict.action)
        self.assertIn('never reported in the 600 s', verdict.reason)

    def test_hosts_failing_together_are_fenced_at_once(self):
        # The agent fences a only once c is fenced: checked one host after
        # the other, a's fence would fail (c waiting behind it).
        dbf.make_service(self.ctx, 'c', up=False)
        agent, record = fence_agents.waiting_agent(self.tmp, 'a', 'c')
        verdicts = self.monitor(agent=agent).check_once()
        self.assertEqual((Action.FENCE, Action.FENCE),
                         (verdicts['a'].action, verdicts['c'].action))
        self.assertEqual(['c', 'a'], fence_agents.fenced(record))
        self.assertTrue(self.service('a').forced_down)
        self.assertTrue(self.service('c').forced_down)
        self.assertEqual([], ha_alert.HaAlert.get_all(self.ctx))

    def test_a_failed_fence_does_nothing_else(self):
        agent, record = fence_agents.recording_agent(self.tmp, exit_code=1)
        verdicts = self.monitor(agent=agent).check_once()
        self.assertEqual(Action.FENCE, verdicts['a'].action)
        self.assertEqual(['a'], fence_agents.fenced(record))
        self.assertFalse(self.service('a').forced_down)
        self.assertEqual([], self.runs_of('a'))
        (row,) = steps.HaHostRecovery.get_all(self.ctx)
        self.assertEqual(steps.FENCE_FAILED, row.step)
        (alert,) = ha_alert.HaAlert.get_all(self.ctx)
        self.assertIn('was not fenced', alert.reason)

    def test_without_agent_private_disks_give_one_alert(self):
        monitor = self.monitor()
        for _ in range(2):
            self.assertEqual(Action.ALERT, monitor.check_once()['a'].action)
        (alert,) = ha_alert.HaAlert.get_all(self.ctx)
        self.assertEqual('a', alert.host)
        self.assertIn('host a needs fencing', alert.reason)
        self.assertEqual([], self.runs_of('a'))
        self.assertFalse(self.service('a').forced_down)

    def test_an_alert_is_recorded_once_per_failure(self):
        monitor = self.monitor()
        monitor.check_once()
        # Ten seconds more of silence: the same failure, the same alert.
        dbf.set_down(self.a, seconds=3610)
        self.assertEqual(Action.ALERT, monitor.check_once()['a'].action)
        (alert,) = ha_alert.HaAlert.get_all(self.ctx)
        self.assertNotIn('3610', alert.reason)
        # The host came back after that alert and failed again: told
        # again.
        self.backdate_alerts(seconds=7200)
        self.assertEqual(Action.ALERT, monitor.check_once()['a'].action)
        self.assertEqual(2, len(ha_alert.HaAlert.get_all(self.ctx)))

    def backdate_alerts(self, seconds):
        with db_api.session() as session:
            session.execute(sa.update(control_models.HaAlert).values(
                created_at=obj_base.utcnow()
                - datetime.timedelta(seconds=seconds)))

    def test_a_host_whose_libvirtd_runs_guests_is_left_alone(self):
        probe = test_probe.hosts_probe(self.tmp)
        # Its libvirtd is at busy.xml: a host named busy.
        dbf.make_service(self.ctx, 'busy', up=False)
        dbf.make_instance(self.ctx, 'busy')
        monitor = self.monitor(agent=self.agent, probe=probe)
        for _ in range(2):
            verdicts = monitor.check_once()
            self.assertEqual(Action.NOT_FAILED, verdicts['busy'].action)
        # Host a's libvirtd does not answer: fenced as before.
        self.assertEqual(Action.ALREADY_RECOVERED, verdicts['a'].action)
        self.assertEqual(['a'], fence_agents.fenced(self.record))
        self.assertFalse(self.service('busy').forced_down)
        self.assertEqual([], self.runs_of('busy'))
        self.assertIsNone(steps.HaHostRecovery.latest(self.ctx, 'busy'))
        (alert,) = ha_alert.HaAlert.get_all(self.ctx, 'busy')
        self.assertIn('nova-compute of host busy is down but its libvirtd '
                      'reports guests running', alert.reason)
        # Its guests stopped (or it lost power): now it is failed.
        with open(os.path.join(self.tmp, 'busy.xml'), 'w') as f:
            f.write(test_probe.SHUT_OFF)
        self.assertEqual(Action.FENCE, monitor.check_once()['busy'].action)
        self.assertEqual(['a', 'busy'], fence_agents.fenced(self.record))
        self.assertTrue(self.service('busy').forced_down)

    def test_without_agent_leased_shared_storage_is_evacuated(self):
        for service in (self.a, self.b):
            service.storage_identity = 'nfs-1'
            service.disk_leases = 'lockd'
            service.save()
        verdicts = self.monitor().check_once()
        self.assertEqual(Action.RECOVER, verdicts['a'].action)
        (run,) = self.runs_of('a')
        # Not fenced: never forced down, and evacuated only to the hosts
        # sharing its storage, where the leases refuse a second guest.
        self.assertFalse(self.service('a').forced_down)
        self.assertIs(True, run.on_shared_storage)

    def share_storage_with_leases(self):
        for service in (self.a, self.b):
            service.storage_identity = 'nfs-1'
            service.disk_leases = 'lockd'
            service.save()

    def test_what_the_leases_refused_is_evacuated_again(self):
        self.share_storage_with_leases()
        monitor = self.monitor()
        self.assertEqual(Action.RECOVER, monitor.check_once()['a'].action)
        (first,) = self.runs_of('a')
        # While the run is under way nothing is left behind yet.
        self.flags(lease_retry_interval=1, group='ha')
        recovered_ten_minutes_ago()
        self.assertEqual(Action.ALREADY_RECOVERED,
                         monitor.check_once()['a'].action)
        # The run ended, the instance still on a (the target's lease
        # refused it): evacuated again, to the sharing hosts again.
        finish(first)
        verdict = monitor.check_once()['a']
        self.assertEqual(Action.RECOVER, verdict.action)
        self.assertIn('1 instances still on it', verdict.reason)
        runs = self.runs_of('a')
        self.assertEqual(2, len(runs))
        self.assertEqual([True, True], [r.on_shared_storage for r in runs])
        self.assertEqual(2, len(steps.HaHostRecovery.get_all(self.ctx)))
        # Not again before the interval from this new recovery.
        self.flags(lease_retry_interval=3600, group='ha')
        for run in runs:
            finish(run)
        self.assertEqual(Action.ALREADY_RECOVERED,
                         monitor.check_once()['a'].action)
        # Once the instance is elsewhere nothing is left to evacuate.
        self.flags(lease_retry_interval=1, group='ha')
        recovered_ten_minutes_ago()
        (instance,) = objects.Instance.get_by_host(self.ctx, 'a')
        instance.host = 'b'
        instance.save()
        self.assertEqual(Action.ALREADY_RECOVERED,
                         monitor.check_once()['a'].action)
        self.assertEqual(2, len(self.runs_of('a')))
        self.assertEqual([], fence_agents.fenced(self.record))

    def test_a_fenced_host_is_evacuated_anywhere_and_once(self):
        self.share_storage_with_leases()
        monitor = self.monitor(agent=self.agent)
        self.assertEqual(Action.FENCE, monitor.check_once()['a'].action)
        (run,) = self.runs_of('a')
        self.assertIsNone(run.on_shared_storage)
        finish(run)
        self.flags(lease_retry_interval=1, group='ha')
        recovered_ten_minutes_ago()
        self.assertEqual(Action.ALREADY_RECOVERED,
                         monitor.check_once()['a'].action)
        self.assertEqual(1, len(self.runs_of('a')))

    def test_forced_down_by_an_operator_is_evacuated_anywhere(self):
        self.a.forced_down = True
        self.a.save()
        self.assertEqual(Action.RECOVER,
                         self.monitor().check_once()['a'].action)
        (run,) = self.runs_of('a')
        self.assertIsNone(run.on_shared_storage)

    def test_only_the_lease_holder_acts(self):
        first = self.monitor('m1', agent=self.agent)
        second = self.monitor('m2', agent=self.agent)
        self.assertIn('a', first.check_once())
        self.assertEqual({}, second.check_once())
        self.assertEqual({}, second.check_once())
        self.assertEqual(Action.ALREADY_RECOVERED,
                         first.check_once()['a'].action)
        self.assertEqual(['a'], fence_agents.fenced(self.record))
        self.assertEqual(1, len(self.runs_of('a')))

    def test_a_monitor_that_lost_its_lease_midway_does_nothing_more(self):
        first = self.monitor('m1', agent=self.agent)

        def taken_over(point):
            # Another monitor took the lease while this one fenced.
            if point == 'hamonitor.after_fence':
                with db_api.session() as session:
                    session.execute(
                        sa.update(control_models.HaMonitorLease).values(
                            holder='m2'))
        self.addCleanup(crashpoint.observe(taken_over))
        verdicts = first.check_once()
        self.assertNotIn('a', verdicts)
        self.assertEqual(['a'], fence_agents.fenced(self.record))
        self.assertFalse(self.service('a').forced_down)
        self.assertEqual([], self.runs_of('a'))
        # The new holder carries on from the step recorded: no second
        # fence, one run.
        lease_row_expires_now()
        second = self.monitor('m2', agent=self.agent)
        self.assertEqual(Action.CONTINUE, second.check_once()['a'].action)
        self.assertEqual(['a'], fence_agents.fenced(self.record))
        self.assertTrue(self.service('a').forced_down)
        self.assertEqual(1, len(self.runs_of('a')))

    def test_a_flapping_host_is_recovered_once(self):
        monitor = self.monitor(agent=self.agent)
        monitor.check_once()
        recovered_ten_minutes_ago()
        # It comes back (an operator cleared forced_down), then fails
        # again within the flap window.
        service = self.service('a')
        service.forced_down = False
        service.save()
        dbf.set_up(service)
        self.assertEqual(Action.HEALTHY, monitor.check_once()['a'].action)
        dbf.set_down(self.service('a'), seconds=120)
        self.assertEqual(Action.FLAPPED, monitor.check_once()['a'].action)
        self.assertEqual(['a'], fence_agents.fenced(self.record))
        self.assertEqual(1, len(self.runs_of('a')))
        # After the window, a new failure is a new recovery.
        self.flags(flap_window=0, group='ha')
        self.assertEqual(Action.FENCE, monitor.check_once()['a'].action)
        self.assertEqual(['a', 'a'], fence_agents.fenced(self.record))
        self.assertEqual(2, len(self.runs_of('a')))

    def test_a_restarted_monitor_adopts_the_run_it_started(self):
        row = steps.HaHostRecovery.begin(self.ctx, 'a', steps.EVACUATING,
                                         'm0', 'test')
        run = self.api.host_evacuate(self.ctx, 'a')
        self.assertEqual(Action.CONTINUE,
                         self.monitor(agent=self.agent).check_once()[
                             'a'].action)
        row = steps.HaHostRecovery.get_by_id(self.ctx, row.id)
        self.assertEqual((steps.STARTED, run.uuid),
                         (row.step, row.evacuation_uuid))
        self.assertEqual(1, len(self.runs_of('a')))
        self.assertEqual([], fence_agents.fenced(self.record))


def finish(run):
    """The conductor took ``run`` and ended it."""
    if run.take('conductor1'):
        run.end(host_evacuation.FINISHED)


def lease_row_expires_now():
    with db_api.session() as session:
        session.execute(sa.update(control_models.HaMonitorLease).values(
            expires_at=obj_base.utcnow() - datetime.timedelta(seconds=1)))


def recovered_ten_minutes_ago():
    with db_api.session() as session:
        session.execute(sa.update(control_models.HaHostRecovery).values(
            created_at=obj_base.utcnow() - datetime.timedelta(minutes=10)))
