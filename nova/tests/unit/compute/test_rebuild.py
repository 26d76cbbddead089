"""Rebuild and evacuate on the target host: the real ComputeManager and
rebuild workflow on the fake driver (real files, in-memory domains) and a
real SQLite database."""

import os

from oslo_utils import uuidutils

from nova.compute import instance_events
from nova.compute import manager as compute_manager
from nova.compute import rebuild_request
from nova.conf import host_settings
from nova import exception
from nova.model import external_event
from nova.model import network as network_model
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests import base
from nova.tests.files import sha256_tree
from nova.tests.fixtures import database as dbf
from nova.tests.fixtures import libvirt_host as libvirt_fixtures
from nova.virt import fake
from nova.virt import instancedir
from nova.virt import journal
from nova.virt import ownership

BRIDGE = 'br-int'
PORT = '5d0c4b6e-3b8e-4a55-9d0f-0a7f5c1e2b3d'


class EventingVirtAPI(instance_events.ComputeVirtAPI):
    """The network backend: a network-vif-plugged event for every port a
    driver plugs (it cannot run here), with ``status``."""

    def __init__(self):
        super().__init__()
        self.status = external_event.STATUS_COMPLETED

    def wait_for_instance_event(self, instance, event_names, deadline=300,
                                error_callback=None):
        parent = super().wait_for_instance_event(
            instance, event_names, deadline=deadline,
            error_callback=error_callback)
        api = self

        class _Ctx:
            def __enter__(self):
                return parent.__enter__()

            def __exit__(self, *exc):
                if exc[0] is None:
                    for name, tag in event_names:
                        api.events.deliver(
                            external_event.InstanceExternalEvent(
                                instance.uuid, name, tag, api.status))
                return parent.__exit__(*exc)
        return _Ctx()


class LeakyDriver(fake.FakeDriver):
    """A driver whose spawn fails and leaves its guest behind, as the
    libvirt driver of the evacuation-leftovers bug did. The manager must
    clean up."""

    def spawn(self, context, instance, image_meta, network_info=None,
              power_on=True, attempt=None):
        idir = self._instance_dir(instance)
        idir.create()
        disk = idir.file(fake.DISK)
        if not os.path.exists(disk):
            with open(disk, 'wb') as f:
                f.write(b'half a disk')
        self._define(instance)
        self._plug_vifs(instance, network_model.NetworkInfo(
            network_info or ()), None)
        raise exception.InstancePowerOnFailure(reason='leaky spawn')


class RebuildTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.images = libvirt_fixtures.make_image_store(self.tmp)
        self.image = libvirt_fixtures.add_disk_image(self.images, self.tmp,
                                                     size_mb=1)
        self.network_info = network_model.NetworkInfo([network_model.VIF(
            id=PORT, address='fa:16:3e:00:00:01',
            network=network_model.Network('net', 'net', BRIDGE))])

    def make_manager(self, host, instances_path=None, driver_class=None,
                     **overrides):
        values = dict(
            host=host, bridges=(BRIDGE,), vif_plugging_timeout=2,
            instances_path=instances_path or os.path.join(self.tmp, host),
            image_store_path=self.images.path, shutdown_timeout=0)
        values.update(overrides)
        settings = host_settings.HostSettings(**values)
        driver = (driver_class or fake.FakeDriver)(EventingVirtAPI(),
                                                   settings)
        manager = compute_manager.ComputeManager(settings, driver=driver)
        # As a service starts: its row first, then init_host, which
        # records the host's storage identity in it.
        try:
            objects.Service.get_by_host_and_binary(self.ctx, host,
                                                   'nova-compute')
        except exception.ServiceNotFound:
            dbf.make_service(self.ctx, host)
        manager.init_host()
        return manager

    def setup_hosts(self, shared=False, target_driver=None):
        self.a = self.make_manager('a')
        self.b = self.make_manager(
            'b', instances_path=self.a.settings.instances_path
            if shared else None, driver_class=target_driver)
        self.service_a = objects.Service.get_by_host_and_binary(
            self.ctx, 'a', 'nova-compute')
        dbf.set_down(self.service_a)
        self.service_b = objects.Service.get_by_host_and_binary(
            self.ctx, 'b', 'nova-compute')

    def boot_on_a(self, vm_state=vm_states.ACTIVE):
        instance = dbf.make_instance(
            self.ctx, 'a', vm_state=vm_states.BUILDING,
            image_ref=self.image.id)
        objects.InstanceAction.action_start(self.ctx, instance.uuid,
                                            'create')
        self.a.build_and_run_instance(self.ctx, instance,
                                      image_meta=self.image,
                                      network_info=self.network_info)
        if vm_state == vm_states.STOPPED:
            self.a.stop_instance(self.ctx, instance)
        elif vm_state == vm_states.ERROR:
            instance.vm_state = vm_states.ERROR
            instance.save()
        return instance

    def request_evacuation(self, instance):
        """What compute.api.API.evacuate writes before casting."""
        ctx = dbf.admin_context()
        instance.task_state = task_states.REBUILDING
        instance.save(expected_task_state=[None])
        objects.InstanceAction.action_start(ctx, instance.uuid, 'evacuate')
        migration = objects.Migration(
            ctx, instance_uuid=instance.uuid, source_compute='a',
            source_node='a', migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED).create()
        return ctx, migration

    def evacuate(self, instance, on_shared_storage=None, target=None,
                 **extra):
        ctx, migration = self.request_evacuation(instance)
        target = target or self.b
        target.rebuild_instance(
            ctx, instance, request=rebuild_request.RebuildRequest(
                recreate=True, image_ref=instance.image_ref,
                on_shared_storage=on_shared_storage, migration=migration,
                **extra))
        return ctx, migration

    def fresh(self, obj):
        if isinstance(obj, objects.Migration):
            return objects.Migration.get_by_id(self.ctx, obj.id)
        return objects.Instance.get_by_uuid(self.ctx, obj.uuid)

    def last_event(self, ctx, instance):
        action = objects.InstanceAction.get_by_request_id(
            ctx, instance.uuid, ctx.request_id)
        return action.events[-1]

    def dir_on(self, manager, instance):
        return os.path.join(manager.settings.instances_path, instance.uuid)

    def assertNothingOn(self, manager, instance):
        self.assertIsNone(manager.driver.domain(instance.uuid))
        self.assertEqual(frozenset(),
                         manager.driver.plugged_vifs(instance.uuid))
        self.assertFalse(os.path.exists(self.dir_on(manager, instance)))

    def assertFailedOnSource(self, ctx, instance, migration, vm_state):
        row = self.fresh(instance)
        self.assertEqual(('a', 'a'), (row.host, row.node))
        self.assertEqual(vm_state, row.vm_state)
        self.assertIsNone(row.task_state)
        self.assertEqual(migration_obj.FAILED, self.fresh(migration).status)
        self.assertIsNotNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid))
        event = self.last_event(ctx, instance)
        self.assertEqual(('compute_rebuild_instance', 'Error', 'b'),
                         (event.event, event.result, event.host))


