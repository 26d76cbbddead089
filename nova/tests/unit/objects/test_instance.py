"""Instances against a real SQLite database, including the CAS race."""

import datetime
import multiprocessing
import threading

from nova import context
from nova.db import api as db_api
from nova import exception
from nova.model import network as network_model
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.objects import base as obj_base
from nova.tests import base

UTC = datetime.timezone.utc


def _flavor():
    return objects.Flavor(flavorid='1', name='m1.tiny', memory_mb=64,
                          vcpus=1, root_gb=1)


def _network_info():
    net = network_model.Network(id='net-1', label='private', bridge='br0')
    return network_model.NetworkInfo([network_model.VIF(
        id='port-1', address='fa:16:3e:00:00:01', network=net)])


def race_two_evacuations(ctx, uuid):
    """Two threads, each with its own copy of the instance, set
    task_state rebuilding expecting None at the same moment; returns the
    sorted outcomes (['lost', 'won'] when the save is a real
    compare-and-swap). The PostgreSQL integration test runs it too."""
    copies = [objects.Instance.get_by_uuid(ctx, uuid) for _ in range(2)]
    barrier = threading.Barrier(2)
    outcomes = []

    def evacuate(instance):
        instance.task_state = task_states.REBUILDING
        barrier.wait()
        try:
            instance.save(expected_task_state=[None])
            outcomes.append('won')
        except exception.UnexpectedTaskStateError:
            outcomes.append('lost')

    threads = [threading.Thread(target=evacuate, args=(c,)) for c in copies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(outcomes)


def _race_child(uuids, barrier, results):
    # One of two processes racing for the same instances.
    ctx = context.get_admin_context()
    for uuid in uuids:
        instance = objects.Instance.get_by_uuid(ctx, uuid)
        instance.task_state = task_states.REBUILDING
        barrier.wait()
        try:
            instance.save(expected_task_state=[None])
            results.put((uuid, 'won'))
        except exception.UnexpectedTaskStateError:
            results.put((uuid, 'lost'))
        except Exception as e:
            results.put((uuid, repr(e)))


class ConstructionTestCase(base.TestCase):

    def test_building_an_instance_never_touches_the_database(self):
        # An unreachable database: any access would raise.
        self.flags(connection='postgresql+psycopg2://x@127.0.0.1:1/nova',
                   group='database')
        db_api.dispose()
        self.addCleanup(db_api.dispose)
        ctx = context.get_admin_context()
        instance = objects.Instance(ctx, host='h1', flavor=_flavor(),
                                    network_info=_network_info())
        self.assertTrue(instance.uuid)
        self.assertIsNone(instance.id)
        self.assertEqual({}, instance.system_metadata)
        self.assertEqual(0, instance.power_state)
        self.assertIs(ctx, instance.context)
        self.assertEqual({'host', 'flavor', 'network_info'},
                         instance.obj_what_changed())
        copy = obj_base.obj_from_primitive(
            ctx, obj_base.obj_to_primitive(instance))
        self.assertEqual(instance.to_dict(), copy.to_dict())

    def test_two_new_instances_have_different_uuids(self):
        self.assertNotEqual(objects.Instance().uuid,
                            objects.Instance().uuid)

    def test_unknown_field_is_refused(self):
        self.assertRaises(AttributeError, objects.Instance, hots='typo')


class InstanceTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.RequestContext(user_id='u', project_id='p')

    def _create(self, **values):
        values.setdefault('host', 'h1')
        return objects.Instance(self.ctx, **values).create()

    def test_create_then_get_round_trips_every_field(self):
        launched = datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
        created = self._create(
            display_name='vm', user_id='u', project_id='p', node='n1',
            vm_state=vm_states.ACTIVE, power_state=1, flavor=_flavor(),
            image_ref='cirros', launched_at=launched,
            network_info=_network_info(), system_metadata={'k': 'v'})
        self.assertIsNotNone(created.id)
        self.assertEqual(set(), created.obj_what_changed())
        loaded = objects.Instance.get_by_uuid(self.ctx, created.uuid)
        self.assertEqual(created.to_dict(), loaded.to_dict())
        self.assertEqual(_flavor(), loaded.flavor)
        self.assertEqual(_network_info(), loaded.network_info)
        self.assertEqual(launched, loaded.launched_at)
        self.assertEqual(UTC, loaded.created_at.tzinfo)
        self.assertIs(self.ctx, loaded.context)

    def test_create_defaults_vm_state_building(self):
        self.assertEqual(vm_states.BUILDING, self._create().vm_state)

    def test_create_twice_is_refused(self):
        instance = self._create()
        self.assertRaises(exception.InternalError, instance.create)
        duplicate = objects.Instance(self.ctx, uuid=instance.uuid)
        self.assertRaises(exception.InstanceExists, duplicate.create)

    def test_create_refuses_a_bad_uuid(self):
        self.assertRaises(exception.InvalidUUID, self._create,
                          uuid='../../etc')

    def test_get_missing(self):
        self.assertRaises(exception.InstanceNotFound,
                          objects.Instance.get_by_uuid, self.ctx,
                          '00000000-0000-0000-0000-000000000000')

    def test_get_all_filters_and_hides_deleted(self):
        a = self._create(host='h1', vm_state=vm_states.ACTIVE)
        b = self._create(host='h2', vm_state=vm_states.STOPPED)
        c = self._create(host='h1', vm_state=vm_states.ERROR)
        c.destroy()

        def uuids(instances):
            return [i.uuid for i in instances]

        self.assertEqual([a.uuid, b.uuid],
                         uuids(objects.Instance.get_all(self.ctx)))
        self.assertEqual([a.uuid],
                         uuids(objects.Instance.get_by_host(self.ctx, 'h1')))
        self.assertEqual([b.uuid], uuids(objects.Instance.get_all(
            self.ctx, vm_state=[vm_states.STOPPED, vm_states.ERROR])))
        self.assertEqual([a.uuid, c.uuid], uuids(objects.Instance.get_all(
            self.ctx, host='h1', include_deleted=True)))

    def test_read_deleted(self):
        instance = self._create()
        instance.destroy()
        self.assertRaises(exception.InstanceNotFound,
                          objects.Instance.get_by_uuid, self.ctx,
                          instance.uuid)
        for read_deleted in ('yes', 'only'):
            found = objects.Instance.get_by_uuid(
                self.ctx, instance.uuid, read_deleted=read_deleted)
            self.assertTrue(found.deleted)
        self.assertRaises(exception.InvalidInput,
                          objects.Instance.get_by_uuid, self.ctx,
                          instance.uuid, read_deleted='maybe')

    def test_destroy_is_a_soft_delete(self):
        instance = self._create(task_state=task_states.DELETING)
        instance.destroy()
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid,
                                           read_deleted='yes')
        self.assertTrue(row.deleted)
        self.assertEqual(vm_states.DELETED, row.vm_state)
        self.assertIsNone(row.task_state)
        self.assertIsNotNone(row.deleted_at)
        self.assertEqual(UTC, row.deleted_at.tzinfo)

    def test_save_writes_only_changed_fields(self):
        instance = self._create(display_name='old', node='n1')
        other = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        other.node = 'n2'
        other.save()
        instance.display_name = 'new'
        instance.save()
        # The stale copy did not overwrite node; it now holds the row.
        self.assertEqual(('new', 'n2'), (instance.display_name,
                                         instance.node))
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual(('new', 'n2'), (row.display_name, row.node))

    def test_save_of_dict_changed_in_place(self):
        instance = self._create()
        instance.system_metadata['image_base'] = 'abc'
        instance.save()
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual({'image_base': 'abc'}, row.system_metadata)

    def test_save_with_expected_task_state(self):
        instance = self._create(task_state=task_states.SPAWNING)
        instance.task_state = None
        instance.vm_state = vm_states.ACTIVE
        instance.save(expected_task_state=task_states.SPAWNING)
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual((vm_states.ACTIVE, None),
                         (row.vm_state, row.task_state))

    def test_save_with_wrong_expected_task_state_changes_nothing(self):
        instance = self._create(task_state=task_states.REBOOTING)
        instance.task_state = task_states.REBUILDING
        with self.assertRaises(exception.UnexpectedTaskStateError) as ctx:
            instance.save(expected_task_state=[None, task_states.SPAWNING])
        self.assertEqual(task_states.REBOOTING, ctx.exception.kwargs[
            'actual'])
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual(task_states.REBOOTING, row.task_state)
        # The object keeps the caller's unsaved change.
        self.assertIn('task_state', instance.obj_what_changed())

    def test_save_against_deleting_raises_the_deleting_error(self):
        instance = self._create()
        deleter = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        deleter.task_state = task_states.DELETING
        deleter.save(expected_task_state=None)
        instance.task_state = task_states.POWERING_OFF
        self.assertRaises(exception.UnexpectedDeletingTaskStateError,
                          instance.save, expected_task_state=None)

    def test_save_with_expected_vm_state(self):
        instance = self._create(vm_state=vm_states.STOPPED)
        instance.task_state = task_states.POWERING_ON
        self.assertRaises(exception.UnexpectedVMStateError, instance.save,
                          expected_task_state=None,
                          expected_vm_state=vm_states.ACTIVE)
        instance.save(expected_task_state=None,
                      expected_vm_state=[vm_states.STOPPED])
        self.assertEqual(task_states.POWERING_ON, objects.Instance.get_by_uuid(
            self.ctx, instance.uuid).task_state)

    def test_save_with_expected_host(self):
        instance = self._create(vm_state=vm_states.ACTIVE)
        instance.task_state = task_states.POWERING_OFF
        with self.assertRaises(exception.InstanceNotOnThisHost) as ctx:
            instance.save(expected_task_state=None, expected_host=['h2'])
        self.assertEqual('h1', ctx.exception.kwargs['actual'])
        self.assertIsNone(objects.Instance.get_by_uuid(
            self.ctx, instance.uuid).task_state)
        instance.save(expected_task_state=None, expected_host='h1')
        self.assertEqual(task_states.POWERING_OFF,
                         objects.Instance.get_by_uuid(
                             self.ctx, instance.uuid).task_state)

    def test_expected_host_checks_the_row_before_this_save_moves_it(self):
        # A build places an unplaced instance: None matches a NULL host.
        instance = self._create(host=None)
        instance.host = 'h1'
        self.assertRaises(exception.InstanceNotOnThisHost, instance.save,
                          expected_host=['h1'])
        instance.save(expected_host=['h1', None])
        self.assertEqual('h1', objects.Instance.get_by_uuid(
            self.ctx, instance.uuid).host)

    def test_host_mismatch_is_reported_before_the_states(self):
        # The evacuation finished: other host, idle again. The stale copy
        # of the source host expects both the old host and the old states.
        instance = self._create(vm_state=vm_states.ACTIVE)
        moved = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        moved.host = 'h2'
        moved.task_state = task_states.REBUILDING
        moved.save()
        instance.power_state = 4
        self.assertRaises(exception.InstanceNotOnThisHost, instance.save,
                          expected_task_state=[None], expected_host='h1')
        # A subclass of the lost-race error: existing handlers apply.
        self.assertTrue(issubclass(exception.InstanceNotOnThisHost,
                                   exception.UnexpectedTaskStateError))
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual(('h2', 0), (row.host, row.power_state))

    def test_save_of_a_missing_instance(self):
        instance = objects.Instance(self.ctx, display_name='never created')
        self.assertRaises(exception.InstanceNotFound, instance.save)

    def test_refresh(self):
        instance = self._create()
        other = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        other.host = 'h9'
        other.save()
        instance.refresh()
        self.assertEqual('h9', instance.host)
        self.assertEqual(set(), instance.obj_what_changed())

    def test_rpc_round_trip_of_a_loaded_instance_keeps_changes(self):
        instance = self._create(flavor=_flavor(),
                                network_info=_network_info())
        instance.task_state = task_states.REBUILDING
        primitive = obj_base.obj_to_primitive(instance)
        copy = obj_base.obj_from_primitive(self.ctx, primitive)
        self.assertEqual(instance.to_dict(), copy.to_dict())
        self.assertEqual({'task_state'}, copy.obj_what_changed())
        copy.save(expected_task_state=None)
        self.assertEqual(task_states.REBUILDING,
                         objects.Instance.get_by_uuid(
                             self.ctx, instance.uuid).task_state)


