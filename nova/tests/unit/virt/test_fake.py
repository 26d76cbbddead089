"""The fake driver: the shared contract, then what only it offers."""

import itertools
import os

from nova.conf import host_settings
from nova import exception
from nova.model import network as network_model
from nova.model import power_state
from nova.tests import base
from nova.tests.fixtures import driver_contract as contract
from nova.virt import event as virtevent
from nova.virt import fake
from nova.virt import instancedir


class FakeDriverHooks:
    """The contract's hooks for ``FakeDriver``."""

    _hosts = itertools.count(1)

    def make_driver(self, instances_path=None):
        n = next(self._hosts)
        if instances_path is None:
            instances_path = os.path.join(self.tmp, 'host%d' % n,
                                          'instances')
        settings = host_settings.HostSettings(
            host='fake%d' % n, instances_path=instances_path,
            bridges=(contract.BRIDGE,), vif_plugging_timeout=5)
        return fake.FakeDriver(self.virtapi, settings), settings

    def artefacts(self, instance, driver=None):
        driver = driver or self.driver
        dom = driver.domain(instance.uuid)
        path = os.path.join(driver.settings.instances_path, instance.uuid)
        return contract.Artefacts(
            domain_defined=dom is not None,
            running=dom is not None and dom.state == power_state.RUNNING,
            vifs=driver.plugged_vifs(instance.uuid),
            instance_dir_exists=os.path.isdir(path),
            files=contract.files_of(path))

    def break_vif_plugging(self, driver=None):
        # The host loses the bridge, as with `ip link del br-contract`.
        (driver or self.driver).bridges.discard(contract.BRIDGE)

    def fix_vif_plugging(self, driver=None):
        (driver or self.driver).bridges.add(contract.BRIDGE)


class TestFakeDriverContract(FakeDriverHooks, contract.DriverContractTests,
                             base.TestCase):
    pass


