"""The instance lifecycle on one host, end to end.

The real ComputeManager with the FakeDriver (real instance directories and
disks under instances_path) and a real SQLite database. After every
operation the tests read back the rows (instance, faults, actions, events),
the states, the driver's domains and VIFs, and the files.
"""

import contextlib
import os
import threading

from nova.compute import instance_events
from nova.compute import manager as compute_manager
from nova.conf import host_settings
from nova import context as nova_context
from nova import exception
from nova.image import new_image
from nova.image import store as image_store
from nova.model import external_event
from nova.model import network as network_model
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.tests import base
from nova.tests.fixtures import driver_contract as contract
from nova.virt import fake

BRIDGE = 'br-int'
PORT = 'a3b0c6a2-1f0e-4b8e-9c11-5d2f7e8a9b01'


class ManagerNetworkBackend(instance_events.ComputeVirtAPI):
    """The network backend, answering a plug through the manager.

    Right after the driver plugs the VIFs it is waiting for, the event is
    sent the way the REST API sends it: ``external_instance_event`` on the
    manager of the instance's host, with the instance read from the
    database. With ``answer`` false it stays silent; ``driver_waits`` is
    set once a driver waits for an event.
    """

    def __init__(self):
        super().__init__()
        self.manager = None
        self.status = external_event.STATUS_COMPLETED
        self.answer = True
        self.driver_waits = threading.Event()

    @contextlib.contextmanager
    def wait_for_instance_event(self, instance, event_names, deadline=300,
                                error_callback=None):
        with super().wait_for_instance_event(
                instance, event_names, deadline=deadline,
                error_callback=error_callback):
            yield
            ctx = nova_context.get_admin_context()
            events = [{'instance_uuid': instance.uuid, 'name': name,
                       'tag': tag, 'status': self.status}
                      for name, tag in event_names]
            if events:
                self.driver_waits.set()
            if events and self.answer:
                self.manager.external_instance_event(
                    ctx, [objects.Instance.get_by_uuid(ctx, instance.uuid)],
                    events)


class LifecycleTestCase(base.TestCase):
    """One compute host: manager, fake driver, SQLite."""

    def setUp(self):
        super().setUp()
        self.use_database()
        self.context = nova_context.get_admin_context()
        self.settings = self.host_settings()
        self.virtapi = ManagerNetworkBackend()
        self.driver = fake.FakeDriver(self.virtapi, self.settings)
        self.manager = self.start_manager()

    def host_settings(self, **changes):
        settings = host_settings.HostSettings(
            host='compute1',
            instances_path=os.path.join(self.tmp, 'compute1', 'instances'),
            bridges=(BRIDGE,), vif_plugging_timeout=5)
        return settings.replace(**changes)

    def start_manager(self, settings=None):
        """Start (or restart) the compute service on the same hypervisor."""
        manager = compute_manager.ComputeManager(
            settings or self.settings, driver=self.driver,
            virtapi=self.virtapi)
        self.virtapi.manager = manager
        manager.init_host()
        return manager

    # -- building blocks ------------------------------------------------

    def network_info(self, active=False):
        network = network_model.Network(id='net1', label='private',
                                        bridge=BRIDGE)
        return network_model.NetworkInfo([network_model.VIF(
            id=PORT, address='fa:16:3e:11:22:33', network=network,
            active=active)])

    def new_instance(self, **fields):
        values = dict(
            user_id='alice', project_id='demo', display_name='vm',
            vm_state=vm_states.BUILDING, task_state=task_states.SCHEDULING,
            image_ref='cirros', flavor=objects.Flavor(
                flavorid='1', name='tiny', memory_mb=64, vcpus=1,
                root_gb=1))
        values.update(fields)
        return objects.Instance(self.context, **values).create()

    def request(self):
        """A new request context (its own request id, hence action)."""
        return nova_context.RequestContext(user_id='alice',
                                           project_id='demo')

    def build(self, **fields):
        instance = self.new_instance(**fields)
        self.manager.build_and_run_instance(
            self.request(), instance, image_meta={'id': 'cirros'},
            network_info=self.network_info())
        return self.reload(instance)

    def stopped(self):
        instance = self.build()
        self.manager.stop_instance(self.request(), instance)
        return self.reload(instance)

    def reload(self, instance):
        return objects.Instance.get_by_uuid(self.context, instance.uuid,
                                            read_deleted='yes')

    def instance_dir(self, instance):
        return os.path.join(self.settings.instances_path, instance.uuid)

    def files(self, instance):
        return contract.files_of(self.instance_dir(instance))

    def faults(self, instance):
        return objects.InstanceFault.get_by_instance_uuid(self.context,
                                                          instance.uuid)

    def last_event(self, instance):
        """(action, event name, result) of the newest action's last event."""
        action = objects.InstanceAction.get_by_instance_uuid(
            self.context, instance.uuid)[0]
        event = action.events[-1]
        return action.action, event.event, event.result

    # -- assertions --------------------------------------------------------

    def assertStates(self, instance, vm_state, task_state, power):
        row = self.reload(instance)
        self.assertEqual((vm_state, task_state, power),
                         (row.vm_state, row.task_state, row.power_state))
        return row

    def assertGuestRunning(self, instance):
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(instance).state)
        self.assertEqual({PORT}, self.driver.plugged_vifs(instance.uuid))
        self.assertIn('disk', self.files(instance))

    def assertNothingOnHost(self, instance):
        self.assertIsNone(self.driver.domain(instance.uuid))
        self.assertEqual(frozenset(), self.driver.plugged_vifs(instance.uuid))
        self.assertFalse(os.path.exists(self.instance_dir(instance)))

    def assertFailureRecorded(self, instance, action, event, message=None):
        self.assertEqual((action, event, 'Error'), self.last_event(instance))
        faults = self.faults(instance)
        self.assertTrue(faults, 'no fault recorded')
        self.assertEqual('compute1', faults[0].host)
        if message is not None:
            self.assertIn(message, faults[0].message)


