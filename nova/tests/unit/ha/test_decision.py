"""The monitor's decision table, row by row."""

import dataclasses
import unittest

from nova.ha import decision
from nova.ha.decision import Action

PRIVATE = decision.DiskLeaseReport(shared_storage=False,
                                   leases_working=False, summary='none')
LEASED = decision.DiskLeaseReport(shared_storage=True, leases_working=True,
                                  summary='lockd')
UNLEASED = decision.DiskLeaseReport(
    shared_storage=True, leases_working=False,
    summary='none: shares storage with b without disk leases')

DOWN = decision.HostEvidence(
    host='a', heartbeat_age=600.0, forced_down=False, service_down_time=60,
    guests_running=None, disk_leases=PRIVATE, fence_agent=True,
    flap_window=3600)


def decide(**changes):
    return decision.decide(dataclasses.replace(DOWN, **changes))


class TestDecide(unittest.TestCase):

    def test_a_host_heartbeating_is_left_alone(self):
        self.assertEqual(Action.HEALTHY, decide(heartbeat_age=5.0).action)

    def test_a_down_host_is_fenced_first_when_an_agent_is_configured(self):
        verdict = decide()
        self.assertEqual(Action.FENCE, verdict.action)
        self.assertIn('missed heartbeats for 600 s', verdict.reason)

    def test_a_host_that_never_reported_counts_as_down(self):
        self.assertEqual(Action.FENCE, decide(heartbeat_age=None).action)

    def test_a_host_registered_moments_ago_is_starting_not_failed(self):
        # Its service row is written in init_host, before its first
        # heartbeat: the seconds since it registered count.
        self.assertEqual(Action.HEALTHY, decide(
            heartbeat_age=4.0, never_reported=True).action)
        verdict = decide(heartbeat_age=600.0, never_reported=True)
        self.assertEqual(Action.FENCE, verdict.action)
        self.assertEqual('its compute service never reported in the 600 s '
                         'since it registered', verdict.reason)

    def test_fenced_is_recovered_and_not_fenced_is_nothing_more(self):
        self.assertEqual(Action.RECOVER,
                         decision.after_fence(DOWN, True, 'off').action)
        verdict = decision.after_fence(DOWN, False, 'exited with 1')
        self.assertEqual(Action.FENCE_FAILED, verdict.action)
        self.assertIn('exited with 1', verdict.reason)

    def test_without_agent_private_disks_raise_an_alert(self):
        verdict = decide(fence_agent=False)
        self.assertEqual(Action.ALERT, verdict.action)
        self.assertIn('host a needs fencing', verdict.reason)
        self.assertIn('not on shared storage', verdict.reason)

    def test_without_agent_shared_storage_without_leases_alerts(self):
        verdict = decide(fence_agent=False, disk_leases=UNLEASED)
        self.assertEqual(Action.ALERT, verdict.action)
        self.assertIn('without disk leases', verdict.reason)

    def test_without_agent_shared_storage_with_leases_is_recovered(self):
        self.assertEqual(Action.RECOVER,
                         decide(fence_agent=False,
                                disk_leases=LEASED).action)

    def test_forced_down_is_recovered_without_agent(self):
        verdict = decide(fence_agent=False, forced_down=True,
                         heartbeat_age=1.0)
        self.assertEqual(Action.RECOVER, verdict.action)
        self.assertIn('forced down', verdict.reason)

    def test_forced_down_is_fenced_first_with_an_agent(self):
        self.assertEqual(Action.FENCE,
                         decide(forced_down=True, heartbeat_age=1.0).action)

    def test_guests_still_running_mean_only_nova_compute_died(self):
        self.assertEqual(Action.NOT_FAILED,
                         decide(guests_running=True).action)
        self.assertEqual(Action.FENCE, decide(guests_running=False).action)

    def test_a_recovery_under_way_is_carried_on(self):
        prior = decision.PriorRecovery(ended=False, age=1.0,
                                       host_back_since=False)
        self.assertEqual(Action.CONTINUE, decide(recovery=prior).action)

    def test_a_recovered_host_not_back_is_not_recovered_again(self):
        prior = decision.PriorRecovery(ended=True, age=99999.0,
                                       host_back_since=False)
        self.assertEqual(Action.ALREADY_RECOVERED,
                         decide(recovery=prior, forced_down=True).action)

    def test_a_host_flapping_within_the_window_is_recovered_once(self):
        prior = decision.PriorRecovery(ended=True, age=120.0,
                                       host_back_since=True)
        verdict = decide(recovery=prior)
        self.assertEqual(Action.FLAPPED, verdict.action)
        self.assertIn('not recovered twice', verdict.reason)

    def test_a_host_failing_again_after_the_window_is_recovered(self):
        prior = decision.PriorRecovery(ended=True, age=7200.0,
                                       host_back_since=True)
        self.assertEqual(Action.FENCE, decide(recovery=prior).action)

    def test_a_host_back_and_up_after_its_recovery_is_healthy(self):
        prior = decision.PriorRecovery(ended=True, age=120.0,
                                       host_back_since=True)
        self.assertEqual(Action.HEALTHY,
                         decide(recovery=prior, heartbeat_age=3.0).action)


class TestEvacuatedAgainUnderTheLeases(unittest.TestCase):
    """An unfenced host evacuated under the disk leases: what the leases
    refused (a guest still ran there) is evacuated again once
    ``lease_retry_interval`` passed, and never after a fence."""

    def prior(self, **changes):
        values = dict(ended=True, age=90.0, host_back_since=False,
                      lease_guarded=True, left_behind=3)
        values.update(changes)
        return decision.PriorRecovery(**values)

    def decide(self, prior, **changes):
        values = dict(recovery=prior, fence_agent=False, disk_leases=LEASED,
                      lease_retry_interval=60.0)
        values.update(changes)
        return decide(**values)

    def test_left_behind_after_the_interval_is_evacuated_again(self):
        verdict = self.decide(self.prior())
        self.assertEqual(Action.RECOVER, verdict.action)
        self.assertIn('3 instances still on it (their evacuation was '
                      'refused 90 s ago)', verdict.reason)
        self.assertIn('working disk leases', verdict.reason)

    def test_not_before_the_interval(self):
        verdict = self.decide(self.prior(age=30.0))
        self.assertEqual(Action.ALREADY_RECOVERED, verdict.action)
        self.assertIn('3 instances still on it, evacuated again 60 s after',
                      verdict.reason)

    def test_nothing_left_behind_is_not_evacuated_again(self):
        self.assertEqual(Action.ALREADY_RECOVERED, self.decide(
            self.prior(left_behind=0)).action)

    def test_a_fenced_recovery_is_not_evacuated_again(self):
        # Whatever a fenced host's run left behind failed for a reason a
        # retry does not change (no target): an operator's to look at.
        self.assertEqual(Action.ALREADY_RECOVERED, self.decide(
            self.prior(lease_guarded=False)).action)

    def test_leases_that_stopped_working_raise_the_alert_instead(self):
        verdict = self.decide(self.prior(), disk_leases=UNLEASED)
        self.assertEqual(Action.ALERT, verdict.action)
        self.assertIn('needs fencing', verdict.reason)

    def test_an_agent_configured_since_fences_it_first(self):
        self.assertEqual(Action.FENCE, self.decide(
            self.prior(), fence_agent=True).action)

    def test_a_host_back_since_is_healthy(self):
        self.assertEqual(Action.HEALTHY, self.decide(
            self.prior(host_back_since=True), heartbeat_age=2.0).action)
