"""Instance faults."""

from nova import context
from nova import exception
from nova import objects
from nova.tests import base


def _raised(exc):
    try:
        raise exc
    except Exception as e:
        return e


class InstanceFaultTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()
        self.instance = objects.Instance(self.ctx, host='h1').create()

    def test_records_code_message_traceback_and_host(self):
        exc = _raised(exception.InstanceDeployFailure(reason='disk full'))
        fault = objects.InstanceFault.create(self.ctx, self.instance.uuid,
                                             exc, 'h1')
        stored = objects.InstanceFault.get_latest_for_instance(
            self.ctx, self.instance.uuid)
        self.assertEqual(fault.to_dict(), stored.to_dict())
        self.assertEqual(500, stored.code)
        self.assertEqual('Failed to deploy instance: disk full',
                         stored.message)
        self.assertIn('Traceback', stored.details)
        self.assertIn('_raised', stored.details)
        self.assertEqual('h1', stored.host)

    def test_http_code_of_project_exceptions(self):
        exc = exception.InstanceNotFound(instance_id='x')
        fault = objects.InstanceFault.create(self.ctx, self.instance.uuid,
                                             exc)
        self.assertEqual(404, fault.code)

    def test_message_of_a_plain_exception_without_text(self):
        fault = objects.InstanceFault.create(self.ctx, self.instance.uuid,
                                             _raised(OSError()), 'h1')
        self.assertEqual('OSError', fault.message)

    def test_long_message_is_cut_to_the_column(self):
        fault = objects.InstanceFault.create(
            self.ctx, self.instance.uuid, ValueError('x' * 5000))
        self.assertEqual(1024, len(fault.message))

    def test_a_long_message_keeps_its_start_and_its_end(self):
        # What happened comes first, what unblocks it last: both stay.
        text = 'Refused: ' + 'because ' * 200 + 'Force c down, then retry.'
        fault = objects.InstanceFault.create(
            self.ctx, self.instance.uuid, ValueError(text))
        self.assertEqual(1024, len(fault.message))
        self.assertTrue(fault.message.startswith('Refused: because'))
        self.assertTrue(fault.message.endswith('Force c down, then retry.'))
        self.assertIn(' ... ', fault.message)

    def test_unknown_instance(self):
        self.assertRaises(exception.InstanceNotFound,
                          objects.InstanceFault.create, self.ctx,
                          '00000000-0000-0000-0000-000000000000',
                          ValueError('x'))

    def test_newest_first(self):
        for text in ('first', 'second'):
            objects.InstanceFault.create(self.ctx, self.instance.uuid,
                                         ValueError(text))
        faults = objects.InstanceFault.get_by_instance_uuid(
            self.ctx, self.instance.uuid)
        self.assertEqual(['second', 'first'], [f.message for f in faults])
        self.assertIsNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, '00000000-0000-0000-0000-000000000000'))