class CompareAndSwapRaceTestCase(base.TestCase):
    """Two evacuations of one instance at once: exactly one wins."""

    ITERATIONS = 100

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()

    def _new_instances(self, count):
        return [objects.Instance(self.ctx, host='h1').create().uuid
                for _ in range(count)]

    def test_two_threads(self):
        for uuid in self._new_instances(self.ITERATIONS):
            self.assertEqual(['lost', 'won'],
                             race_two_evacuations(self.ctx, uuid))

    def test_evacuation_and_a_stale_claim_of_the_source_host(self):
        # The destination moves the row while the source, from a copy
        # read before, claims it: exactly one of the two saves wins, and
        # the row is never both moved and claimed by the source.
        for uuid in self._new_instances(self.ITERATIONS):
            source, dest = [objects.Instance.get_by_uuid(self.ctx, uuid)
                            for _ in range(2)]
            source.task_state = task_states.POWERING_ON
            dest.host = 'h2'
            barrier = threading.Barrier(2)
            outcomes = []

            def save(instance):
                barrier.wait()
                try:
                    instance.save(expected_task_state=[None],
                                  expected_host=['h1'])
                    outcomes.append(instance)
                except exception.UnexpectedTaskStateError:
                    pass

            threads = [threading.Thread(target=save, args=(c,))
                       for c in (source, dest)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(1, len(outcomes))
            row = objects.Instance.get_by_uuid(self.ctx, uuid)
            if outcomes[0] is source:
                self.assertEqual(('h1', task_states.POWERING_ON),
                                 (row.host, row.task_state))
            else:
                self.assertEqual(('h2', None), (row.host, row.task_state))

    def test_two_processes(self):
        # Separate processes, so separate engines and connections.
        uuids = self._new_instances(self.ITERATIONS)
        mp = multiprocessing.get_context('fork')
        barrier = mp.Barrier(2)
        results = mp.Queue()
        children = [mp.Process(target=_race_child,
                               args=(uuids, barrier, results))
                    for _ in range(2)]
        for child in children:
            child.start()
        outcomes = {}
        for _ in range(2 * len(uuids)):
            uuid, outcome = results.get(timeout=60)
            outcomes.setdefault(uuid, []).append(outcome)
        for child in children:
            child.join(60)
        self.assertEqual([0, 0], [c.exitcode for c in children])
        for uuid in uuids:
            self.assertEqual(['lost', 'won'], sorted(outcomes[uuid]))
            self.assertEqual(task_states.REBUILDING,
                             objects.Instance.get_by_uuid(
                                 self.ctx, uuid).task_state)
