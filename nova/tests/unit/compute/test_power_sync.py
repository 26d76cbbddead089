import threading

from nova.compute import evacuation_states
from nova.compute import power_sync
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova.tests.fixtures import compute as fixtures

UNKNOWN = '33333333-3333-4333-8333-333333333333'


class TestSyncPowerState(fixtures.ComputeTestCase):

    def test_records_the_drivers_power_state(self):
        instance = self.active_instance()
        self.driver.simulate_shutdown(instance.uuid)
        self.assertIsNotNone(power_sync.sync_power_state(
            self.compute, self.runner.locks, self.context, instance.uuid))
        self.assertEqual((vm_states.ACTIVE, None, power_state.SHUTDOWN),
                         self.states(instance))

    def test_unchanged_state_writes_nothing(self):
        instance = self.active_instance()
        self.assertIsNone(power_sync.sync_power_state(
            self.compute, self.runner.locks, self.context, instance.uuid))

    def test_operation_in_progress_is_left_alone(self):
        instance = self.active_instance()
        instance.task_state = task_states.POWERING_OFF
        instance.save()
        self.driver.simulate_shutdown(instance.uuid)
        self.assertIsNone(power_sync.sync_power_state(
            self.compute, self.runner.locks, self.context, instance.uuid))
        self.assertEqual(power_state.RUNNING, self.states(instance)[2])

    def test_instance_of_another_host_is_left_alone(self):
        instance = self.active_instance()
        instance.host = 'compute2'
        instance.save()
        self.driver.simulate_shutdown(instance.uuid)
        self.assertIsNone(power_sync.sync_power_state(
            self.compute, self.runner.locks, self.context, instance.uuid))
        self.assertEqual(power_state.RUNNING, self.states(instance)[2])

    def test_unknown_instance(self):
        self.assertIsNone(power_sync.sync_power_state(
            self.compute, self.runner.locks, self.context, UNKNOWN))

    def test_an_operation_holding_the_lock_is_left_alone(self):
        # The operation has already set task_state back to None but has
        # not released the lock yet: it, not the event, records the power
        # state. The handler does not wait for it either.
        instance = self.active_instance()
        self.driver.simulate_shutdown(instance.uuid)
        held, release = threading.Event(), threading.Event()

        def operation():
            with self.runner.locks.lock(instance.uuid):
                held.set()
                release.wait(10)
        thread = threading.Thread(target=operation)
        thread.start()
        self.addCleanup(thread.join, 10)
        self.addCleanup(release.set)
        self.assertTrue(held.wait(10))

        self.assertIsNone(power_sync.sync_power_state(
            self.compute, self.runner.locks, self.context, instance.uuid))
        self.assertEqual(power_state.RUNNING, self.states(instance)[2])

        release.set()
        thread.join(10)
        self.assertIsNotNone(power_sync.sync_power_state(
            self.compute, self.runner.locks, self.context, instance.uuid))
        self.assertEqual(power_state.SHUTDOWN, self.states(instance)[2])


class TestAfterAFailedEvacuation(fixtures.ComputeTestCase):
    """What an evacuation that failed (refused by the lease of the guest
    running here) leaves on its source: ERROR, the vm_state before it in
    system_metadata, the instance still on this host."""

    def left_by_failed_evacuation(self, old_vm_state=vm_states.ACTIVE):
        instance = self.active_instance()
        instance.vm_state = vm_states.ERROR
        if old_vm_state is not None:
            instance.system_metadata[
                evacuation_states.OLD_VM_STATE] = old_vm_state
        instance.save()
        return instance

    def sync(self, instance):
        return power_sync.sync_power_state(
            self.compute, self.runner.locks, self.context, instance.uuid)

    def test_its_guest_running_here_makes_it_active_again(self):
        instance = self.left_by_failed_evacuation()
        self.assertIsNotNone(self.sync(instance))
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertNotIn(evacuation_states.OLD_VM_STATE,
                         self.reload(instance).system_metadata)
        # Still its guest, untouched.
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(instance).state)

    def test_a_guest_that_is_off_keeps_it_in_error(self):
        instance = self.left_by_failed_evacuation()
        self.driver.simulate_shutdown(instance.uuid)
        self.sync(instance)
        self.assertEqual((vm_states.ERROR, None, power_state.SHUTDOWN),
                         self.states(instance))
        self.assertEqual(vm_states.ACTIVE, self.reload(
            instance).system_metadata[evacuation_states.OLD_VM_STATE])

    def test_an_error_of_another_kind_is_kept(self):
        # ERROR with no failed evacuation behind it (a failed reboot), or
        # one of a stopped instance: the running guest proves nothing.
        for old in (None, vm_states.STOPPED):
            instance = self.left_by_failed_evacuation(old)
            self.assertIsNone(self.sync(instance))
            self.assertEqual(vm_states.ERROR, self.states(instance)[0])

    def test_an_evacuation_under_way_is_left_alone(self):
        instance = self.left_by_failed_evacuation()
        instance.task_state = task_states.REBUILDING
        instance.save()
        self.assertIsNone(self.sync(instance))
        self.assertEqual((vm_states.ERROR, task_states.REBUILDING),
                         self.states(instance)[:2])

    def test_moved_away_meanwhile_is_left_alone(self):
        instance = self.left_by_failed_evacuation()
        instance.host = 'compute2'
        instance.save()
        self.assertIsNone(self.sync(instance))
        self.assertEqual(vm_states.ERROR, self.states(instance)[0])
