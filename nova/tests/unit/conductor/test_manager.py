"""The conductor's endpoints on a real SQLite database.

The compute hosts the conductor casts to are not part of these tests: a
recorder stands in for the compute RPC client (the functional tests run
real hosts).
"""

import threading
import time

from nova.conductor import manager as conductor_manager
from nova import exception
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf
from nova.tests.unit.compute import test_api


class PeakRecorder(test_api.Recorder):
    """Also counts how many casts run at once."""

    def __init__(self):
        super().__init__()
        self._lock = threading.Lock()
        self.active = 0
        self.peak = 0

    def rebuild_instance(self, ctxt, instance, **kwargs):
        with self._lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        # Give other workers the chance to overlap (not a timing check).
        time.sleep(0.01)
        with self._lock:
            self.active -= 1
            self.calls.append(('rebuild_instance', (instance,), kwargs))


class ConductorTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.compute = PeakRecorder()
        self.conductor = conductor_manager.ConductorManager(self.compute)
        self.source = dbf.make_service(self.ctx, 'a', up=False)
        self.target = dbf.make_service(self.ctx, 'b')

    def requested(self, instance, dest=None):
        """What the API leaves for the conductor."""
        instance.task_state = task_states.REBUILDING
        instance.save()
        objects.InstanceAction.action_start(self.ctx, instance.uuid,
                                            'evacuate')
        return objects.Migration(
            self.ctx, instance_uuid=instance.uuid, source_compute='a',
            dest_compute=dest, migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED).create()

    def event(self, instance):
        action = objects.InstanceAction.get_by_request_id(
            self.ctx, instance.uuid, self.ctx.request_id)
        return action.events[-1]


class TestEvacuateInstance(ConductorTestCase):

    def test_chooses_claims_and_casts_rebuild_to_the_target(self):
        instance = dbf.make_instance(self.ctx, 'a')
        migration = self.requested(instance)
        self.assertEqual('b', self.conductor.evacuate_instance(
            self.ctx, instance, migration, on_shared_storage=None))
        self.assertEqual('b', objects.Migration.get_by_id(
            self.ctx, migration.id).dest_compute)
        name, args, kwargs = self.compute.calls[0]
        self.assertEqual('rebuild_instance', name)
        request = kwargs['request']
        self.assertEqual(('b', True, None, migration.id),
                         (kwargs['host'], request.recreate,
                          request.on_shared_storage,
                          request.migration.id))
        event = self.event(instance)
        self.assertEqual(('conductor_rebuild_server', 'Success'),
                         (event.event, event.result))

    def test_target_state_is_passed_on_to_the_target(self):
        instance = dbf.make_instance(self.ctx, 'a')
        migration = self.requested(instance)
        self.conductor.evacuate_instance(self.ctx, instance, migration,
                                         target_state=vm_states.STOPPED)
        _name, _args, kwargs = self.compute.calls[0]
        self.assertEqual(vm_states.STOPPED, kwargs['request'].target_state)
        # Without one (microversion 2.94 and below): None, the old end.
        instance = dbf.make_instance(self.ctx, 'a')
        self.conductor.evacuate_instance(self.ctx, instance,
                                         self.requested(instance))
        _name, _args, kwargs = self.compute.calls[1]
        self.assertIsNone(kwargs['request'].target_state)

    def test_no_target_ends_the_evacuation_with_vm_state_kept(self):
        dbf.set_down(self.target)
        instance = dbf.make_instance(self.ctx, 'a', vm_state=vm_states.STOPPED)
        migration = self.requested(instance)
        with self.assertRaises(exception.NoValidHost):
            self.conductor.evacuate_instance(self.ctx, instance, migration)
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual(('a', vm_states.STOPPED, None),
                         (row.host, row.vm_state, row.task_state))
        self.assertEqual(migration_obj.FAILED, objects.Migration.get_by_id(
            self.ctx, migration.id).status)
        self.assertIn('No valid host', objects.InstanceFault.
                      get_latest_for_instance(self.ctx,
                                              instance.uuid).message)
        self.assertEqual('Error', self.event(instance).result)
        self.assertEqual([], self.compute.calls)

    def test_failed_cast_ends_an_unclaimed_evacuation(self):
        self.compute.rebuild_instance = self.failing_cast
        instance = dbf.make_instance(self.ctx, 'a')
        migration = self.requested(instance)
        with self.assertRaises(RuntimeError):
            self.conductor.evacuate_instance(self.ctx, instance, migration)
        self.assertEqual(migration_obj.FAILED, objects.Migration.get_by_id(
            self.ctx, migration.id).status)
        self.assertIsNone(objects.Instance.get_by_uuid(
            self.ctx, instance.uuid).task_state)

    @staticmethod
    def failing_cast(ctxt, instance, **kwargs):
        raise RuntimeError('no route to the target')
