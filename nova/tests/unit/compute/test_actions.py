from nova.compute import actions
from nova.db import api as db_api
from nova import exception
from nova import objects
from nova.tests.fixtures import compute as fixtures


class TestActions(fixtures.ComputeTestCase):

    def test_ensure_action_starts_one_once(self):
        instance = self.new_instance()
        first = actions.ensure_action(self.context, instance, 'stop')
        again = actions.ensure_action(self.context, instance, 'stop')
        self.assertEqual(first.id, again.id)
        self.assertEqual([first.id], [
            a.id for a in objects.InstanceAction.get_by_instance_uuid(
                self.context, instance.uuid)])
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

    def _lose_the_database(self):
        """Point the DB API at a file SQLite cannot create; return a
        function that points it back at the test's database."""
        url = db_api.get_engine().url.render_as_string(hide_password=False)
        db_api.configure('sqlite:///' + self.tmp + '/missing/dir/x.sqlite')
        return lambda: db_api.configure(url)

    def test_record_fault_never_raises(self):
        """A database gone away must not hide the operation's own failure:
        the fault is not written, and that is logged with the fault it
        was about and the database's error."""
        instance = self.new_instance()
        restore = self._lose_the_database()
        with self.assertLogs('nova.compute.actions', 'ERROR') as logs:
            actions.record_fault(self.context, instance,
                                 exception.InjectedFailure(step='x'),
                                 fixtures.HOST)
        restore()
        [record] = logs.records
        self.assertEqual('ERROR', record.levelname)
        self.assertIn('Could not record the fault Injected failure at '
                      'step x', record.getMessage())
        self.assertIn('unable to open database file',
                      str(record.exc_info[1]))
        self.assertEqual([], self.faults(instance))

    def test_event_error_survives_a_failed_record(self):
        """The operation's own exception goes on when its event cannot be
        finished; the failure to record is logged, and the event stays
        as it was started (no result)."""
        instance = self.new_instance()
        restore = []

        def fail():
            with actions.event(self.context, instance, 'stop',
                               'compute_stop_instance', fixtures.HOST):
                restore.append(self._lose_the_database())
                raise exception.InstancePowerOffFailure(reason='stuck')

        with self.assertLogs('nova.objects.action', 'ERROR') as logs:
            self.assertRaises(exception.InstancePowerOffFailure, fail)
        restore[0]()
        [record] = logs.records
        self.assertIn('Could not record the failure of event '
                      'compute_stop_instance', record.getMessage())
        self.assertIn('unable to open database file',
                      str(record.exc_info[1]))
        self.assertEqual([('stop', 'compute_stop_instance', None)],
                         self.events(instance))
        action = objects.InstanceAction.get_by_instance_uuid(
            self.context, instance.uuid)[0]
        self.assertIsNone(action.message)