class TestBuild(LifecycleTestCase):

    def test_build_runs_the_guest_and_records_everything(self):
        instance = self.build()

        row = self.assertStates(instance, vm_states.ACTIVE, None,
                                power_state.RUNNING)
        self.assertEqual(('compute1', 'compute1'), (row.host, row.node))
        self.assertIsNotNone(row.launched_at)
        self.assertGuestRunning(instance)
        self.assertEqual(['.nova-owner', 'disk', 'disk.info'],
                         sorted(self.files(instance)))
        self.assertEqual(('create', 'compute_build_and_run_instance',
                          'Success'), self.last_event(instance))
        self.assertEqual([], self.faults(instance))
        # The port's network-vif-plugged event came through the manager.
        self.assertTrue(all(vif.active for vif in row.network_info))

    def test_build_failure_at_each_spawn_step_leaves_host_clean(self):
        for step in ('spawn.create_disk', 'spawn.plug_vifs', 'spawn.define',
                     'spawn.start'):
            self.driver.fail_at(step)
            instance = self.new_instance()
            self.assertRaises(exception.NovaException,
                              self.manager.build_and_run_instance,
                              self.request(), instance,
                              image_meta={'id': 'cirros'},
                              network_info=self.network_info())
            row = self.assertStates(instance, vm_states.ERROR, None,
                                    power_state.NOSTATE)
            self.assertEqual('compute1', row.host)
            self.assertFailureRecorded(instance, 'create',
                                       'compute_build_and_run_instance',
                                       step)
            self.assertNothingOnHost(instance)

    def test_build_failure_on_missing_bridge_leaves_host_clean(self):
        self.driver.bridges.discard(BRIDGE)
        instance = self.new_instance()
        self.assertRaises(exception.VirtualInterfacePlugException,
                          self.manager.build_and_run_instance,
                          self.request(), instance, image_meta={},
                          network_info=self.network_info())
        self.assertStates(instance, vm_states.ERROR, None,
                          power_state.NOSTATE)
        self.assertFailureRecorded(instance, 'create',
                                   'compute_build_and_run_instance',
                                   BRIDGE)
        self.assertNothingOnHost(instance)

    def test_failed_vif_event_fails_the_build_cleanly(self):
        self.virtapi.status = external_event.STATUS_FAILED
        instance = self.new_instance()
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          self.manager.build_and_run_instance,
                          self.request(), instance, image_meta={},
                          network_info=self.network_info())
        row = self.assertStates(instance, vm_states.ERROR, None,
                                power_state.NOSTATE)
        self.assertFalse(any(vif.active for vif in row.network_info))
        self.assertNothingOnHost(instance)

    def test_failed_build_can_be_deleted(self):
        self.driver.fail_at('spawn.start')
        instance = self.new_instance()
        self.assertRaises(exception.InjectedFailure,
                          self.manager.build_and_run_instance,
                          self.request(), instance, image_meta={},
                          network_info=self.network_info())
        self.manager.terminate_instance(self.request(), self.reload(instance))
        row = self.reload(instance)
        self.assertTrue(row.deleted)
        self.assertEqual(vm_states.DELETED, row.vm_state)

    def test_build_of_an_active_instance_is_refused_and_changes_nothing(self):
        instance = self.build()
        self.assertRaises(exception.InstanceInvalidState,
                          self.manager.build_and_run_instance,
                          self.request(), instance, image_meta={})
        self.assertStates(instance, vm_states.ACTIVE, None,
                          power_state.RUNNING)
        self.assertEqual([], self.faults(instance))
        self.assertGuestRunning(instance)


