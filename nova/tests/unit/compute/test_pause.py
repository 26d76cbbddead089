"""Pause and unpause through the operation runner, on both drivers.

The database rows, the action events and the state the hypervisor reports
(the fake driver's domains, libvirt's test driver) are what is asserted;
so is what must survive a pause: the disks, the ports, and the paused
guest itself when the power state sync or a service restart looks at it.
"""

import dataclasses

from nova.compute import delete
from nova.compute import host_init
from nova.compute import locks
from nova.compute import operation
from nova.compute import pause
from nova.compute import periodic_tasks
from nova.compute import power_sync
from nova.compute import reboot
from nova import exception
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.tests.fixtures import compute as fixtures
from nova.tests.fixtures import libvirt_host


class PauseSteps:
    """Runs the operations as the manager does; mixed into a test case
    with ``self.runner``, ``self.compute`` and ``self.context``."""

    def run_pause(self, instance):
        self.runner.run(self.context, instance, pause.PAUSE,
                        lambda: pause.pause(self.compute, instance))

    def run_unpause(self, instance):
        self.runner.run(self.context, instance, pause.UNPAUSE,
                        lambda: pause.unpause(self.compute, instance))

    def guest_state(self, instance):
        return self.compute.driver.get_info(instance).state

    def assertPaused(self, instance):
        """The row says PAUSED and idle, and so does the hypervisor."""
        self.assertEqual((vm_states.PAUSED, None, power_state.PAUSED),
                         self.states(instance))
        self.assertEqual(power_state.PAUSED, self.guest_state(instance))

    def assertActive(self, instance):
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual(power_state.RUNNING, self.guest_state(instance))


class TestPauseOnFakeDriver(PauseSteps, fixtures.ComputeTestCase):

    def test_pause_then_unpause(self):
        instance = self.active_instance()
        files = self.files(instance)
        self.run_pause(instance)
        self.assertPaused(instance)
        self.assertEqual({fixtures.PORT},
                         self.driver.plugged_vif_ids(instance.uuid))
        self.assertEqual(files, self.files(instance))
        self.run_unpause(instance)
        self.assertActive(instance)
        # (One request context here, so both events share its action.)
        self.assertEqual(
            [('compute_pause_instance', 'Success'),
             ('compute_unpause_instance', 'Success')],
            [(event, result) for _action, event, result
             in self.events(instance)])

    def test_failed_unpause_stays_paused_and_can_be_retried(self):
        instance = self.active_instance()
        self.run_pause(instance)
        self.driver.fail_at('unpause')
        self.assertRaises(exception.InjectedFailure, self.run_unpause,
                          instance)
        self.assertPaused(instance)
        self.assertEqual(1, len(self.faults(instance)))
        self.run_unpause(instance)
        self.assertActive(instance)

    def test_failed_pause_stays_active(self):
        instance = self.active_instance()
        self.driver.fail_at('pause')
        self.assertRaises(exception.InjectedFailure, self.run_pause,
                          instance)
        self.assertActive(instance)

    def test_wrong_states_are_refused_and_change_nothing(self):
        instance = self.active_instance()
        self.assertRaises(exception.InstanceInvalidState, self.run_unpause,
                          instance)
        self.run_pause(instance)
        self.assertRaises(exception.InstanceInvalidState, self.run_pause,
                          instance)
        self.assertPaused(instance)

    def test_hard_reboot_of_a_paused_server_ends_active(self):
        instance = self.active_instance()
        self.run_pause(instance)
        self.runner.run(self.context, instance, reboot.operation_for('HARD'),
                        lambda: reboot.reboot(self.compute, self.context,
                                              instance, 'HARD'))
        self.assertActive(instance)

    def test_power_state_sync_leaves_a_paused_guest_paused(self):
        instance = self.active_instance()
        self.run_pause(instance)
        # The lifecycle event's handler and the periodic task.
        self.assertIsNone(power_sync.sync_power_state(
            self.compute, self.runner.locks, self.context, instance.uuid))
        report = periodic_tasks.sync_power_states(
            self.compute, self.runner.locks, self.context)
        self.assertEqual([], report.mismatched)
        self.assertPaused(instance)

    def test_a_paused_server_stays_paused_over_a_service_restart(self):
        # Even where guests that ran are started again at restart.
        compute = dataclasses.replace(self.compute, settings=(
            dataclasses.replace(self.settings,
                                resume_guests_state_on_host_boot=True)))
        instance = self.active_instance()
        self.run_pause(instance)
        host_init.init_instances(compute, self.runner,
                                 [self.reload(instance)])
        self.assertPaused(instance)
        self.assertEqual([], self.faults(instance))

    def test_restart_ends_a_pause_it_cut_short_as_the_guest_shows(self):
        paused = self.active_instance()
        self.driver.pause(paused)
        cut_short = self.active_instance()
        for instance in (paused, cut_short):
            instance.task_state = task_states.PAUSING
            instance.save()
        host_init.init_instances(self.compute, self.runner,
                                 [self.reload(paused),
                                  self.reload(cut_short)])
        # The guest did pause: the pause is done, no fault.
        self.assertPaused(paused)
        self.assertEqual([], self.faults(paused))
        # It did not: ACTIVE, with a fault saying the pause was cut short.
        self.assertActive(cut_short)
        self.assertEqual(1, len(self.faults(cut_short)))