class TestFakeDriverFailureInjection(FakeDriverHooks,
                                     contract.DriverContractHelpers,
                                     base.TestCase):
    """Every step fail_at knows leaves what the contract says."""

    def stopped(self):
        instance, network_info = self.booted()
        self.driver.power_off(instance)
        return instance, network_info

    def test_unknown_step_is_refused(self):
        self.assertRaises(ValueError, self.driver.fail_at, 'spawn.typo')
        self.assertRaises(ValueError, self.driver.fail_at, 'power_off',
                          times=0)

    def test_each_spawn_step_failure_leaves_nothing_and_retry_works(self):
        for step in ('spawn.create_disk', 'spawn.plug_vifs', 'spawn.define',
                     'spawn.start'):
            instance = self.make_instance()
            self.driver.fail_at(step)
            self.assertRaises(exception.NovaException, self.spawn, instance)
            self.assertNothingLeft(instance)
            self.assertEqual([], self.driver.list_instance_uuids(), step)
            network_info = self.spawn(instance)
            self.assertRunning(instance, network_info)
            self.driver.destroy(self.context, instance, network_info)

    def test_spawn_failure_removes_only_the_files_it_created(self):
        instance = self.make_instance()
        path = os.path.join(self.settings.instances_path, instance.uuid)
        os.makedirs(path)
        with open(os.path.join(path, 'disk'), 'wb') as f:
            f.write(b'existing disk')
        self.driver.fail_at('spawn.start')
        self.assertRaises(exception.InjectedFailure, self.spawn, instance)
        # disk.info was made by the attempt and removed; the disk stays.
        self.assertEqual(['disk'], sorted(os.listdir(path)))
        with open(os.path.join(path, 'disk'), 'rb') as f:
            self.assertEqual(b'existing disk', f.read())

    def test_failure_at_plugging_unplugs_what_was_plugged(self):
        instance = self.make_instance()
        self.driver.fail_at('spawn.plug_vifs')
        self.assertRaises(exception.VirtualInterfacePlugException,
                          self.spawn, instance)
        self.assertEqual(frozenset(),
                         self.driver.plugged_vifs(instance.uuid))

    def test_power_on_failures_keep_files_and_leave_guest_stopped(self):
        for step in ('power_on.plug_vifs', 'power_on'):
            instance, network_info = self.stopped()
            before = self.artefacts(instance).files
            self.driver.fail_at(step)
            self.assertRaises(exception.NovaException, self.driver.power_on,
                              self.context, instance, network_info)
            after = self.artefacts(instance)
            self.assertTrue(after.domain_defined, step)
            self.assertFalse(after.running, step)
            self.assertEqual(frozenset(), after.vifs, step)
            self.assertEqual(before, after.files, step)
            self.driver.power_on(self.context, instance, network_info)
            self.assertRunning(instance, network_info)

    def test_power_on_without_disk_fails_as_in_bug_1660647(self):
        instance, network_info = self.stopped()
        os.unlink(os.path.join(self.settings.instances_path, instance.uuid,
                               'disk'))
        self.assertRaises(exception.InstancePowerOnFailure,
                          self.driver.power_on, self.context, instance,
                          network_info)

    def test_power_off_failure_leaves_guest_running(self):
        instance, network_info = self.booted()
        self.driver.fail_at('power_off')
        self.assertRaises(exception.InstancePowerOffFailure,
                          self.driver.power_off, instance)
        self.assertRunning(instance, network_info)

    def test_soft_reboot_failure_falls_back_to_hard(self):
        instance, network_info = self.booted()
        self.driver.fail_at('reboot.soft')
        self.driver.reboot(self.context, instance, network_info, 'SOFT')
        self.assertRunning(instance, network_info)

    def test_reboot_failures_keep_files(self):
        for step, reboot_type in (('reboot', 'SOFT'), ('reboot', 'HARD'),
                                  ('reboot.plug_vifs', 'HARD')):
            instance, network_info = self.booted()
            before = self.artefacts(instance).files
            if reboot_type == 'SOFT':
                self.driver.fail_at('reboot.soft')
            self.driver.fail_at(step)
            self.assertRaises(exception.NovaException, self.driver.reboot,
                              self.context, instance, network_info,
                              reboot_type)
            after = self.artefacts(instance)
            self.assertFalse(after.running, step)
            self.assertEqual(before, after.files, step)

    def test_suspend_failure_keeps_guest_running(self):
        instance, network_info = self.booted()
        self.driver.fail_at('suspend')
        self.assertRaises(exception.InjectedFailure, self.driver.suspend,
                          self.context, instance)
        self.assertRunning(instance, network_info)

    def test_resume_failures_keep_saved_memory(self):
        for step in ('resume', 'resume.plug_vifs'):
            instance, network_info = self.booted()
            self.driver.suspend(self.context, instance)
            self.driver.fail_at(step)
            self.assertRaises(exception.NovaException, self.driver.resume,
                              self.context, instance, network_info)
            self.assertTrue(self.driver.domain(instance.uuid).saved_memory)
            self.assertEqual(power_state.SUSPENDED,
                             self.driver.get_info(instance).state)
            self.driver.resume(self.context, instance, network_info)
            self.assertRunning(instance, network_info)

    def test_resume_state_on_host_boot(self):
        instance, network_info = self.booted()
        self.driver.simulate_host_reboot()
        before = self.artefacts(instance).files
        self.driver.fail_at('resume_state_on_host_boot')
        self.assertRaises(exception.InjectedFailure,
                          self.driver.resume_state_on_host_boot,
                          self.context, instance, network_info)
        self.assertEqual(before, self.artefacts(instance).files)
        self.driver.resume_state_on_host_boot(self.context, instance,
                                              network_info)
        self.assertRunning(instance, network_info)

    def test_destroy_failure_keeps_everything(self):
        instance, network_info = self.booted()
        self.driver.fail_at('destroy')
        self.assertRaises(exception.InjectedFailure, self.driver.destroy,
                          self.context, instance, network_info)
        self.assertRunning(instance, network_info)

    def test_times_and_custom_exception(self):
        instance, network_info = self.booted()
        self.driver.fail_at('power_off', exc=RuntimeError, times=2)
        for _ in range(2):
            self.assertRaises(RuntimeError, self.driver.power_off, instance)
        self.driver.power_off(instance)

        self.driver.fail_at('init_host', times=None)
        for _ in range(3):
            self.assertRaises(exception.HypervisorUnavailable,
                              self.driver.init_host, 'h')
        self.driver.clear_failures()
        self.driver.init_host('h')

    def test_unactivated_vif_times_out_when_fatal(self):
        # No network backend answers. A timeout of 0 disables waiting, so
        # a fraction of a second keeps the test fast.
        self.virtapi.deliver = False
        driver, settings = self.make_driver()
        driver = fake.FakeDriver(self.virtapi, settings.replace(
            vif_plugging_timeout=0.05))
        instance = self.make_instance()
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          self.spawn, instance,
                          self.make_network_info(active=False), driver)
        self.assertNothingLeft(instance, driver)