class TestEvacuatePrivateStorage(RebuildTestCase):

    def setUp(self):
        super().setUp()
        self.setup_hosts(shared=False)

    def test_success_moves_the_instance_and_marks_migration_done(self):
        instance = self.boot_on_a()
        source_files = sha256_tree(self.dir_on(self.a, instance))
        ctx, migration = self.evacuate(instance)
        row = self.fresh(instance)
        self.assertEqual(('b', 'b', vm_states.ACTIVE, None,
                          power_state.RUNNING),
                         (row.host, row.node, row.vm_state, row.task_state,
                          row.power_state))
        self.assertEqual(migration_obj.DONE, self.fresh(migration).status)
        self.assertEqual(power_state.RUNNING,
                         self.b.driver.domain(instance.uuid).state)
        self.assertEqual({PORT}, self.b.driver.plugged_vifs(instance.uuid))
        self.assertTrue(self.b.driver.instance_on_disk(instance))
        event = self.last_event(ctx, instance)
        self.assertEqual(('compute_rebuild_instance', 'Success'),
                         (event.event, event.result))
        # The dead source was not touched.
        self.assertEqual(source_files,
                         sha256_tree(self.dir_on(self.a, instance)))

    def test_spawn_failure_leaves_nothing_and_a_retry_works(self):
        # The evacuation-leftovers bug: B lacks the port's bridge, a real
        # plug failure.
        instance = self.boot_on_a()
        self.b.driver.bridges.discard(BRIDGE)
        with self.assertRaises(exception.VirtualInterfacePlugException):
            ctx, migration = self.evacuate(instance)
        migration = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)[-1]
        action = objects.InstanceAction.get_by_instance_uuid(
            self.ctx, instance.uuid)[0]
        ctx = dbf.admin_context()
        ctx.request_id = action.request_id
        self.assertNothingOn(self.b, instance)
        self.assertFailedOnSource(ctx, instance, migration, vm_states.ERROR)
        # Fixed: the next evacuation to B works, with no reset-state and
        # no manual cleanup (ERROR is evacuable).
        self.b.driver.bridges.add(BRIDGE)
        instance = self.fresh(instance)
        ctx, migration = self.evacuate(instance)
        row = self.fresh(instance)
        self.assertEqual(('b', vm_states.ACTIVE), (row.host, row.vm_state))
        self.assertEqual(migration_obj.DONE, self.fresh(migration).status)

    def test_failed_vif_plugged_event_is_a_failure_too(self):
        # The network backend could not bind the port on B.
        instance = self.boot_on_a()
        self.b.virtapi.status = external_event.STATUS_FAILED
        with self.assertRaises(exception.VirtualInterfaceCreateException):
            self.evacuate(instance)
        self.assertNothingOn(self.b, instance)
        self.assertEqual('a', self.fresh(instance).host)

    def make_leftover(self, instance, names, stamped_by='b'):
        """A directory of the instance on B, as an earlier attempt (or an
        old copy) left it; stamped by ``stamped_by`` on B's storage."""
        leftover = self.dir_on(self.b, instance)
        os.makedirs(leftover)
        for name in names:
            with open(os.path.join(leftover, name), 'w') as f:
                f.write('leftover')
        if stamped_by:
            ownership.write(
                instancedir.InstanceDir(self.b.settings.instances_path,
                                        instance.uuid),
                ownership.OwnerStamp.new(
                    instance.uuid, stamped_by,
                    self.b.get_storage_identity(), 'evacuation',
                    uuidutils.generate_uuid()))
        return leftover, sha256_tree(leftover)

    def quarantined(self, manager):
        return instancedir.list_quarantine(manager.settings.instances_path)[0]

    def test_leftover_of_an_earlier_attempt_is_moved_aside_whole(self):
        instance = self.boot_on_a()
        # Without a disk: every file of it goes, so the new spawn reuses
        # nothing of the earlier attempt (its ephemeral disk, kernel ...).
        leftover, before = self.make_leftover(
            instance, ('disk.eph0', 'kernel', 'disk.info'))
        bystander = os.path.join(self.b.settings.instances_path, '_base')
        os.makedirs(bystander)
        ctx, migration = self.evacuate(instance)
        self.assertEqual(migration_obj.DONE, self.fresh(migration).status)
        self.assertEqual('b', self.fresh(instance).host)
        now = sha256_tree(leftover)
        for name in ('disk.eph0', 'kernel'):
            self.assertNotIn(name, now)
        self.assertIn('disk', now)
        [moved] = self.quarantined(self.b)
        self.assertEqual(instance.uuid, moved.instance_uuid)
        kept = sha256_tree(moved.path)
        kept.pop(instancedir.QUARANTINE_REASON)
        self.assertEqual(before, kept)
        self.assertIn('leftover of an earlier attempt', moved.reason)
        self.assertTrue(os.path.isdir(bystander))

    def test_a_directory_no_attempt_here_left_is_refused_and_kept(self):
        # No stamp, or another host's: it may be the instance's own disks
        # on storage that is shared after all (a stale identity).
        for stamped_by in (None, 'a'):
            instance = self.boot_on_a()
            leftover, before = self.make_leftover(
                instance, ('disk', 'disk.info'), stamped_by=stamped_by)
            with self.assertRaises(exception.InvalidSharedStorage) as cm:
                self.evacuate(instance)
            self.assertIn(leftover, str(cm.exception))
            self.assertIn('nothing touched', str(cm.exception))
            self.assertEqual(before, sha256_tree(leftover))
            self.assertEqual([], self.quarantined(self.b))
            # Refused, it ends like every failed evacuation: ERROR on its
            # source, with a fault that says why and what unblocks it.
            row = self.fresh(instance)
            self.assertEqual(('a', vm_states.ERROR, None),
                             (row.host, row.vm_state, row.task_state))
            fault = objects.InstanceFault.get_latest_for_instance(
                self.ctx, instance.uuid)
            # What unblocks it survives the column's length.
            self.assertTrue(fault.message.startswith('Refused'),
                            fault.message)
            self.assertTrue(fault.message.endswith(
                'Move it away to evacuate here, or evacuate elsewhere.'
                if stamped_by is None else 'then evacuate again.'),
                fault.message)
            # The operator moves it away: the retry works, and brings the
            # instance back as it was before the refusal.
            os.rename(leftover, leftover + '.moved-by-operator')
            self.evacuate(self.fresh(instance))
            row = self.fresh(instance)
            self.assertEqual(('b', vm_states.ACTIVE), (row.host,
                                                       row.vm_state))

    def test_contradicting_on_shared_storage_is_refused(self):
        instance = self.boot_on_a()
        with self.assertRaises(exception.InvalidSharedStorage) as cm:
            self.evacuate(instance, on_shared_storage=True)
        self.assertIn('contradicts', str(cm.exception))
        self.assertIn(self.service_a.storage_identity, str(cm.exception))
        self.assertNothingOn(self.b, instance)
        migration = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)[-1]
        ctx = dbf.admin_context()
        ctx.request_id = objects.InstanceAction.get_by_instance_uuid(
            self.ctx, instance.uuid)[0].request_id
        # Refused before anything happened, it ends as every failed
        # evacuation does (Nova's): ERROR, with the reason in the fault.
        self.assertFailedOnSource(ctx, instance, migration, vm_states.ERROR)

    def test_missing_evidence_is_refused_unless_told(self):
        self.service_a.storage_identity = None
        self.service_a.save()
        instance = self.boot_on_a()
        with self.assertRaises(exception.InvalidSharedStorage):
            self.evacuate(instance)
        self.assertNothingOn(self.b, instance)
        self.evacuate(self.fresh(instance), on_shared_storage=False)
        self.assertEqual('b', self.fresh(instance).host)

    def test_stopped_instance_stays_stopped(self):
        instance = self.boot_on_a(vm_states.STOPPED)
        self.evacuate(instance)
        row = self.fresh(instance)
        self.assertEqual(('b', vm_states.STOPPED, power_state.SHUTDOWN),
                         (row.host, row.vm_state, row.power_state))
        self.assertEqual(power_state.SHUTDOWN,
                         self.b.driver.domain(instance.uuid).state)

    def test_error_instance_becomes_active(self):
        instance = self.boot_on_a(vm_states.ERROR)
        self.evacuate(instance)
        self.assertEqual(vm_states.ACTIVE, self.fresh(instance).vm_state)

    def test_target_state_stopped_spawns_powered_off_and_ends_stopped(self):
        # Microversion 2.95: whatever the state before, running or broken.
        for before in (vm_states.ACTIVE, vm_states.ERROR):
            with self.subTest(before=before):
                instance = self.boot_on_a(before)
                _ctx, migration = self.evacuate(
                    instance, target_state=vm_states.STOPPED)
                row = self.fresh(instance)
                self.assertEqual(
                    ('b', vm_states.STOPPED, None, power_state.SHUTDOWN),
                    (row.host, row.vm_state, row.task_state,
                     row.power_state))
                self.assertEqual(migration_obj.DONE,
                                 self.fresh(migration).status)
                self.assertEqual(power_state.SHUTDOWN,
                                 self.b.driver.domain(instance.uuid).state)

    def test_a_message_of_rpc_1_1_still_evacuates(self):
        # A conductor not upgraded yet (or capped below 1.2) sends the
        # keyword arguments of 1.1, the unread ones included.
        instance = self.boot_on_a()
        ctx, migration = self.request_evacuation(instance)
        self.b.rebuild_instance(
            ctx, instance, orig_image_ref=instance.image_ref,
            image_ref=instance.image_ref, injected_files=[], new_pass=None,
            orig_sys_metadata=dict(instance.system_metadata), bdms=None,
            recreate=True, on_shared_storage=None, preserve_ephemeral=False,
            migration=migration, scheduled_node=None,
            target_state=vm_states.STOPPED)
        row = self.fresh(instance)
        self.assertEqual(('b', vm_states.STOPPED, None),
                         (row.host, row.vm_state, row.task_state))
        self.assertEqual(migration_obj.DONE, self.fresh(migration).status)
        self.assertEqual(power_state.SHUTDOWN,
                         self.b.driver.domain(instance.uuid).state)

    def test_a_message_of_neither_form_is_refused_untouched(self):
        instance = self.boot_on_a()
        ctx, migration = self.request_evacuation(instance)
        request = rebuild_request.RebuildRequest(recreate=True,
                                                 migration=migration)
        self.assertRaises(TypeError, self.b.rebuild_instance, ctx, instance,
                          request=request, recreate=True)
        self.assertRaises(TypeError, self.b.rebuild_instance, ctx, instance,
                          recreate=True, migration=migration, colour='red')
        self.assertNothingOn(self.b, instance)
        self.assertEqual((migration_obj.ACCEPTED, task_states.REBUILDING),
                         (self.fresh(migration).status,
                          self.fresh(instance).task_state))

    def test_a_taken_migration_is_refused_without_touching_anything(self):
        instance = self.boot_on_a()
        ctx, migration = self.request_evacuation(instance)
        # Someone else ended (or holds) it: the instance is theirs to
        # update, so this host changes neither row.
        migration.status = migration_obj.FAILED
        migration.save()
        with self.assertRaises(exception.UnexpectedMigrationStatusError):
            self.b.rebuild_instance(
                ctx, instance, request=rebuild_request.RebuildRequest(
                    recreate=True, migration=migration))
        self.assertNothingOn(self.b, instance)
        self.assertEqual(task_states.REBUILDING,
                         self.fresh(instance).task_state)
        self.assertIsNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid))

    def test_evacuating_onto_its_own_host_is_refused_and_ended(self):
        instance = self.boot_on_a()
        ctx, migration = self.request_evacuation(instance)
        with self.assertRaises(exception.InvalidInput):
            self.a.rebuild_instance(
                ctx, instance, request=rebuild_request.RebuildRequest(
                    recreate=True, migration=migration))
        self.assertIsNotNone(self.a.driver.domain(instance.uuid))
        # Not stuck: the migration failed, the task is gone, the vm_state
        # is kept (nothing happened to the guest), and both say why.
        row = self.fresh(instance)
        self.assertEqual(('a', vm_states.ACTIVE, None),
                         (row.host, row.vm_state, row.task_state))
        self.assertEqual(migration_obj.FAILED, self.fresh(migration).status)
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid)
        self.assertIn('already on host a', fault.message)
        event = self.last_event(ctx, instance)
        self.assertEqual(('compute_rebuild_instance', 'Error', 'a'),
                         (event.event, event.result, event.host))

    def test_wrong_task_state_is_refused_and_the_migration_ended(self):
        instance = self.boot_on_a()
        ctx, migration = self.request_evacuation(instance)
        # An operator reset the task state before the cast arrived.
        instance.task_state = task_states.POWERING_OFF
        instance.save()
        with self.assertRaises(exception.InstanceInvalidState):
            self.b.rebuild_instance(
                ctx, instance, request=rebuild_request.RebuildRequest(
                    recreate=True, migration=migration))
        self.assertNothingOn(self.b, instance)
        self.assertEqual(migration_obj.FAILED, self.fresh(migration).status)
        row = self.fresh(instance)
        # The task state is the operator's, not ours: kept.
        self.assertEqual((vm_states.ACTIVE, task_states.POWERING_OFF),
                         (row.vm_state, row.task_state))
        self.assertIsNotNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid))
        self.assertEqual('Error', self.last_event(ctx, instance).result)

    def test_restart_of_target_ends_an_interrupted_evacuation(self):
        instance = self.boot_on_a()
        ctx, migration = self.request_evacuation(instance)
        # B claimed it and spawned, then its process died.
        migration.status = migration_obj.PRE_MIGRATING
        migration.dest_compute = 'b'
        migration.save()
        instance.task_state = task_states.REBUILD_SPAWNING
        instance.save()
        self.b.driver.spawn(ctx, instance, self.image,
                            network_info=self.network_info,
                            attempt=journal.Attempt.new(
                                journal.EVACUATION, migration.uuid))
        # The process dies: its journal stays open. A new process starts.
        self.b = self.make_manager('b')
        self.assertNothingOn(self.b, instance)
        self.assertEqual(migration_obj.FAILED, self.fresh(migration).status)
        row = self.fresh(instance)
        self.assertEqual(('a', vm_states.ERROR, None),
                         (row.host, row.vm_state, row.task_state))