class TestStartStop(LifecycleTestCase):

    def test_stop_then_start(self):
        instance = self.build()
        files = self.files(instance)

        self.manager.stop_instance(self.request(), instance)
        self.assertStates(instance, vm_states.STOPPED, None,
                          power_state.SHUTDOWN)
        self.assertEqual(('stop', 'compute_stop_instance', 'Success'),
                         self.last_event(instance))
        self.assertEqual(files, self.files(instance))

        self.manager.start_instance(self.request(), self.reload(instance))
        self.assertStates(instance, vm_states.ACTIVE, None,
                          power_state.RUNNING)
        self.assertEqual(('start', 'compute_start_instance', 'Success'),
                         self.last_event(instance))
        self.assertGuestRunning(instance)
        self.assertEqual(files, self.files(instance))

    def test_bug_1660647_failed_start_keeps_disks_and_next_start_works(self):
        # Nova bug 1660647: boot, stop, a start failing at VIF plugging,
        # then start again.
        for break_plugging in (
                lambda: self.driver.fail_at('power_on.plug_vifs'),
                lambda: self.driver.bridges.discard(BRIDGE)):
            instance = self.stopped()
            before = self.files(instance)
            break_plugging()

            self.assertRaises(exception.VirtualInterfacePlugException,
                              self.manager.start_instance, self.request(),
                              instance)

            self.assertStates(instance, vm_states.STOPPED, None,
                              power_state.SHUTDOWN)
            self.assertFailureRecorded(instance, 'start',
                                       'compute_start_instance')
            self.assertEqual(before, self.files(instance))
            self.assertEqual(frozenset(),
                             self.driver.plugged_vifs(instance.uuid))

            self.driver.bridges.add(BRIDGE)
            self.manager.start_instance(self.request(),
                                        self.reload(instance))
            self.assertStates(instance, vm_states.ACTIVE, None,
                              power_state.RUNNING)
            self.assertGuestRunning(instance)
            self.assertEqual(before, self.files(instance))

    def test_start_failure_when_guest_starts_keeps_disks(self):
        instance = self.stopped()
        before = self.files(instance)
        self.driver.fail_at('power_on')
        self.assertRaises(exception.InjectedFailure,
                          self.manager.start_instance, self.request(),
                          instance)
        self.assertStates(instance, vm_states.STOPPED, None,
                          power_state.SHUTDOWN)
        self.assertFailureRecorded(instance, 'start',
                                   'compute_start_instance', 'power_on')
        self.assertEqual(before, self.files(instance))

    def test_failed_stop_keeps_the_instance_active(self):
        instance = self.build()
        self.driver.fail_at('power_off')
        self.assertRaises(exception.InstancePowerOffFailure,
                          self.manager.stop_instance, self.request(),
                          instance)
        self.assertStates(instance, vm_states.ACTIVE, None,
                          power_state.RUNNING)
        self.assertFailureRecorded(instance, 'stop', 'compute_stop_instance')
        self.assertGuestRunning(instance)

    def test_start_of_a_running_instance_is_refused(self):
        instance = self.build()
        self.assertRaises(exception.InstanceInvalidState,
                          self.manager.start_instance, self.request(),
                          instance)
        self.assertEqual(('start', 'compute_start_instance', 'Error'),
                         self.last_event(instance))
        self.assertEqual([], self.faults(instance))
        self.assertStates(instance, vm_states.ACTIVE, None,
                          power_state.RUNNING)

    def test_start_claimed_by_the_api_runs(self):
        # The API sets the task state before casting; the manager goes on
        # from it.
        instance = self.stopped()
        instance.task_state = task_states.POWERING_ON
        instance.save(expected_task_state=[None])
        self.manager.start_instance(self.request(), instance)
        self.assertStates(instance, vm_states.ACTIVE, None,
                          power_state.RUNNING)

    def test_stale_request_loses_the_compare_and_swap(self):
        instance = self.stopped()
        stale = self.reload(instance)
        # Another request claimed it meanwhile (a reboot).
        instance.task_state = task_states.REBOOTING_HARD
        instance.save(expected_task_state=[None])

        self.assertRaises(exception.UnexpectedTaskStateError,
                          self.manager.start_instance, self.request(), stale)
        self.assertStates(instance, vm_states.STOPPED,
                          task_states.REBOOTING_HARD, power_state.SHUTDOWN)
        self.assertEqual(task_states.REBOOTING_HARD, stale.task_state)
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(instance).state)


