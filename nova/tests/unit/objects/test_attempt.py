"""Attempt tokens against a real SQLite database."""

import threading

from oslo_utils import uuidutils

from nova import context
from nova import exception
from nova.model import task_states
from nova import objects
from nova.objects import attempt as attempt_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf


class AttemptTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()
        self.instance = dbf.make_instance(self.ctx, 'h1',
                                          task_state=task_states.REBUILDING)

    def claim(self, instance=None, host='h1', operation='rebuild'):
        """Take the token for a new attempt; the attempt row."""
        instance = instance or self.instance
        attempt = objects.InstanceAttempt.new(
            self.ctx, instance.uuid, host, operation,
            uuidutils.generate_uuid())
        instance.attempt_id = attempt.uuid
        instance.save(expected_task_state=[task_states.REBUILDING],
                      and_attempt=attempt)
        return attempt

    def test_a_claim_writes_the_token_and_the_row_in_one_transaction(self):
        attempt = self.claim()
        row = objects.InstanceAttempt.get_by_uuid(self.ctx, attempt.uuid)
        self.assertEqual((self.instance.uuid, 'h1', 'rebuild', 'claimed'),
                         (row.instance_uuid, row.host, row.operation,
                          row.status))
        self.assertEqual(attempt.uuid, objects.Instance.get_by_uuid(
            self.ctx, self.instance.uuid).attempt_id)

    def test_a_lost_claim_writes_no_attempt(self):
        stale = objects.Instance.get_by_uuid(self.ctx, self.instance.uuid)
        self.instance.task_state = None
        self.instance.save()
        self.assertRaises(exception.UnexpectedTaskStateError,
                          self.claim, stale)
        self.assertEqual([], objects.InstanceAttempt.get_by_instance(
            self.ctx, self.instance.uuid))
        self.assertIsNone(objects.Instance.get_by_uuid(
            self.ctx, self.instance.uuid).attempt_id)

    def test_check_current_passes_only_for_the_token(self):
        first = self.claim()
        attempt_obj.check_current(self.ctx, self.instance.uuid, first.uuid,
                                  'define')
        second = self.claim()
        with self.assertRaises(exception.AttemptSuperseded) as caught:
            attempt_obj.check_current(self.ctx, self.instance.uuid,
                                      first.uuid, 'define')
        e = caught.exception
        self.assertIn('attempt %s holds the instance now' % second.uuid,
                      str(e))
        self.assertIn('before define', str(e))

    def test_reset_and_delete_supersede_the_token(self):
        attempt = self.claim()
        self.instance.attempt_id = None
        self.instance.save()
        with self.assertRaises(exception.AttemptSuperseded) as caught:
            attempt_obj.check_current(self.ctx, self.instance.uuid,
                                      attempt.uuid, 'stamp')
        e = caught.exception
        self.assertIn('no attempt holds the instance', str(e))
        self.instance.destroy()
        with self.assertRaises(exception.AttemptSuperseded) as caught:
            attempt_obj.check_current(self.ctx, self.instance.uuid,
                                      attempt.uuid, 'stamp')
        e = caught.exception
        self.assertIn('deleted', str(e))

    def test_a_save_expecting_a_stale_token_writes_nothing(self):
        first = self.claim()
        self.claim()
        stale = objects.Instance.get_by_uuid(self.ctx, self.instance.uuid)
        stale.vm_state = 'active'
        first.status = attempt_obj.LANDED
        with self.assertRaises(exception.AttemptSuperseded) as caught:
            stale.save(expected_attempt=first.uuid, and_attempt=first)
        e = caught.exception
        self.assertIn('recording its result', str(e))
        self.assertEqual(attempt_obj.CLAIMED,
                         objects.InstanceAttempt.get_by_uuid(
                             self.ctx, first.uuid).status)

    def test_landing_with_the_token_marks_the_attempt(self):
        attempt = self.claim()
        self.instance.task_state = None
        self.instance.attempt_id = None
        self.instance.disks_exist = True
        attempt.status = attempt_obj.LANDED
        self.instance.save(expected_attempt=attempt.uuid,
                           and_attempt=attempt)
        self.assertTrue(objects.InstanceAttempt.get_by_uuid(
            self.ctx, attempt.uuid).landed)
        row = objects.Instance.get_by_uuid(self.ctx, self.instance.uuid)
        self.assertEqual((None, True), (row.attempt_id, row.disks_exist))

    def test_mark_never_turns_a_landed_attempt_failed(self):
        attempt = self.claim()
        self.assertTrue(attempt.mark(attempt_obj.LANDED))
        copy = objects.InstanceAttempt.get_by_uuid(self.ctx, attempt.uuid)
        self.assertTrue(copy.landed)
        attempt.status = attempt_obj.CLAIMED
        attempt.obj_reset_changes()
        self.assertFalse(attempt.mark(attempt_obj.FAILED))
        self.assertTrue(attempt.landed)

    def test_claimed_after_lists_the_newer_attempts_only(self):
        first, second, third = self.claim(), self.claim(), self.claim()
        self.assertEqual([second.uuid, third.uuid],
                         [a.uuid for a in objects.InstanceAttempt
                          .claimed_after(self.ctx, first)])
        self.assertEqual([], objects.InstanceAttempt.claimed_after(
            self.ctx, third))

    def test_two_claims_at_once_one_token(self):
        copies = [objects.Instance.get_by_uuid(self.ctx, self.instance.uuid)
                  for _ in range(2)]
        barrier = threading.Barrier(2)
        outcomes = []

        def claim(copy):
            attempt = objects.InstanceAttempt.new(
                self.ctx, copy.uuid, 'h1', 'rebuild',
                uuidutils.generate_uuid())
            copy.attempt_id = attempt.uuid
            copy.task_state = task_states.REBUILD_SPAWNING
            barrier.wait()
            try:
                copy.save(expected_task_state=[task_states.REBUILDING],
                          and_attempt=attempt)
                outcomes.append(attempt.uuid)
            except exception.UnexpectedTaskStateError:
                pass

        threads = [threading.Thread(target=claim, args=(c,))
                   for c in copies]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(1, len(outcomes))
        self.assertEqual(outcomes, [a.uuid for a in objects.InstanceAttempt
                                    .get_by_instance(self.ctx,
                                                     self.instance.uuid)])