class TestEvacuateSharedStorage(RebuildTestCase):

    def setUp(self):
        super().setUp()
        self.setup_hosts(shared=True)

    def test_failure_keeps_the_disks_and_the_retry_boots_from_them(self):
        instance = self.boot_on_a()
        path = self.dir_on(self.a, instance)
        before = sha256_tree(path)
        self.b.driver.bridges.discard(BRIDGE)
        with self.assertRaises(exception.VirtualInterfacePlugException):
            self.evacuate(instance)
        self.assertEqual(before, sha256_tree(path))
        self.assertIsNone(self.b.driver.domain(instance.uuid))
        self.assertEqual(frozenset(),
                         self.b.driver.plugged_vifs(instance.uuid))
        self.b.driver.bridges.add(BRIDGE)
        self.evacuate(self.fresh(instance))
        self.assertEqual('b', self.fresh(instance).host)
        self.assertEqual(before['disk'], sha256_tree(path)['disk'])

    def test_has_it_run_is_read_from_durable_facts_not_the_vm_state(self):
        # One failed evacuation leaves the instance in ERROR. Its disks
        # are gone from where both hosts look (cloned markers: the
        # identities say shared, but b's storage is not a's). The retry
        # must refuse, not build a blank disk from the image and report
        # ACTIVE while the real disks sit unused.
        instance = self.boot_on_a()
        self.b.driver.bridges.discard(BRIDGE)
        with self.assertRaises(exception.VirtualInterfacePlugException):
            self.evacuate(instance)
        self.b.driver.bridges.add(BRIDGE)
        row = self.fresh(instance)
        self.assertEqual((vm_states.ERROR, True),
                         (row.vm_state, row.disks_exist))
        os.rename(self.dir_on(self.a, instance),
                  os.path.join(self.tmp, 'the-real-disks-elsewhere'))
        with self.assertRaises(exception.InvalidSharedStorage) as cm:
            self.evacuate(row)
        self.assertIn('cloned', str(cm.exception))
        self.assertFalse(os.path.exists(self.dir_on(self.b, instance)))
        self.assertIsNone(self.b.driver.domain(instance.uuid))
        self.assertEqual('a', self.fresh(instance).host)

    def test_an_instance_that_never_had_disks_is_built_from_the_image(self):
        # Its first build failed: nothing to lose, the evacuation builds.
        instance = dbf.make_instance(
            self.ctx, 'a', vm_state=vm_states.ERROR,
            image_ref=self.image.id, network_info=self.network_info)
        self.evacuate(instance)
        row = self.fresh(instance)
        self.assertEqual(('b', vm_states.ACTIVE, True),
                         (row.host, row.vm_state, row.disks_exist))
        self.assertIsNotNone(row.launched_at)

    def test_explicit_false_contradicts_shared_evidence(self):
        instance = self.boot_on_a()
        before = sha256_tree(self.dir_on(self.a, instance))
        with self.assertRaises(exception.InvalidSharedStorage) as cm:
            self.evacuate(instance, on_shared_storage=False)
        self.assertIn('storage is shared', str(cm.exception))
        self.assertEqual(before, sha256_tree(self.dir_on(self.a, instance)))

    def test_unverifiable_false_with_shared_disks_is_refused(self):
        # The data-loss case: the source recorded no identity, so "False"
        # cannot be checked, and the instance directory B sees is the
        # instance's only copy. Trusting it would delete those disks.
        self.service_a.storage_identity = None
        self.service_a.save()
        instance = self.boot_on_a()
        path = self.dir_on(self.a, instance)
        before = sha256_tree(path)
        self.assertIn('disk', before)
        with self.assertRaises(exception.InvalidSharedStorage) as cm:
            ctx, migration = self.evacuate(instance, on_shared_storage=False)
        message = str(cm.exception)
        self.assertIn('source host a has no storage identity', message)
        self.assertIn('instance directory exists at %s' % path, message)
        self.assertEqual(before, sha256_tree(path))
        self.assertIsNone(self.b.driver.domain(instance.uuid))
        self.assertEqual(frozenset(),
                         self.b.driver.plugged_vifs(instance.uuid))
        migration = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)[-1]
        ctx = dbf.admin_context()
        ctx.request_id = objects.InstanceAction.get_by_instance_uuid(
            self.ctx, instance.uuid)[0].request_id
        self.assertFailedOnSource(ctx, instance, migration, vm_states.ERROR)

    def test_source_restart_after_success_keeps_shared_disks(self):
        instance = self.boot_on_a()
        _, migration = self.evacuate(instance)
        path = self.dir_on(self.a, instance)
        before = sha256_tree(path)
        self.a.init_host()
        self.assertIsNone(self.a.driver.domain(instance.uuid))
        self.assertEqual(before, sha256_tree(path))
        self.assertEqual(migration_obj.COMPLETED,
                         self.fresh(migration).status)
        # B's guest is untouched.
        self.assertEqual(power_state.RUNNING,
                         self.b.driver.domain(instance.uuid).state)