class TestReboot(LifecycleTestCase):

    def test_soft_and_hard_reboot(self):
        instance = self.build()
        for reboot_type in ('SOFT', 'HARD'):
            self.manager.reboot_instance(self.request(),
                                         self.reload(instance),
                                         reboot_type=reboot_type)
            self.assertStates(instance, vm_states.ACTIVE, None,
                              power_state.RUNNING)
            self.assertEqual(('reboot', 'compute_reboot_instance',
                              'Success'), self.last_event(instance))
            self.assertGuestRunning(instance)

    def test_soft_reboot_that_fails_falls_back_to_hard(self):
        instance = self.build()
        self.driver.fail_at('reboot.soft')
        self.manager.reboot_instance(self.request(), instance, 'SOFT')
        self.assertStates(instance, vm_states.ACTIVE, None,
                          power_state.RUNNING)
        self.assertEqual([], self.faults(instance))

    def test_failed_hard_reboot_is_error_with_disks_kept(self):
        for step in ('reboot', 'reboot.plug_vifs'):
            instance = self.build()
            before = self.files(instance)
            self.driver.fail_at(step)
            self.assertRaises(exception.NovaException,
                              self.manager.reboot_instance, self.request(),
                              instance, 'HARD')
            self.assertStates(instance, vm_states.ERROR, None,
                              power_state.SHUTDOWN)
            self.assertFailureRecorded(instance, 'reboot',
                                       'compute_reboot_instance')
            self.assertEqual(before, self.files(instance))

            # A hard reboot is allowed from ERROR, and works.
            self.manager.reboot_instance(self.request(),
                                         self.reload(instance), 'HARD')
            self.assertStates(instance, vm_states.ACTIVE, None,
                              power_state.RUNNING)
            self.assertEqual(before, self.files(instance))

    def test_unknown_reboot_type_is_refused(self):
        instance = self.build()
        self.assertRaises(exception.InvalidInput,
                          self.manager.reboot_instance, self.request(),
                          instance, 'WARM')
        self.assertStates(instance, vm_states.ACTIVE, None,
                          power_state.RUNNING)


class TestSuspendResume(LifecycleTestCase):

    def test_suspend_then_resume(self):
        instance = self.build()
        self.manager.suspend_instance(self.request(), instance)
        self.assertStates(instance, vm_states.SUSPENDED, None,
                          power_state.SUSPENDED)
        self.assertEqual(('suspend', 'compute_suspend_instance', 'Success'),
                         self.last_event(instance))
        self.manager.resume_instance(self.request(), self.reload(instance))
        self.assertStates(instance, vm_states.ACTIVE, None,
                          power_state.RUNNING)
        self.assertGuestRunning(instance)

    def test_failed_suspend_keeps_the_instance_active(self):
        instance = self.build()
        self.driver.fail_at('suspend')
        self.assertRaises(exception.InjectedFailure,
                          self.manager.suspend_instance, self.request(),
                          instance)
        self.assertStates(instance, vm_states.ACTIVE, None,
                          power_state.RUNNING)
        self.assertFailureRecorded(instance, 'suspend',
                                   'compute_suspend_instance')

    def test_failed_resume_stays_suspended_and_resumes_later(self):
        for step in ('resume', 'resume.plug_vifs'):
            instance = self.build()
            self.manager.suspend_instance(self.request(), instance)
            before = self.files(instance)
            self.driver.fail_at(step)
            self.assertRaises(exception.NovaException,
                              self.manager.resume_instance, self.request(),
                              self.reload(instance))
            self.assertStates(instance, vm_states.SUSPENDED, None,
                              power_state.SUSPENDED)
            self.assertFailureRecorded(instance, 'resume',
                                       'compute_resume_instance')
            self.assertEqual(before, self.files(instance))
            self.manager.resume_instance(self.request(),
                                         self.reload(instance))
            self.assertStates(instance, vm_states.ACTIVE, None,
                              power_state.RUNNING)