class TestFakeDriverPaths(FakeDriverHooks, contract.DriverContractHelpers,
                          base.TestCase):

    def test_instance_dir_refuses_bad_uuids(self):
        root = self.settings.instances_path
        for bad in ('../etc', '', 'x' * 36, None,
                    '{12345678-1234-1234-1234-123456789abc}',
                    '12345678-1234-1234-1234-123456789ABC'):
            self.assertRaises(exception.InvalidUUID,
                              instancedir.InstanceDir, root, bad)

    def test_destroy_refuses_a_symlinked_instance_dir(self):
        instance = self.make_instance()
        other = os.path.join(self.settings.instances_path,
                             '87654321-1234-1234-1234-123456789abc')
        os.makedirs(other)
        with open(os.path.join(other, 'disk'), 'w') as f:
            f.write('keep me')
        os.symlink(other, os.path.join(self.settings.instances_path,
                                       instance.uuid))
        self.assertRaises(exception.InvalidInstancePath, self.driver.destroy,
                          None, instance, [], destroy_disks=True)
        self.assertTrue(os.path.isfile(os.path.join(other, 'disk')))

    def test_storage_identity_marker_is_at_the_root(self):
        identity = self.driver.get_storage_identity()
        marker = os.path.join(self.settings.instances_path,
                              instancedir.STORAGE_IDENTITY_FILE)
        with open(marker) as f:
            self.assertEqual(identity, f.read().strip())
        # Only the marker: no temporary files left at the root.
        self.assertEqual([instancedir.STORAGE_IDENTITY_FILE],
                         os.listdir(self.settings.instances_path))


class TestFakeDriverEvents(FakeDriverHooks, base.TestCase):

    def setUp(self):
        super().setUp()
        self.virtapi = contract.NetworkBackendVirtAPI()
        self.driver, self.settings = self.make_driver()
        self.events = []
        self.driver.register_event_listener(self.events.append)

    def test_lifecycle_events_follow_power_state(self):
        from nova import context as nova_context
        from nova import objects
        ctx = nova_context.get_admin_context()
        instance = objects.Instance(ctx, display_name='e')
        self.driver.spawn(ctx, instance, {},
                          network_info=network_model.NetworkInfo())
        self.driver.power_off(instance)
        self.driver.simulate_shutdown(instance.uuid)   # no change, no event
        self.driver.power_on(ctx, instance, network_model.NetworkInfo())
        self.driver.simulate_shutdown(instance.uuid)
        self.assertEqual(
            [virtevent.EVENT_LIFECYCLE_STARTED,
             virtevent.EVENT_LIFECYCLE_STOPPED,
             virtevent.EVENT_LIFECYCLE_STARTED,
             virtevent.EVENT_LIFECYCLE_STOPPED],
            [e.transition for e in self.events])
        self.assertEqual({instance.uuid}, {e.uuid for e in self.events})