class TestManagerCleansUpAfterALeakyDriver(RebuildTestCase):
    """``_rebuild_default_impl``: when spawn raises during an evacuation,
    ``driver.destroy(..., destroy_disks=not on_shared_storage)``."""

    def test_private_storage_everything_goes(self):
        self.setup_hosts(shared=False, target_driver=LeakyDriver)
        instance = self.boot_on_a()
        with self.assertRaises(exception.InstancePowerOnFailure):
            self.evacuate(instance)
        self.assertNothingOn(self.b, instance)
        self.assertEqual(vm_states.ERROR, self.fresh(instance).vm_state)

    def test_shared_storage_the_disks_stay(self):
        self.setup_hosts(shared=True, target_driver=LeakyDriver)
        instance = self.boot_on_a()
        before = sha256_tree(self.dir_on(self.a, instance))
        with self.assertRaises(exception.InstancePowerOnFailure):
            self.evacuate(instance)
        self.assertIsNone(self.b.driver.domain(instance.uuid))
        self.assertEqual(frozenset(),
                         self.b.driver.plugged_vifs(instance.uuid))
        self.assertEqual(before, sha256_tree(self.dir_on(self.a, instance)))


class TestRebuildSameHost(RebuildTestCase):

    def setUp(self):
        super().setUp()
        self.setup_hosts()
        dbf.set_up(self.service_a)

    def rebuild(self, instance):
        ctx = dbf.admin_context()
        instance.task_state = task_states.REBUILDING
        instance.save(expected_task_state=[None])
        objects.InstanceAction.action_start(ctx, instance.uuid, 'rebuild')
        self.a.rebuild_instance(
            ctx, instance, request=rebuild_request.RebuildRequest(
                image_ref=self.image.id, recreate=False))
        return ctx

    def test_success_replaces_the_guest(self):
        instance = self.boot_on_a()
        disk = os.path.join(self.dir_on(self.a, instance), 'disk')
        with open(disk, 'ab') as f:
            f.write(b'user data written after boot')
        self.rebuild(instance)
        row = self.fresh(instance)
        self.assertEqual(('a', vm_states.ACTIVE, None),
                         (row.host, row.vm_state, row.task_state))
        with open(disk, 'rb') as f:
            self.assertNotIn(b'user data', f.read())
        self.assertEqual(power_state.RUNNING,
                         self.a.driver.domain(instance.uuid).state)

    def test_failure_is_error_and_the_new_disks_are_gone(self):
        instance = self.boot_on_a()
        self.a.driver.fail_at('spawn.start')
        with self.assertRaises(exception.InjectedFailure):
            self.rebuild(instance)
        row = self.fresh(instance)
        self.assertEqual(('a', vm_states.ERROR, None),
                         (row.host, row.vm_state, row.task_state))
        self.assertNothingOn(self.a, instance)

    def test_preserve_ephemeral_is_refused_before_anything_changes(self):
        instance = self.boot_on_a()
        instance.task_state = task_states.REBUILDING
        instance.save()
        objects.InstanceAction.action_start(self.ctx, instance.uuid,
                                            'rebuild')
        with self.assertRaises(exception.InvalidInput):
            self.a.rebuild_instance(
                self.ctx, instance, request=rebuild_request.RebuildRequest(
                    recreate=False, preserve_ephemeral=True))
        self.assertEqual(power_state.RUNNING,
                         self.a.driver.domain(instance.uuid).state)
