import sqlalchemy as sa

from nova.compute import operation
from nova.compute import states
from nova import exception
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova.tests.fixtures import compute as fixtures
from nova.tests.fixtures import database as dbf

STOP = operation.Operation('stop', 'stop', 'compute_stop_instance')
START = operation.Operation('start', 'start', 'compute_start_instance')


class TestClaim(fixtures.ComputeTestCase):

    def test_claim_sets_the_task_state_in_the_database(self):
        instance = self.active_instance()
        operation.claim(instance, states.get('stop'))
        self.assertEqual(task_states.POWERING_OFF,
                         self.reload(instance).task_state)

    def test_claim_refuses_a_vm_state_the_table_does_not_allow(self):
        instance = self.active_instance()
        self.assertRaises(exception.InstanceInvalidState, operation.claim,
                          instance, states.get('start'))
        self.assertIsNone(self.reload(instance).task_state)

    def test_claim_accepts_a_task_state_the_api_already_set(self):
        instance = self.active_instance()
        instance.task_state = task_states.POWERING_OFF
        instance.save()
        operation.claim(instance, states.get('stop'))
        self.assertEqual(task_states.POWERING_OFF,
                         self.reload(instance).task_state)

    def test_api_claimed_task_still_needs_an_allowed_vm_state(self):
        instance = self.active_instance()
        instance.task_state = task_states.POWERING_ON
        instance.save()
        self.assertRaises(exception.InstanceInvalidState, operation.claim,
                          instance, states.get('start'))

    def test_lost_race_raises_and_shows_the_winner(self):
        instance = self.active_instance()
        winner = self.reload(instance)
        winner.task_state = task_states.SUSPENDING
        winner.save(expected_task_state=[None])

        self.assertRaises(exception.UnexpectedTaskStateError,
                          operation.claim, instance, states.get('stop'))
        self.assertEqual(task_states.SUSPENDING, instance.task_state)
        self.assertEqual(task_states.SUSPENDING,
                         self.reload(instance).task_state)

    def test_vm_state_changed_behind_the_object_is_caught(self):
        instance = self.active_instance()
        other = self.reload(instance)
        other.vm_state = vm_states.SUSPENDED
        other.save()
        # The object still says ACTIVE; the database has the last word.
        self.assertRaises(exception.UnexpectedTaskStateError,
                          operation.claim, instance, states.get('stop'))
        self.assertIsNone(self.reload(instance).task_state)

    def moved_away(self, instance):
        """The row as an evacuation to compute2 leaves it: idle there."""
        row = self.reload(instance)
        row.host = row.node = 'compute2'
        row.save()

    def test_claim_refuses_an_instance_moved_to_another_host(self):
        instance = self.active_instance()
        self.moved_away(instance)
        # The object still says this host and idle; the row has moved.
        self.assertRaises(exception.InstanceNotOnThisHost, operation.claim,
                          instance, states.get('stop'), fixtures.HOST)
        row = self.reload(instance)
        self.assertEqual(('compute2', None), (row.host, row.task_state))
        self.assertEqual('compute2', instance.host)

    def test_build_claims_an_instance_no_host_holds_yet(self):
        instance = self.new_instance(host=None)
        instance.host = fixtures.HOST
        operation.claim(instance, states.get('build'), fixtures.HOST)
        row = self.reload(instance)
        self.assertEqual((fixtures.HOST, task_states.SPAWNING),
                         (row.host, row.task_state))

    def test_only_a_build_claims_an_instance_without_host(self):
        instance = self.active_instance()
        row = self.reload(instance)
        row.host = None
        row.save()
        self.assertRaises(exception.InstanceNotOnThisHost, operation.claim,
                          instance, states.get('stop'), fixtures.HOST)


