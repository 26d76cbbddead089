"""A compute service that starts again: init_host's reconciliation.

The hypervisor (the FakeDriver) outlives the compute service, as libvirtd
does; "a restart" is a new ComputeManager on the same driver, after the
rows were left as a crash would leave them.
"""

import os

from nova import exception
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.tests.functional import test_lifecycle
from nova.virt import fake


class _EvacuationDuringInitHost(fake.FakeDriver):
    """While init_host resumes one guest, another host's evacuation of a
    second instance completes: its row moves to compute2.

    Stands for what cannot run here (a second compute host and the
    conductor); the compute code under test is untouched.
    """

    moves = None                # {uuid resumed: uuid whose row moves}

    def resume_state_on_host_boot(self, context, instance, network_info):
        moved = (self.moves or {}).pop(instance.uuid, None)
        if moved is not None:
            row = objects.Instance.get_by_uuid(context, moved)
            row.host = row.node = 'compute2'
            row.save()
        super().resume_state_on_host_boot(context, instance, network_info)


class TestInitHost(test_lifecycle.LifecycleTestCase):

    def crashed_during(self, instance, task_state, vm_state=None):
        """Leave the row as a crash in the middle of ``task_state`` would."""
        instance = self.reload(instance)
        instance.task_state = task_state
        if vm_state is not None:
            instance.vm_state = vm_state
        instance.save()
        return instance

    def assertInterrupted(self, instance):
        faults = self.faults(instance)
        self.assertTrue(faults)
        self.assertIn('interrupted by a restart', faults[0].message)

    def test_interrupted_build_becomes_error_and_keeps_files(self):
        instance = self.build()
        files = self.files(instance)
        self.crashed_during(instance, task_states.SPAWNING,
                            vm_states.BUILDING)

        self.start_manager()

        self.assertStates(instance, vm_states.ERROR, None,
                          power_state.RUNNING)
        self.assertInterrupted(instance)
        self.assertEqual(files, self.files(instance))

    def test_interrupted_delete_is_finished(self):
        instance = self.build()
        self.crashed_during(instance, task_states.DELETING)

        self.start_manager()

        self.assertTrue(self.reload(instance).deleted)
        self.assertNothingOnHost(instance)
        self.assertEqual(('delete', 'compute_terminate_instance', 'Success'),
                         self.last_event(instance))

    def test_interrupted_stop_is_finished(self):
        instance = self.build()
        self.crashed_during(instance, task_states.POWERING_OFF)

        self.start_manager()

        self.assertStates(instance, vm_states.STOPPED, None,
                          power_state.SHUTDOWN)
        self.assertEqual([], self.faults(instance))

    def test_interrupted_start_of_a_running_guest_is_active(self):
        instance = self.build()
        self.crashed_during(instance, task_states.POWERING_ON,
                            vm_states.STOPPED)

        self.start_manager()

        self.assertStates(instance, vm_states.ACTIVE, None,
                          power_state.RUNNING)
        self.assertEqual([], self.faults(instance))

    def test_interrupted_start_of_a_stopped_guest_is_not_a_success(self):
        instance = self.stopped()
        files = self.files(instance)
        self.crashed_during(instance, task_states.POWERING_ON)

        self.start_manager()

        self.assertStates(instance, vm_states.STOPPED, None,
                          power_state.SHUTDOWN)
        self.assertInterrupted(instance)
        self.assertEqual(files, self.files(instance))
        # And it can be started now.
        self.manager.start_instance(self.request(), self.reload(instance))
        self.assertGuestRunning(instance)

    def test_interrupted_reboot_matches_the_hypervisor(self):
        instance = self.build()
        self.driver.power_off(instance)
        self.crashed_during(instance, task_states.REBOOTING_HARD)

        self.start_manager()

        self.assertStates(instance, vm_states.STOPPED, None,
                          power_state.SHUTDOWN)
        self.assertInterrupted(instance)

    def test_interrupted_resume_of_a_guest_without_domain_is_error(self):
        instance = self.build()
        self.manager.suspend_instance(self.request(), instance)
        files = self.files(instance)
        self.driver.destroy(self.context, instance, instance.network_info,
                            destroy_disks=False)
        self.crashed_during(instance, task_states.RESUMING)

        self.start_manager()

        self.assertStates(instance, vm_states.ERROR, None,
                          power_state.NOSTATE)
        self.assertInterrupted(instance)
        self.assertEqual(files, self.files(instance))

    def test_a_rebuild_cut_short_is_error_with_a_fault(self):
        # A rebuild on this host (no evacuation away is in progress):
        # nothing else will ever end it.
        instance = self.build()
        self.crashed_during(instance, task_states.REBUILD_SPAWNING)

        self.start_manager()

        self.assertStates(instance, vm_states.ERROR, None,
                          power_state.RUNNING)
        self.assertInterrupted(instance)
        self.assertIn('rebuild', self.faults(instance)[0].message)

    def test_instance_of_another_host_is_never_started(self):
        # Its domain is here (left by an evacuation away), stopped.
        instance = self.build()
        self.driver.power_off(instance)
        row = self.reload(instance)
        row.host = 'compute2'
        row.node = 'compute2'
        row.save()

        self.start_manager(self.settings.replace(
            resume_guests_state_on_host_boot=True))

        # The lifecycle event of power_off (no operation of nova's: the
        # instance was still this host's) recorded the guest as shut down
        # and the instance as stopped.
        row = self.assertStates(instance, vm_states.STOPPED, None,
                                power_state.SHUTDOWN)
        self.assertEqual('compute2', row.host)
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(instance).state)
        self.assertIn('disk', self.files(instance))

    def test_instance_evacuated_during_init_host_is_not_started(self):
        first = self.build()
        second = self.build()
        files = self.files(second)
        self.driver.simulate_host_reboot()
        # The same hypervisor, now one on which the evacuation of
        # ``second`` completes while ``first`` (listed before it) resumes.
        self.driver.__class__ = _EvacuationDuringInitHost
        self.driver.moves = {first.uuid: second.uuid}

        self.start_manager(self.settings.replace(
            resume_guests_state_on_host_boot=True))

        self.assertEqual({}, self.driver.moves)
        self.assertGuestRunning(first)
        row = self.reload(second)
        self.assertEqual(('compute2', vm_states.ACTIVE, None),
                         (row.host, row.vm_state, row.task_state))
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(second).state)
        self.assertEqual(files, self.files(second))
        self.assertEqual([], self.faults(second))

    def test_guests_resumed_on_host_boot(self):
        running = self.build()
        stopped = self.stopped()
        self.driver.simulate_host_reboot()

        self.start_manager(self.settings.replace(
            resume_guests_state_on_host_boot=True))

        self.assertStates(running, vm_states.ACTIVE, None,
                          power_state.RUNNING)
        self.assertGuestRunning(running)
        self.assertStates(stopped, vm_states.STOPPED, None,
                          power_state.SHUTDOWN)

    def test_failed_resume_on_host_boot_is_error_with_disks_kept(self):
        first = self.build()
        second = self.build()
        files = self.files(first)
        self.driver.simulate_host_reboot()
        self.driver.fail_at('resume_state_on_host_boot')

        self.start_manager(self.settings.replace(
            resume_guests_state_on_host_boot=True))

        self.assertStates(first, vm_states.ERROR, None, power_state.SHUTDOWN)
        self.assertFailureRecorded(first, 'resume_on_host_boot',
                                   'compute_resume_state_on_host_boot')
        self.assertEqual(files, self.files(first))
        # One failure does not stop the others.
        self.assertStates(second, vm_states.ACTIVE, None,
                          power_state.RUNNING)

    def test_guests_not_resumed_without_the_option(self):
        instance = self.build()
        self.driver.simulate_host_reboot()

        self.start_manager()

        self.assertStates(instance, vm_states.ACTIVE, None,
                          power_state.SHUTDOWN)
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(instance).state)

    def test_hypervisor_unavailable_fails_init_host(self):
        self.driver.fail_at('init_host')
        self.assertRaises(exception.HypervisorUnavailable,
                          self.start_manager)

    def test_a_delete_made_while_the_host_was_down_is_finished(self):
        # The API deletes the row alone while the host is down (a local
        # delete); at its start the host removes what the delete would
        # have removed (compute/pending_deletes.py), the other instance
        # untouched.
        instance, other = self.build(), self.build()
        other_files = self.files(other)
        self.reload(instance).destroy()

        self.start_manager()

        self.assertNotIn(instance.uuid, self.driver.list_instance_uuids())
        self.assertFalse(os.path.exists(self.instance_dir(instance)))
        self.assertGuestRunning(other)
        self.assertEqual(other_files, self.files(other))
