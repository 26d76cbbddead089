"""The manager's periodic tasks: the power state sync (fake driver and
libvirt's test driver), how often they run, and the service's scheduler
running them."""

import datetime
import os
import time

from oslo_utils import timeutils
from oslo_utils import uuidutils

from nova.compute import evacuation_states
from nova.compute import locks
from nova.compute import manager as compute_manager
from nova.compute import operation
from nova.compute import periodic_tasks
from nova import context as nova_context
from nova import exception
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova import periodic
from nova.tests import base
from nova.tests.files import sha256_tree
from nova.tests.fixtures import compute as fixtures
from nova.tests.fixtures import driver_contract as contract
from nova.tests.fixtures import libvirt_host as libvirt_fixtures
from nova.virt import fake
from nova.virt import instancedir

LOGGER = 'nova.compute.periodic_tasks'


class InfoFailsDriver(fake.FakeDriver):
    """A hypervisor that cannot answer for one guest (a driver error)."""

    failing_uuid = None

    def get_info(self, instance):
        if instance.uuid == self.failing_uuid:
            raise exception.HypervisorUnavailable(host=self.settings.host)
        return super().get_info(instance)


class TestSyncPowerStates(fixtures.ComputeTestCase):

    def sync(self):
        return periodic_tasks.sync_power_states(
            self.compute, self.runner.locks, self.context)

    def test_active_guest_found_shut_off_is_reported_not_stopped(self):
        instance = self.active_instance()
        self.driver.simulate_shutdown(instance.uuid)
        files = self.files(instance)
        with self.assertLogs(LOGGER, 'WARNING') as logs:
            report = self.sync()
        self.assertEqual(([instance.uuid], [instance.uuid]),
                         (report.recorded, report.mismatched))
        self.assertEqual((vm_states.ACTIVE, None, power_state.SHUTDOWN),
                         self.states(instance))
        self.assertIn('although the instance is active', logs.output[0])
        # Nothing was done to the guest or its files.
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(instance).state)
        self.assertEqual(files, self.files(instance))
        self.assertEqual([], self.events(instance))

    def test_missing_domain_is_nostate_and_logged_nothing_created(self):
        instance = self.new_instance(vm_state=vm_states.STOPPED,
                                     power_state=power_state.SHUTDOWN)
        with self.assertLogs(LOGGER, 'WARNING') as logs:
            report = self.sync()
        self.assertEqual([instance.uuid], report.missing)
        self.assertEqual((vm_states.STOPPED, None, power_state.NOSTATE),
                         self.states(instance))
        self.assertIn('has no domain', logs.output[0])
        self.assertEqual(instance.uuid, logs.records[0].instance.uuid)
        self.assertEqual([], self.driver.list_instance_uuids())
        # Again: still logged (the anomaly persists), nothing to write.
        with self.assertLogs(LOGGER, 'WARNING'):
            report = self.sync()
        self.assertEqual(([instance.uuid], []),
                         (report.missing, report.recorded))

    def test_stopped_instance_whose_guest_runs_is_reported(self):
        instance = self.active_instance()
        instance.vm_state = vm_states.STOPPED
        instance.power_state = power_state.SHUTDOWN
        instance.save()
        with self.assertLogs(LOGGER, 'WARNING'):
            report = self.sync()
        self.assertEqual([instance.uuid], report.mismatched)
        self.assertEqual((vm_states.STOPPED, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(instance).state)

    def test_a_failed_evacuation_of_a_running_guest_is_active_again(self):
        # What an evacuation refused by the lease of the guest running
        # here leaves: ERROR on this host, the vm_state before it kept.
        taken_back = self.active_instance()
        off = self.active_instance()
        for instance in (taken_back, off):
            instance.vm_state = vm_states.ERROR
            instance.system_metadata[
                evacuation_states.OLD_VM_STATE] = vm_states.ACTIVE
            instance.save()
        self.driver.simulate_shutdown(off.uuid)
        report = self.sync()
        self.assertIn(taken_back.uuid, report.recorded)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(taken_back))
        self.assertNotIn(evacuation_states.OLD_VM_STATE,
                         self.reload(taken_back).system_metadata)
        # A guest found off proves nothing: ERROR stays.
        self.assertEqual((vm_states.ERROR, None, power_state.SHUTDOWN),
                         self.states(off))
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(taken_back).state)

    def test_in_sync_instance_is_not_written(self):
        instance = self.active_instance()
        before = self.reload(instance).updated_at
        report = self.sync()
        self.assertEqual(([], [], []), (report.recorded, report.missing,
                                        report.mismatched))
        self.assertEqual(before, self.reload(instance).updated_at)

    def test_task_in_progress_and_unclaimed_builds_are_left_alone(self):
        busy = self.active_instance()
        busy.task_state = task_states.POWERING_OFF
        busy.save()
        self.driver.simulate_shutdown(busy.uuid)
        building = self.new_instance(vm_state=vm_states.BUILDING,
                                     power_state=power_state.NOSTATE)
        report = self.sync()
        self.assertEqual(sorted([busy.uuid, building.uuid]),
                         sorted(report.skipped))
        self.assertEqual(
            (vm_states.ACTIVE, task_states.POWERING_OFF,
             power_state.RUNNING), self.states(busy))
        self.assertEqual((vm_states.BUILDING, None, power_state.NOSTATE),
                         self.states(building))

    def test_instances_of_other_hosts_are_not_looked_at(self):
        other = self.new_instance(host='compute2', node='compute2',
                                  vm_state=vm_states.ACTIVE,
                                  power_state=power_state.RUNNING)
        report = self.sync()
        self.assertNotIn(other.uuid, report.missing + report.skipped)
        self.assertEqual(power_state.RUNNING, self.states(other)[2])

    def test_one_failure_does_not_stop_the_others(self):
        driver = InfoFailsDriver(self.virtapi, self.settings)
        driver.init_host(fixtures.HOST)
        compute = operation.ComputeHost(
            host=fixtures.HOST, settings=self.settings, driver=driver,
            virtapi=self.virtapi)
        failing = self.new_instance(vm_state=vm_states.ACTIVE,
                                    power_state=power_state.RUNNING)
        gone = self.new_instance(vm_state=vm_states.ACTIVE,
                                 power_state=power_state.RUNNING)
        driver.failing_uuid = failing.uuid
        with self.assertLogs(LOGGER, 'WARNING'):
            report = periodic_tasks.sync_power_states(
                compute, locks.InstanceLocks(), self.context)
        self.assertEqual(([failing.uuid], [gone.uuid]),
                         (report.failed, report.missing))
        # The state of the one the driver could not answer for is unknown,
        # so the recorded value stays.
        self.assertEqual(power_state.RUNNING, self.states(failing)[2])
        self.assertEqual(power_state.NOSTATE, self.states(gone)[2])


