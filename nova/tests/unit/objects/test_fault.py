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

    def stored(self):
        return objects.InstanceFault.get_latest_for_instance(
            self.ctx, self.instance.uuid)

    def test_records_code_message_traceback_and_host(self):
        exc = _raised(exception.InstancePowerOnFailure(reason='disk full'))
        fault = objects.InstanceFault.create(self.ctx, self.instance.uuid,
                                             exc, 'h1')
        stored = self.stored()
        self.assertEqual(fault.to_dict(), stored.to_dict())
        self.assertEqual(500, stored.code)
        self.assertEqual('Failed to power on instance: disk full',
                         stored.message)
        self.assertEqual('The server could not be powered on.',
                         stored.user_message)
        self.assertIn('Traceback', stored.details)
        self.assertIn('_raised', stored.details)
        self.assertEqual('h1', stored.host)

    def test_a_refusal_keeps_no_traceback_and_a_sentence_for_the_owner(self):
        # A 4xx: the operator's message names hosts and paths; the owner's
        # sentence is the class's, whatever the message was filled with.
        reason = ('an instance directory exists at /srv/nova/instances/%s '
                  'on target host compute-17' % self.instance.uuid)
        objects.InstanceFault.create(
            self.ctx, self.instance.uuid,
            _raised(exception.InvalidSharedStorage(reason=reason)), 'h1')
        stored = self.stored()
        self.assertEqual((400, reason, None),
                         (stored.code, stored.message, stored.details))
        self.assertEqual(exception.InvalidSharedStorage.safe_msg,
                         stored.user_message)
        self.assertNotIn('compute-17', stored.user_message)

    def test_a_conflict_names_whom_to_fence_to_the_operator_only(self):
        exc = _raised(exception.DiskLeaseHeld(
            disk='/srv/nova/instances/x/disk', holder='a', reason='busy'))
        objects.InstanceFault.create(self.ctx, self.instance.uuid, exc,
                                     'h1')
        stored = self.stored()
        self.assertEqual(409, stored.code)
        self.assertTrue(stored.message.startswith(
            'disk in use by another host: fence a first'), stored.message)
        self.assertIsNone(stored.details)
        self.assertEqual('The server was not started: a disk of it is in '
                         'use elsewhere, and must be released first.',
                         stored.user_message)

    def test_another_librarys_error_gets_the_generic_sentence(self):
        exc = _raised(PermissionError(
            13, 'Permission denied', '/srv/nova/instances/x/disk'))
        objects.InstanceFault.create(self.ctx, self.instance.uuid, exc,
                                     'h1')
        stored = self.stored()
        self.assertEqual(500, stored.code)
        self.assertIn('/srv/nova/instances/x/disk', stored.message)
        self.assertIn('PermissionError', stored.details)
        self.assertEqual(exception.GENERIC_SAFE_MESSAGE, stored.user_message)

    def test_project_exception_without_a_sentence_gets_its_codes(self):
        objects.InstanceFault.create(
            self.ctx, self.instance.uuid,
            exception.InvalidInput(reason='bad value on compute-17'))
        stored = self.stored()
        self.assertEqual((400, None), (stored.code, stored.details))
        self.assertEqual(exception.safe_message_for_code(400),
                         stored.user_message)

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