class TestDelete(LifecycleTestCase):

    def test_delete_removes_guest_files_and_row(self):
        instance = self.build()
        self.manager.terminate_instance(self.request(), instance)
        row = self.reload(instance)
        self.assertTrue(row.deleted)
        self.assertEqual((vm_states.DELETED, None, power_state.NOSTATE),
                         (row.vm_state, row.task_state, row.power_state))
        self.assertIsNotNone(row.terminated_at)
        self.assertNothingOnHost(instance)
        self.assertEqual(('delete', 'compute_terminate_instance', 'Success'),
                         self.last_event(instance))
        self.assertRaises(exception.InstanceNotFound,
                          objects.Instance.get_by_uuid, self.context,
                          instance.uuid)

    def test_failed_delete_is_error_keeps_row_and_can_be_retried(self):
        instance = self.build()
        before = self.files(instance)
        self.driver.fail_at('destroy')
        self.assertRaises(exception.InjectedFailure,
                          self.manager.terminate_instance, self.request(),
                          instance)
        row = self.assertStates(instance, vm_states.ERROR, None,
                                power_state.RUNNING)
        self.assertFalse(row.deleted)
        self.assertFailureRecorded(instance, 'delete',
                                   'compute_terminate_instance')
        self.assertEqual(before, self.files(instance))

        self.manager.terminate_instance(self.request(), row)
        self.assertTrue(self.reload(instance).deleted)
        self.assertNothingOnHost(instance)

    def test_delete_keeps_other_instances(self):
        keep = self.build()
        files = self.files(keep)
        gone = self.build()
        self.manager.terminate_instance(self.request(), gone)
        self.assertGuestRunning(keep)
        self.assertEqual(files, self.files(keep))


class TestEvents(LifecycleTestCase):

    def test_guest_that_stops_by_itself_is_recorded(self):
        instance = self.build()
        self.driver.simulate_shutdown(instance.uuid)
        # Nobody asked nova to stop it: the instance is stopped, as
        # Nova's power sync decides (nothing else would ever say so).
        self.assertStates(instance, vm_states.STOPPED, None,
                          power_state.SHUTDOWN)

    def test_lifecycle_event_during_an_operation_is_left_to_it(self):
        instance = self.build()
        instance.task_state = task_states.POWERING_OFF
        instance.save(expected_task_state=[None])
        self.driver.simulate_shutdown(instance.uuid)
        self.assertStates(instance, vm_states.ACTIVE,
                          task_states.POWERING_OFF, power_state.RUNNING)

    def test_vif_plugged_event_marks_the_vif_active(self):
        instance = self.new_instance(network_info=self.network_info())
        self.manager.external_instance_event(
            self.context, [instance],
            [external_event.InstanceExternalEvent(
                instance.uuid, 'network-vif-plugged', PORT)])
        self.assertTrue(self.reload(instance).network_info[0].active)

    def test_failed_vif_event_leaves_the_vif_inactive(self):
        instance = self.new_instance(network_info=self.network_info())
        self.manager.external_instance_event(
            self.context, [instance],
            [{'server_uuid': instance.uuid, 'name': 'network-vif-plugged',
              'tag': PORT, 'status': 'failed'}])
        self.assertFalse(self.reload(instance).network_info[0].active)

    def test_storage_identity_is_the_drivers(self):
        self.assertEqual(self.driver.get_storage_identity(),
                         self.manager.get_storage_identity(self.context))