class TestSyncOnLibvirt(base.TestCase):
    """The same task against libvirt's test driver: real domains."""

    def setUp(self):
        super().setUp()
        self.use_database()
        self.context = nova_context.get_admin_context()
        store = libvirt_fixtures.make_image_store(self.tmp)
        self.image = libvirt_fixtures.add_disk_image(store, self.tmp)
        self.host = libvirt_fixtures.make_host(self.tmp, 'lv1',
                                               image_store_path=store.path)
        self.addCleanup(self.host.close)
        self.compute = operation.ComputeHost(
            host='lv1', settings=self.host.settings,
            driver=self.host.driver, virtapi=self.host.virtapi)

    def running_instance(self):
        instance = objects.Instance(
            self.context, display_name='vm', host='lv1', node='lv1',
            image_ref=self.image.id, vm_state=vm_states.ACTIVE,
            power_state=power_state.RUNNING,
            flavor=objects.Flavor('1', 'm1.tiny', 64, 1, 1),
            network_info=libvirt_fixtures.make_network_info(
                port_ids=[uuidutils.generate_uuid()])).create()
        self.host.driver.spawn(self.context, instance, self.image,
                               network_info=instance.network_info)
        return instance

    def sync(self):
        return periodic_tasks.sync_power_states(
            self.compute, locks.InstanceLocks(), self.context)

    def power_state(self, instance):
        return objects.Instance.get_by_uuid(self.context,
                                            instance.uuid).power_state

    def test_guest_shut_off_then_undefined_behind_novas_back(self):
        instance = self.running_instance()
        files = contract.files_of(self.host.instance_dir(instance.uuid))
        self.assertIn('disk', [os.path.basename(f) for f in files])
        # The guest powers itself off (the hypervisor's doing, not Nova's).
        self.host.driver.host.get_guest(instance.uuid).poweroff()
        with self.assertLogs(LOGGER, 'WARNING'):
            self.sync()
        self.assertEqual(power_state.SHUTDOWN, self.power_state(instance))
        self.assertEqual(power_state.SHUTDOWN,
                         self.host.power_state(instance.uuid))
        # Someone undefines the domain: NOSTATE, and the disks stay.
        self.host.driver.host.get_guest(instance.uuid).undefine()
        with self.assertLogs(LOGGER, 'WARNING') as logs:
            report = self.sync()
        self.assertEqual([instance.uuid], report.missing)
        self.assertIn('has no domain', logs.output[0])
        self.assertEqual(power_state.NOSTATE, self.power_state(instance))
        self.assertEqual(set(), self.host.domain_uuids())
        self.assertEqual(files, contract.files_of(
            self.host.instance_dir(instance.uuid)))
        row = objects.Instance.get_by_uuid(self.context, instance.uuid)
        self.assertEqual((vm_states.ACTIVE, None, 'lv1'),
                         (row.vm_state, row.task_state, row.host))