class TestPauseOnLibvirt(PauseSteps, fixtures.ComputeTestCase):
    """The same workflow on libvirt's test driver: the domain state is
    what libvirt reports (virDomainSuspend/virDomainResume)."""

    def setUp(self):
        super().setUp()
        store = libvirt_host.make_image_store(self.tmp)
        self.image = libvirt_host.add_disk_image(store, self.tmp)
        self.host = libvirt_host.make_host(
            self.tmp, fixtures.HOST, image_store_path=store.path,
            bridges=(fixtures.BRIDGE,), virtapi=self.virtapi,
            instances_path=self.settings.instances_path + '-libvirt')
        self.addCleanup(self.host.close)
        self.driver = self.host.driver
        self.compute = operation.ComputeHost(
            host=fixtures.HOST, settings=self.host.settings,
            driver=self.driver, virtapi=self.virtapi)
        self.runner = operation.Runner(self.compute, locks.InstanceLocks())

    def active_instance(self):
        return super().active_instance(
            self.image, image_ref=self.image.id,
            flavor=objects.Flavor(flavorid='1', name='m1.tiny',
                                  memory_mb=64, vcpus=1, root_gb=1))

    def files(self, instance):
        return libvirt_host.contract.files_of(
            self.host.instance_dir(instance.uuid))

    def test_pause_then_unpause(self):
        instance = self.active_instance()
        files = self.files(instance)
        self.run_pause(instance)
        self.assertPaused(instance)
        # Still a live QEMU holding its disks, as libvirt tells it.
        self.assertTrue(self.driver.host.get_guest(instance.uuid)
                        .is_active())
        self.assertEqual(files, self.files(instance))
        self.assertEqual({fixtures.PORT}, self.host.plugged_vifs())
        self.run_unpause(instance)
        self.assertActive(instance)

    def test_unpause_of_a_guest_libvirt_shows_running_fails(self):
        # The row says PAUSED but the guest runs (someone resumed it with
        # virsh): the driver refuses, the instance stays PAUSED with the
        # power state libvirt reports, and a fault says why.
        instance = self.active_instance()
        instance.vm_state = vm_states.PAUSED
        instance.save()
        self.assertRaises(exception.InstanceUnpauseFailure,
                          self.run_unpause, instance)
        self.assertEqual((vm_states.PAUSED, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual(1, len(self.faults(instance)))

    def test_power_state_sync_and_restart_leave_a_paused_guest_paused(self):
        instance = self.active_instance()
        self.run_pause(instance)
        periodic_tasks.sync_power_states(self.compute, self.runner.locks,
                                         self.context)
        host_init.init_instances(self.compute, self.runner,
                                 [self.reload(instance)])
        self.assertPaused(instance)

    def test_delete_of_a_paused_server_removes_its_guest_and_files(self):
        instance = self.active_instance()
        other = self.active_instance()
        self.run_pause(instance)
        delete.terminate(self.runner, self.compute, self.context, instance)
        self.assertEqual({other.uuid}, self.host.domain_uuids())
        self.assertEqual({}, self.files(instance))
        self.assertTrue(self.reload(instance).deleted)
        self.assertTrue(self.host.is_running(other.uuid))

    def test_a_paused_stale_guest_is_stopped_at_once(self):
        # The evacuation fencing and the reaper stop a stale guest with
        # stop_guest_now: a paused one still holds its disks open, so it
        # must be powered off too, and its disks kept.
        instance = self.active_instance()
        files = self.files(instance)
        self.run_pause(instance)
        self.driver.stop_guest_now(instance)
        self.assertEqual(power_state.SHUTDOWN,
                         self.host.power_state(instance.uuid))
        self.assertEqual(files, self.files(instance))