class TestEveryFailureStep(LifecycleTestCase):
    """A failure at each step the fake driver knows, through the manager.

    For each: the instance's state, fault and event afterwards, the files
    kept byte-for-byte (spawn: nothing left), and the same operation
    working on the next try. A new step in fake.STEPS must be added here.
    """

    def host_settings(self, **changes):
        # createImage's images go to a local image store.
        changes.setdefault('image_store_path',
                           os.path.join(self.tmp, 'images'))
        return super().host_settings(**changes)

    def suspended(self):
        instance = self.build()
        self.manager.suspend_instance(self.request(), instance)
        return self.reload(instance)

    def paused(self):
        instance = self.build()
        self.manager.pause_instance(self.request(), instance)
        return self.reload(instance)

    def queued_image(self):
        """What createImage's API part leaves: a queued image."""
        return image_store.ImageStore(
            self.settings.image_store_path).create_queued(
                new_image.NewImage(name='snap', owner='p'))

    def after_host_reboot(self):
        # Alone on the host: the restart resumes every guest, and the one
        # failure must hit this one.
        for other in objects.Instance.get_by_host(self.context, 'compute1'):
            self.manager.terminate_instance(self.request(), other)
        instance = self.build()
        self.driver.simulate_host_reboot()
        return self.reload(instance)

    def resume_on_boot(self, instance):
        # Resuming on host boot happens at a restart of the service.
        self.manager = self.start_manager(self.settings.replace(
            resume_guests_state_on_host_boot=True))

    def scenarios(self):
        m = self.manager
        build = (lambda i: m.build_and_run_instance(
            self.request(), i, image_meta={},
            network_info=self.network_info()))
        hard = (lambda i: m.reboot_instance(self.request(), i, 'HARD'))
        start = (lambda i: m.start_instance(self.request(), i))
        resume = (lambda i: m.resume_instance(self.request(), i))
        unpause = (lambda i: m.unpause_instance(self.request(), i))
        snapshot = (lambda i: m.snapshot_instance(self.request(), i,
                                                  self.queued_image()))
        # step: (prepare, operation, vm_state after the failure, action,
        #        operation that works afterwards)
        return {
            'spawn.create_disk': (self.new_instance, build, vm_states.ERROR,
                                  'create', None),
            'spawn.plug_vifs': (self.new_instance, build, vm_states.ERROR,
                                'create', None),
            'spawn.define': (self.new_instance, build, vm_states.ERROR,
                             'create', None),
            'spawn.start': (self.new_instance, build, vm_states.ERROR,
                            'create', None),
            'power_on.plug_vifs': (self.stopped, start, vm_states.STOPPED,
                                   'start', start),
            'power_on': (self.stopped, start, vm_states.STOPPED, 'start',
                         start),
            'power_off': (self.build,
                          lambda i: m.stop_instance(self.request(), i),
                          vm_states.ACTIVE, 'stop', None),
            'reboot.plug_vifs': (self.build, hard, vm_states.ERROR,
                                 'reboot', hard),
            'reboot': (self.build, hard, vm_states.ERROR, 'reboot', hard),
            'suspend': (self.build,
                        lambda i: m.suspend_instance(self.request(), i),
                        vm_states.ACTIVE, 'suspend', None),
            'snapshot': (self.build, snapshot, vm_states.ACTIVE,
                         'createImage', snapshot),
            'pause': (self.build,
                      lambda i: m.pause_instance(self.request(), i),
                      vm_states.ACTIVE, 'pause', None),
            'unpause': (self.paused, unpause, vm_states.PAUSED, 'unpause',
                        unpause),
            'resume.plug_vifs': (self.suspended, resume,
                                 vm_states.SUSPENDED, 'resume', resume),
            'resume': (self.suspended, resume, vm_states.SUSPENDED,
                       'resume', resume),
            'resume_state_on_host_boot.plug_vifs': (
                self.after_host_reboot, self.resume_on_boot,
                vm_states.ERROR, 'resume_on_host_boot', hard),
            'resume_state_on_host_boot': (
                self.after_host_reboot, self.resume_on_boot,
                vm_states.ERROR, 'resume_on_host_boot', hard),
            'destroy': (self.build,
                        lambda i: m.terminate_instance(self.request(), i),
                        vm_states.ERROR, 'delete', None),
        }

    def test_every_step_is_covered(self):
        # reboot.soft falls back to hard (no failure), init_host fails the
        # service start: both have their own tests.
        self.assertEqual(fake.STEPS - {'reboot.soft', 'init_host'},
                         set(self.scenarios()))

    def test_failure_at_each_step(self):
        for step, (prepare, op, vm_state, action, retry) in sorted(
                self.scenarios().items()):
            with self.subTest(step=step):
                instance = prepare()
                before = self.files(instance)
                self.driver.fail_at(step)
                try:
                    op(self.reload(instance))
                except exception.NovaException:
                    pass
                row = self.reload(instance)
                self.assertEqual((vm_state, None),
                                 (row.vm_state, row.task_state))
                self.assertEqual(action, self.last_event(instance)[0])
                self.assertEqual('Error', self.last_event(instance)[2])
                self.assertEqual(1, len(self.faults(instance)))
                if step.startswith('spawn.'):
                    self.assertNothingOnHost(instance)
                else:
                    self.assertEqual(before, self.files(instance))
                if retry is not None:
                    retry(self.reload(instance))
                    self.assertEqual(vm_states.ACTIVE,
                                     self.reload(instance).vm_state)
                    self.assertGuestRunning(instance)
                    self.assertEqual(before, self.files(instance))