class TestManagerTasks(fixtures.ComputeTestCase):

    def setUp(self):
        super().setUp()
        self.manager = compute_manager.ComputeManager(self.settings,
                                                      driver=self.driver)

    def spacings(self):
        return {t.name: t.spacing for t in periodic.tasks_of(self.manager)}

    def test_tasks_and_their_default_intervals(self):
        spacings = self.spacings()
        self.assertEqual(60.0, spacings['update_available_resource'])
        self.assertEqual(600.0, spacings['_sync_power_states'])

    def test_zero_means_periodic_interval_negative_disables(self):
        self.flags(update_resources_interval=0,
                   sync_power_state_interval=-1, periodic_interval=17)
        spacings = self.spacings()
        self.assertEqual(17.0, spacings['update_available_resource'])
        self.assertNotIn('_sync_power_states', spacings)

    def test_init_host_records_the_node(self):
        self.new_instance(flavor=objects.Flavor('1', 's', 512, 1, 1),
                          vm_state=vm_states.STOPPED)
        self.manager.init_host()
        (node,) = objects.ComputeNode.get_by_host(self.context,
                                                  fixtures.HOST)
        self.assertEqual((fixtures.HOST, 8, 16384, 1, 512),
                         (node.hypervisor_hostname, node.vcpus,
                          node.memory_mb, node.vcpus_used,
                          node.memory_mb_used))

    def test_the_services_scheduler_runs_both_tasks(self):
        # What nova.service.Service does with a manager's tasks, run once
        # each here instead of on their threads.
        instance = self.active_instance()
        self.driver.simulate_shutdown(instance.uuid)
        runs = []
        scheduler = periodic.PeriodicScheduler(
            periodic.tasks_of(self.manager),
            context_factory=nova_context.get_admin_context,
            on_run=lambda task, error: runs.append((task.name, error)))
        for task in scheduler.tasks:
            scheduler.run_once(task)
        self.assertEqual([('_purge_quarantine', None),
                          ('_reap_orphans', None),
                          ('_sync_power_states', None),
                          ('update_available_resource', None)], runs)
        self.assertEqual(power_state.SHUTDOWN, self.states(instance)[2])
        self.assertEqual(1, len(objects.ComputeNode.get_by_host(
            self.context, fixtures.HOST)))


class TestPurgeQuarantine(fixtures.ComputeTestCase):
    """The periodic purge of ``<instances_path>/_quarantine`` on real
    directories."""

    def quarantined(self, seconds_ago):
        idir = instancedir.InstanceDir(self.settings.instances_path,
                                       uuidutils.generate_uuid())
        idir.create()
        with open(idir.file('disk'), 'w') as f:
            f.write('disk of %s' % idir.uuid)
        return idir.quarantine('test', now=timeutils.utcnow(
            with_timezone=True) - datetime.timedelta(seconds=seconds_ago))

    def in_quarantine(self):
        return sorted(os.listdir(instancedir.quarantine_dir(
            self.settings.instances_path)))

    def test_purges_by_age_and_keeps_the_young(self):
        self.flags(quarantine_max_age=3600)
        old = self.quarantined(2 * 3600)
        young = self.quarantined(600)
        # Its files look old, but it was quarantined ten minutes ago (the
        # time in its name, written by the rename): kept.
        long_ago = time.time() - 30 * 24 * 3600
        for root, dirs, files in os.walk(young):
            for name in dirs + files:
                os.utime(os.path.join(root, name), (long_ago, long_ago))
        os.utime(young, (long_ago, long_ago))
        young_before = sha256_tree(young)
        purged = periodic_tasks.purge_quarantine(self.compute)
        self.assertEqual([old], [entry.path for entry in purged])
        self.assertFalse(os.path.exists(old))
        self.assertEqual([os.path.basename(young)], self.in_quarantine())
        self.assertEqual(young_before, sha256_tree(young))

    def test_the_managers_task_purges(self):
        self.flags(quarantine_max_age=60)
        self.quarantined(120)
        young = self.quarantined(0)
        manager = compute_manager.ComputeManager(self.settings,
                                                 driver=self.driver)
        manager._purge_quarantine(self.context)
        self.assertEqual([os.path.basename(young)], self.in_quarantine())

    def test_an_unusable_quarantine_deletes_nothing(self):
        self.flags(quarantine_max_age=0)
        self.quarantined(3600)
        root = instancedir.quarantine_dir(self.settings.instances_path)
        outside = os.path.join(self.tmp, 'outside')
        os.rename(root, outside)
        os.symlink(outside, root)
        before = sha256_tree(outside)
        with self.assertLogs(LOGGER, 'ERROR') as logs:
            self.assertEqual([], periodic_tasks.purge_quarantine(
                self.compute))
        self.assertIn('Not purging the quarantine', logs.output[0])
        self.assertEqual(before, sha256_tree(outside))
