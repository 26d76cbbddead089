"""Instance actions and events."""

from nova import context
from nova import exception
from nova import objects
from nova.tests import base


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
