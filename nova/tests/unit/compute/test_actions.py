from nova.compute import actions
from nova import exception
from nova import objects
from nova.tests.fixtures import compute as fixtures


class TestActions(fixtures.ComputeTestCase):

    def test_ensure_action_starts_one_once(self):
        instance = self.new_instance()
        first = actions.ensure_action(self.context, instance, 'stop')
        again = actions.ensure_action(self.context, instance, 'stop')
        self.assertEqual(first.id, again.id)
        self.assertEqual('stop', first.action)
        self.assertEqual(self.context.request_id, first.request_id)

    def test_event_success(self):
        instance = self.new_instance()
        with actions.event(self.context, instance, 'stop',
                           'compute_stop_instance', fixtures.HOST):
            pass
        self.assertEqual([('stop', 'compute_stop_instance', 'Success')],
                         self.events(instance))

    def test_event_error_is_recorded_and_reraised(self):
        instance = self.new_instance()

        def fail():
            with actions.event(self.context, instance, 'stop',
                               'compute_stop_instance', fixtures.HOST):
                raise exception.InstancePowerOffFailure(reason='stuck')

        self.assertRaises(exception.InstancePowerOffFailure, fail)
        action = objects.InstanceAction.get_by_instance_uuid(
            self.context, instance.uuid)[0]
        event = action.events[0]
        self.assertEqual(('Error', fixtures.HOST), (event.result, event.host))
        self.assertIn('InstancePowerOffFailure', event.traceback)
        self.assertEqual('Error', action.message)

    def test_record_fault(self):
        instance = self.new_instance()
        actions.record_fault(self.context, instance,
                             exception.InjectedFailure(step='x'),
                             fixtures.HOST)
        fault = self.faults(instance)[0]
        self.assertEqual('Injected failure at step x', fault.message)
        self.assertEqual(fixtures.HOST, fault.host)

    def test_record_fault_never_raises(self):
        instance = self.new_instance()
        # A database gone away must not hide the operation's own failure.
        from nova.db import api as db_api
        db_api.configure('sqlite:///' + self.tmp + '/missing/dir/x.sqlite')
        actions.record_fault(self.context, instance,
                             exception.InjectedFailure(step='x'),
                             fixtures.HOST)
