"""nova-hamonitor against real compute hosts (libvirt test driver): a
host whose nova-compute stops heartbeating is fenced (by a real command
that records its call), forced down and host-evacuated through the
conductor; every instance ends ACTIVE elsewhere, once, however many
monitors run and whichever of them stalls."""

import threading

from nova.ha import fencer as fencer_mod
from nova.ha import lease as lease_mod
from nova.ha import monitor as monitor_mod
from nova import objects
from nova.objects import ha_recovery
from nova.objects import host_evacuation as run_obj
from nova.tests.functional import evacuate_harness as harness
from nova.tests.unit.ha import fence_agents


class TestHaMonitor(harness.EvacuateTestCase):

    def setUp(self):
        super().setUp()
        self.agent, self.record = fence_agents.recording_agent(self.tmp)

    def monitor(self, name, lease_seconds=30):
        lease = lease_mod.MonitorLease('RegionOne', name, lease_seconds)
        return monitor_mod.Monitor(self.ctx, lease,
                                   fencer_mod.Fencer(self.agent, 10),
                                   self.api)

    def runs_of(self, host):
        return [r for r in run_obj.HostEvacuation.get_all(self.ctx)
                if r.source_host == host]

    def assertRecoveredOnce(self, instances):
        self.assertEqual(['a'], fence_agents.fenced(self.record))
        self.assertTrue(objects.Service.get_by_host_and_binary(
            self.ctx, 'a', 'nova-compute').forced_down)
        (run,) = self.runs_of('a')
        self.wait_for(lambda: run_obj.HostEvacuation.get_by_uuid(
            self.ctx, run.uuid).ended, 'the run to end')
        run = run_obj.HostEvacuation.get_by_uuid(self.ctx, run.uuid)
        self.assertEqual(run_obj.FINISHED, run.status)
        for instance in instances:
            row = self.fresh(instance)
            self.assertIn(row.host, ('b', 'c'))
            self.assertEqual(('active', None),
                             (row.vm_state, row.task_state))
            self.assertTrue(self.hosts[row.host].running(instance))
        (recovery,) = ha_recovery.HaHostRecovery.get_all(self.ctx)
        self.assertEqual(('started', run.uuid),
                         (recovery.step, recovery.evacuation_uuid))

    def test_a_silent_host_is_fenced_forced_down_and_evacuated(self):
        instances = [self.boot('a') for _ in range(3)]
        self.kill('a')
        first = self.monitor('m1')
        second = self.monitor('m2')
        self.assertEqual('fence', first.check_once()['a'].action.value)
        # The other monitor holds no lease: it does nothing at all.
        self.assertEqual({}, second.check_once())
        self.assertRecoveredOnce(instances)
        # Later checks leave the recovered host alone.
        self.assertEqual('already-recovered',
                         first.check_once()['a'].action.value)
        self.assertEqual(1, len(self.runs_of('a')))

    def test_a_monitor_stalled_after_fencing_is_taken_over_once(self):
        instances = [self.boot('a') for _ in range(2)]
        self.kill('a')
        self.flags(lease_duration=2, group='ha')
        stall = self.stall_at('hamonitor.after_fence')
        stalled = self.monitor('m1', lease_seconds=2)
        verdicts = {}
        thread = threading.Thread(
            target=lambda: verdicts.update(stalled.check_once()))
        thread.start()
        self.addCleanup(thread.join, harness.WAIT_SECONDS)
        if not stall.reached.wait(harness.WAIT_SECONDS):
            self.fail('the monitor never fenced')
        # Its lease runs out while it stands still; another monitor
        # takes it over and carries the recovery on from "fenced".
        second = self.monitor('m2', lease_seconds=2)
        self.wait_for(second.lease.renew, 'the lease to be taken over')
        self.assertEqual('continue', second.check_once()['a'].action.value)
        stall.release()
        thread.join(harness.WAIT_SECONDS)
        self.assertFalse(thread.is_alive())
        # It woke without its lease: it did nothing more.
        self.assertNotIn('a', verdicts)
        self.assertRecoveredOnce(instances)
