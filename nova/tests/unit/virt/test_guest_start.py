"""The start of a guest: one sequence, whose steps a driver supplies."""

import dataclasses

from nova.conf import host_settings
from nova import exception
from nova.model import network as network_model
from nova.tests import base
from nova.tests.fixtures import driver_contract as contract
from nova.virt import guest_start
from nova.virt import journal


class Instance:
    uuid = '6a3fa4ad-0d35-4b5e-9a6b-1d8bb2a1e0c4'


class RecordingSteps:
    """A driver's steps that record what the sequence asked of them, and
    fail at ``fail_at`` (a step's name) as a driver's would."""

    def __init__(self, fail_at=None, raise_instead=None):
        self.done = []
        self.fail_at = fail_at
        self.raise_instead = raise_instead

    def _do(self, step):
        self.done.append(step)
        if step == self.fail_at:
            raise exception.InjectedFailure(step=step)

    def plug_vifs(self):
        self._do('plug')

    def define(self):
        self._do('define')

    def launch(self, pause):
        self._do('launch paused' if pause else 'launch')

    def resume(self):
        self._do('resume')

    def undo(self, destroy_disks):
        self.done.append('undo, destroy disks' if destroy_disks
                         else 'undo, keep disks')

    def failure(self, exc):
        return self.raise_instead or exc


class TestGuestStart(base.TestCase):

    def setUp(self):
        super().setUp()
        self.virtapi = contract.NetworkBackendVirtAPI()
        self.settings = host_settings.HostSettings(
            host='compute1', instances_path=self.tmp)
        net = network_model.Network('net-1', 'public', 'br-public')
        self.network_info = network_model.NetworkInfo([
            network_model.VIF('port-1', 'fa:16:3e:00:00:01', net),
            network_model.VIF('port-2', 'fa:16:3e:00:00:02', net,
                              active=True)])
        self.checked = []

    def request(self, **kwargs):
        return guest_start.StartRequest(Instance(), self.network_info,
                                        **kwargs)

    def attempt(self, lost_at=None):
        def check(step):
            self.checked.append(step)
            if step == lost_at:
                raise exception.AttemptSuperseded(
                    instance_uuid=Instance.uuid, attempt='a',
                    why='reset-state', step=step)
        return journal.Attempt.new(journal.BUILD).checked_by(check)

    def test_inactive_vifs_are_awaited_with_the_guest_paused(self):
        steps = RecordingSteps()
        guest_start.start(self.virtapi, self.settings, steps,
                          self.request(attempt=self.attempt()))
        self.assertEqual(['plug', 'define', 'launch paused', 'resume'],
                         steps.done)
        self.assertEqual([('network-vif-plugged', 'port-1')],
                         self.virtapi.waited_for)
        self.assertEqual([journal.CHECK_PLUG, journal.CHECK_DEFINE,
                          journal.CHECK_START, journal.CHECK_RESUME,
                          journal.CHECK_RUNNING], self.checked)

    def test_nothing_is_awaited_when_no_event_will_come(self):
        for request in (self.request(vifs_already_plugged=True),
                        self.request(power_on=False)):
            self.assertEqual([], guest_start.vif_events(self.settings,
                                                        request))
        self.assertEqual([], guest_start.vif_events(
            dataclasses.replace(self.settings, vif_plugging_timeout=0),
            self.request()))
        steps = RecordingSteps()
        guest_start.start(self.virtapi, self.settings, steps,
                          self.request(power_on=False))
        self.assertEqual(['plug', 'define'], steps.done)

    def test_only_a_spawn_removes_disks_when_the_start_fails(self):
        for destroy in (False, True):
            steps = RecordingSteps(fail_at='launch paused')
            self.assertRaises(
                exception.InjectedFailure, guest_start.start, self.virtapi,
                self.settings, steps,
                self.request(destroy_disks_on_failures=destroy))
            self.assertEqual(
                'undo, destroy disks' if destroy else 'undo, keep disks',
                steps.done[-1])

    def test_a_token_lost_once_the_guest_runs_undoes_the_start(self):
        self.virtapi.deliver = True
        steps = RecordingSteps()
        self.assertRaises(
            exception.AttemptSuperseded, guest_start.start, self.virtapi,
            self.settings, steps,
            self.request(attempt=self.attempt(
                lost_at=journal.CHECK_RUNNING),
                destroy_disks_on_failures=True))
        self.assertEqual(['plug', 'define', 'launch paused', 'resume',
                          'undo, destroy disks'], steps.done)

    def test_a_failed_event_fails_the_start(self):
        self.virtapi.event_status = 'failed'
        steps = RecordingSteps()
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          guest_start.start, self.virtapi, self.settings,
                          steps, self.request())
        self.assertEqual('undo, keep disks', steps.done[-1])
        self.assertNotIn('resume', steps.done)

    def test_the_driver_may_say_more_about_a_failure(self):
        better = exception.DiskLeaseHeld(disk='/d', local_domain='other',
                                         reason='held')
        steps = RecordingSteps(fail_at='define', raise_instead=better)
        with self.assertRaises(exception.DiskLeaseHeld) as raised:
            guest_start.start(self.virtapi, self.settings, steps,
                              self.request())
        self.assertIs(better, raised.exception)
        self.assertIsInstance(raised.exception.__cause__,
                              exception.InjectedFailure)