class TestRunner(fixtures.ComputeTestCase):

    def test_instance_moved_to_another_host_is_not_touched(self):
        instance = self.active_instance()
        row = self.reload(instance)
        row.host = row.node = 'compute2'
        row.save()
        ran = []
        self.assertRaises(exception.InstanceNotOnThisHost, self.runner.run,
                          self.context, instance, STOP,
                          lambda: ran.append(1))
        self.assertEqual([], ran)
        self.assertEqual([], self.faults(instance))
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual('compute2', self.reload(instance).host)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(instance).state)

    def test_success_records_states_and_event(self):
        instance = self.active_instance()
        self.runner.run(self.context, instance, STOP,
                        lambda: self.driver.power_off(instance))
        self.assertEqual((vm_states.STOPPED, None, power_state.SHUTDOWN),
                         self.states(instance))
        self.assertEqual([('stop', 'compute_stop_instance', 'Success')],
                         self.events(instance))
        self.assertEqual([], self.faults(instance))

    def test_failure_records_fault_event_and_failure_state(self):
        instance = self.active_instance()

        def body():
            raise exception.InstancePowerOffFailure(reason='stuck')

        self.assertRaises(exception.InstancePowerOffFailure,
                          self.runner.run, self.context, instance, STOP,
                          body)
        # stop's failure column is KEEP: still active.
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual([('stop', 'compute_stop_instance', 'Error')],
                         self.events(instance))
        faults = self.faults(instance)
        self.assertEqual(1, len(faults))
        self.assertIn('stuck', faults[0].message)
        self.assertEqual(fixtures.HOST, faults[0].host)

    def assertRefusedWithItsEvent(self, error, instance, operation):
        """``operation`` raises ``error`` before its body runs, and leaves
        one event, ended 'Error'."""
        ran = []
        self.assertRaises(error, self.runner.run, self.context, instance,
                          operation, lambda: ran.append(1))
        self.assertEqual([], ran)
        self.assertEqual([(operation.action, operation.event, 'Error')],
                         self.events(instance))

    def test_refused_operation_records_the_event_only(self):
        instance = self.active_instance()
        self.assertRefusedWithItsEvent(exception.InstanceInvalidState,
                                       instance, START)
        self.assertEqual([], self.faults(instance))
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))

    def test_delete_during_the_operation_is_not_a_fault(self):
        instance = self.active_instance()

        def body():
            # The API marks the instance deleting while the body runs.
            other = self.reload(instance)
            other.task_state = task_states.DELETING
            other.save()

        self.assertRaises(exception.UnexpectedDeletingTaskStateError,
                          self.runner.run, self.context, instance, STOP,
                          body)
        self.assertEqual([], self.faults(instance))
        self.assertEqual(task_states.DELETING,
                         self.reload(instance).task_state)
        # The success write lost: the event it carried ends 'Error'.
        self.assertEqual([('stop', 'compute_stop_instance', 'Error')],
                         self.events(instance))

    def test_failure_after_another_took_over_keeps_their_state(self):
        instance = self.active_instance()

        def body():
            other = self.reload(instance)
            other.task_state = task_states.REBOOTING_HARD
            other.save()
            raise exception.InstancePowerOffFailure(reason='x')

        self.assertRaises(exception.InstancePowerOffFailure,
                          self.runner.run, self.context, instance, STOP,
                          body)
        self.assertEqual(task_states.REBOOTING_HARD,
                         self.reload(instance).task_state)
        self.assertEqual(1, len(self.faults(instance)))

    def test_after_success_runs_once_the_success_is_saved(self):
        instance = self.active_instance()
        seen = []
        self.runner.run(self.context, instance, STOP,
                        lambda: self.driver.power_off(instance),
                        after_success=lambda: seen.append(
                            self.reload(instance).vm_state))
        self.assertEqual([vm_states.STOPPED], seen)

    def test_the_event_ends_in_the_write_of_the_state(self):
        # The last transaction of the operation: the state's UPDATE and
        # the event's end.
        instance = self.active_instance()
        with dbf.committed_writes() as transactions:
            self.runner.run(self.context, instance, STOP,
                            lambda: self.driver.power_off(instance))
        self.assertEqual(['UPDATE instances',
                          'UPDATE instance_actions_events'],
                         transactions()[-1])
        self.assertEqual([('stop', 'compute_stop_instance', 'Success')],
                         self.events(instance))

    def test_the_event_starts_in_the_write_of_the_claim(self):
        # The action (none was started for this request), then the claim
        # with the event's start, then the success with its end: three
        # commits, and no event written on its own.
        instance = self.active_instance()
        during = []
        with dbf.committed_writes() as transactions:
            self.runner.run(self.context, instance, STOP,
                            lambda: during.append(self.events(instance)))
        self.assertEqual([['INSERT INTO instance_actions'],
                          ['UPDATE instances',
                           'INSERT INTO instance_actions_events'],
                          ['UPDATE instances',
                           'UPDATE instance_actions_events']],
                         transactions())
        # The body runs with the event started.
        self.assertEqual([[('stop', 'compute_stop_instance', None)]],
                         during)

    def test_a_claim_that_loses_still_records_its_event(self):
        # Another request stopped the instance behind this object: the
        # claim's compare-and-swap fails, its transaction (with the
        # event's start) rolls back, and the event is written whole.
        instance = self.active_instance()
        other = self.reload(instance)
        other.vm_state = vm_states.STOPPED
        other.save()
        self.assertRefusedWithItsEvent(exception.UnexpectedVMStateError,
                                       instance, STOP)
        self.assertEqual(vm_states.STOPPED, self.reload(instance).vm_state)

    def test_a_claim_whose_commit_fails_still_records_its_event(self):
        # The claim's transaction inserted the event, then its COMMIT
        # failed: nothing of it is in the database. The event must not be
        # "finished" by an UPDATE of a row that does not exist.
        instance = self.active_instance()
        dbf.fail_a_commit(self, lambda statement, parameters: (
            statement.startswith('INSERT INTO instance_actions_events')))
        self.assertRefusedWithItsEvent(sa.exc.OperationalError, instance,
                                       STOP)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))

    def test_with_more_to_do_the_event_ends_after_it(self):
        # A delete removes the row after its success is saved: its event
        # ends once that is done too.
        instance = self.active_instance()
        seen = []
        self.runner.run(self.context, instance, STOP,
                        lambda: self.driver.power_off(instance),
                        after_success=lambda: seen.append(
                            self.events(instance)))
        self.assertEqual([[('stop', 'compute_stop_instance', None)]], seen)
        self.assertEqual([('stop', 'compute_stop_instance', 'Success')],
                         self.events(instance))

    def test_a_failure_after_the_success_write_ends_the_event_in_error(self):
        instance = self.active_instance()

        def after():
            raise exception.InstancePowerOffFailure(reason='after')

        self.assertRaises(exception.InstancePowerOffFailure,
                          self.runner.run, self.context, instance, STOP,
                          lambda: self.driver.power_off(instance),
                          after_success=after)
        self.assertEqual([('stop', 'compute_stop_instance', 'Error')],
                         self.events(instance))

    def test_uses_the_action_the_api_started(self):
        from nova import objects
        instance = self.active_instance()
        objects.InstanceAction.action_start(self.context, instance.uuid,
                                            'stop')
        self.runner.run(self.context, instance, STOP,
                        lambda: self.driver.power_off(instance))
        actions = objects.InstanceAction.get_by_instance_uuid(
            self.context, instance.uuid)
        self.assertEqual(1, len(actions))


class TestCurrentPowerState(fixtures.ComputeTestCase):

    def test_no_domain_is_nostate(self):
        instance = self.new_instance()
        self.assertEqual(power_state.NOSTATE,
                         operation.current_power_state(self.driver,
                                                       instance))

    def test_running_guest(self):
        instance = self.active_instance()
        self.assertEqual(power_state.RUNNING,
                         operation.current_power_state(self.driver,
                                                       instance))

    def test_unreadable_state_keeps_the_recorded_one(self):
        instance = self.active_instance()
        instance.power_state = power_state.PAUSED

        class Broken:
            def get_info(self, instance):
                raise exception.HypervisorUnavailable(host='h')

        self.assertEqual(power_state.PAUSED,
                         operation.current_power_state(Broken(), instance))
