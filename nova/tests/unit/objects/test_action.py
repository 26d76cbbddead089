"""Instance actions and events."""

import sqlalchemy as sa

from nova import context
from nova.db import api as db_api
from nova.db import models
from nova import exception
from nova import objects
from nova.tests import base
from nova.tests.fixtures import database as dbf


class InstanceActionTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.RequestContext(user_id='u', project_id='p')
        self.uuid = objects.Instance(self.ctx, host='h1').create().uuid

    def test_action_start_uses_the_request_context(self):
        action = objects.InstanceAction.action_start(self.ctx, self.uuid,
                                                     'evacuate')
        found = objects.InstanceAction.get_by_request_id(
            self.ctx, self.uuid, self.ctx.request_id)
        self.assertEqual(action.to_dict(), found.to_dict())
        self.assertEqual(('evacuate', 'u', 'p'),
                         (found.action, found.user_id, found.project_id))
        self.assertIsNotNone(found.start_time)
        self.assertIsNone(found.finish_time)

    def test_action_finish(self):
        objects.InstanceAction.action_start(self.ctx, self.uuid, 'stop')
        objects.InstanceAction.action_finish(self.ctx, self.uuid)
        found = objects.InstanceAction.get_by_request_id(
            self.ctx, self.uuid, self.ctx.request_id)
        self.assertIsNotNone(found.finish_time)

    def test_list_newest_first(self):
        for name in ('create', 'stop'):
            ctx = context.RequestContext()
            objects.InstanceAction.action_start(ctx, self.uuid, name)
        actions = objects.InstanceAction.get_by_instance_uuid(self.ctx,
                                                              self.uuid)
        self.assertEqual(['stop', 'create'], [a.action for a in actions])

    def test_unknown_instance(self):
        self.assertRaises(exception.InstanceNotFound,
                          objects.InstanceAction.action_start, self.ctx,
                          '00000000-0000-0000-0000-000000000000', 'stop')

    def test_missing_action(self):
        self.assertIsNone(objects.InstanceAction.get_by_request_id(
            self.ctx, self.uuid, 'req-none'))
        self.assertRaises(exception.InstanceActionNotFound,
                          objects.InstanceActionEvent.event_start,
                          self.ctx, self.uuid, 'compute_stop', 'h1')


class InstanceActionEventTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.RequestContext(user_id='u', project_id='p')
        self.uuid = objects.Instance(self.ctx, host='h1').create().uuid
        self.action = objects.InstanceAction.action_start(
            self.ctx, self.uuid, 'start')

    def _action(self):
        return objects.InstanceAction.get_by_request_id(
            self.ctx, self.uuid, self.ctx.request_id)

    def test_record_success(self):
        with objects.InstanceActionEvent.record(self.ctx, self.uuid,
                                                'compute_start', 'h1'):
            pass
        [event] = self._action().events
        self.assertEqual(('compute_start', 'Success', 'h1'),
                         (event.event, event.result, event.host))
        self.assertIsNotNone(event.finish_time)
        self.assertIsNone(event.traceback)
        self.assertIsNone(event.user_details)
        self.assertIsNone(self._action().message)

    def test_record_failure_reraises_and_keeps_the_traceback(self):
        with self.assertRaises(exception.InstancePowerOnFailure):
            with objects.InstanceActionEvent.record(self.ctx, self.uuid,
                                                    'compute_start', 'h1'):
                raise exception.InstancePowerOnFailure(reason='no vif')
        [event] = self._action().events
        self.assertEqual('Error', event.result)
        self.assertIn('InstancePowerOnFailure', event.traceback)
        self.assertIn('no vif', event.details)
        self.assertEqual('The server could not be powered on.',
                         event.user_details)
        self.assertEqual('Error', self._action().message)

    def test_failure_of_another_library_keeps_a_generic_sentence(self):
        with self.assertRaises(OSError):
            with objects.InstanceActionEvent.record(self.ctx, self.uuid,
                                                    'compute_start', 'h1'):
                raise OSError('/srv/nova/instances on h1 is read-only')
        [event] = self._action().events
        self.assertEqual('/srv/nova/instances on h1 is read-only',
                         event.details)
        self.assertEqual(exception.GENERIC_SAFE_MESSAGE, event.user_details)

    def test_finish_the_newest_unfinished_event_of_that_name(self):
        Event = objects.InstanceActionEvent
        Event.event_start(self.ctx, self.uuid, 'a', 'h1')
        Event.event_finish(self.ctx, self.uuid, 'a')
        Event.event_start(self.ctx, self.uuid, 'a', 'h2')
        Event.event_start(self.ctx, self.uuid, 'b', 'h2')
        Event.event_finish(self.ctx, self.uuid, 'a', exc=ValueError('x'))
        events = self._action().events
        self.assertEqual([('a', 'h1', 'Success'), ('a', 'h2', 'Error'),
                          ('b', 'h2', None)],
                         [(e.event, e.host, e.result) for e in events])

    def test_finish_without_start(self):
        self.assertRaises(exception.InstanceActionEventNotFound,
                          objects.InstanceActionEvent.event_finish,
                          self.ctx, self.uuid, 'never_started')

    def test_a_deferred_start_is_written_by_the_claim_that_carries_it(self):
        instance = objects.Instance.get_by_uuid(self.ctx, self.uuid)
        with objects.InstanceActionEvent.record(
                self.ctx, self.uuid, 'compute_stop', 'h1',
                deferred=True) as event:
            self.assertFalse(event.written)
            self.assertEqual([], self._action().events)
            instance.task_state = 'powering-off'
            instance.save(expected_task_state=[None], and_event=event)
            self.assertTrue(event.written)
            self.assertEqual([('compute_stop', None)],
                             [(e.event, e.result)
                              for e in self._action().events])
        self.assertEqual([('compute_stop', 'Success')],
                         [(e.event, e.result) for e in self._action().events])

    def test_a_deferred_start_nobody_wrote_is_written_whole_at_the_end(self):
        with self.assertRaises(exception.InstancePowerOnFailure):
            with objects.InstanceActionEvent.record(
                    self.ctx, self.uuid, 'compute_start', 'h1',
                    deferred=True):
                raise exception.InstancePowerOnFailure(reason='refused')
        [event] = self._action().events
        self.assertEqual(('compute_start', 'Error', 'h1'),
                         (event.event, event.result, event.host))
        self.assertIsNotNone(event.start_time)
        self.assertIn('refused', event.details)
        self.assertEqual('Error', self._action().message)
        with objects.InstanceActionEvent.record(
                self.ctx, self.uuid, 'compute_start', 'h1', deferred=True):
            pass
        self.assertEqual(['Error', 'Success'],
                         [e.result for e in self._action().events])

    def test_the_end_of_an_event_whose_row_is_gone_fails_the_write(self):
        # The state's write carries the event's end: a row deleted under
        # it (the instance purged) fails the whole write.
        instance = objects.Instance.get_by_uuid(self.ctx, self.uuid)
        event = objects.InstanceActionEvent.event_start(
            self.ctx, self.uuid, 'compute_stop', 'h1', action=self.action)
        with db_api.session() as session:
            session.execute(sa.delete(models.InstanceActionEvent))
        instance.task_state = 'powering-off'
        self.assertRaises(exception.InstanceActionEventNotFound,
                          instance.save, and_event=event.succeeding())
        self.assertIsNone(objects.Instance.get_by_uuid(
            self.ctx, self.uuid).task_state)

    def test_an_event_whose_action_is_gone_ends_without_failing(self):
        # The instance's actions purged while the operation ran: the
        # operation's success is not turned into a failure by the record.
        with objects.InstanceActionEvent.record(self.ctx, self.uuid,
                                                'compute_stop', 'h1'):
            with db_api.session() as session:
                session.execute(sa.delete(models.InstanceActionEvent))
                session.execute(sa.delete(models.InstanceAction))
        self.assertIsNone(self._action())
        with db_api.session() as session:
            self.assertEqual([], session.execute(
                sa.select(models.InstanceActionEvent.id)).all())


class CreateWithActionTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.RequestContext(user_id='u', project_id='p')

    def test_the_action_is_written_with_the_instance(self):
        instance = objects.Instance(self.ctx, host='h1')
        action = objects.InstanceAction.starting(self.ctx, instance.uuid,
                                                 'create')
        self.assertIsNone(action.id)
        instance.create(and_action=action)
        self.assertIsNotNone(action.id)
        [found] = objects.InstanceAction.get_by_instance_uuid(
            self.ctx, instance.uuid)
        self.assertEqual(action.to_dict(), found.to_dict())
        self.assertEqual(('create', self.ctx.request_id, 'u', 'p'),
                         (found.action, found.request_id, found.user_id,
                          found.project_id))

    def test_an_instance_not_created_leaves_no_action(self):
        taken = objects.Instance(self.ctx, host='h1').create()
        again = objects.Instance(self.ctx, host='h1', uuid=taken.uuid)
        action = objects.InstanceAction.starting(self.ctx, taken.uuid,
                                                 'create')
        self.assertRaises(exception.InstanceExists, again.create,
                          and_action=action)
        # Rolled back with the instance: not written, and known unwritten.
        self.assertIsNone(action.id)
        self.assertEqual([], objects.InstanceAction.get_by_instance_uuid(
            self.ctx, taken.uuid))

    def test_a_creation_whose_commit_fails_leaves_the_action_unwritten(self):
        # The action's INSERT ran, then the COMMIT failed: the action must
        # not keep an id that no row has.
        dbf.fail_a_commit(self, lambda statement, parameters: (
            statement.startswith('INSERT INTO instance_actions')))
        instance = objects.Instance(self.ctx, host='h1')
        action = objects.InstanceAction.starting(self.ctx, instance.uuid,
                                                 'create')
        self.assertRaises(sa.exc.OperationalError, instance.create,
                          and_action=action)
        self.assertIsNone(action.id)
        self.assertIsNone(instance.id)
        self.assertEqual([], objects.Instance.get_all(self.ctx))
        instance.create(and_action=action)
        self.assertEqual(['create'], [
            a.action for a in objects.InstanceAction.get_by_instance_uuid(
                self.ctx, instance.uuid)])
