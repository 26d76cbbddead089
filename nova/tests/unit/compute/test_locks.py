import threading
import time

from nova.compute import locks
from nova.tests import base

UUID_A = '11111111-1111-4111-8111-111111111111'
UUID_B = '22222222-2222-4222-8222-222222222222'


class TestInstanceLocks(base.TestCase):

    def run_in_thread(self, locks_, uuid, order):
        def target():
            with locks_.lock(uuid):
                order.append('thread')
        thread = threading.Thread(target=target)
        thread.start()
        return thread

    def test_same_instance_waits_for_the_holder(self):
        instance_locks = locks.InstanceLocks()
        order = []
        with instance_locks.lock(UUID_A):
            thread = self.run_in_thread(instance_locks, UUID_A, order)
            # Give the thread the chance to (wrongly) get in first.
            time.sleep(0.05)
            order.append('holder done')
        thread.join(10)
        self.assertEqual(['holder done', 'thread'], order)

    def test_other_instance_does_not_wait(self):
        instance_locks = locks.InstanceLocks()
        order = []
        with instance_locks.lock(UUID_A):
            thread = self.run_in_thread(instance_locks, UUID_B, order)
            thread.join(10)
            order.append('holder done')
        self.assertEqual(['thread', 'holder done'], order)

    def test_hosts_in_one_process_do_not_share_locks(self):
        host1, host2 = locks.InstanceLocks(), locks.InstanceLocks()
        order = []
        with host1.lock(UUID_A):
            thread = self.run_in_thread(host2, UUID_A, order)
            thread.join(10)
            order.append('holder done')
        self.assertEqual(['thread', 'holder done'], order)

    def test_lock_if_free_does_not_wait_for_a_holder(self):
        instance_locks = locks.InstanceLocks()
        outcome = []

        def target():
            with instance_locks.lock_if_free(UUID_A) as held:
                outcome.append(held)
        with instance_locks.lock(UUID_A):
            thread = threading.Thread(target=target)
            thread.start()
            # Answered while the holder still holds the lock.
            thread.join(10)
            self.assertEqual([False], outcome)
        with instance_locks.lock_if_free(UUID_A) as held:
            self.assertTrue(held)
            with instance_locks.lock_if_free(UUID_A) as again:
                # Not re-entrant: the same lock is not taken twice.
                self.assertFalse(again)

    def test_lock_if_free_releases_when_the_body_raises(self):
        instance_locks = locks.InstanceLocks()
        with self.assertRaises(ValueError):
            with instance_locks.lock_if_free(UUID_A) as held:
                self.assertTrue(held)
                raise ValueError('body failed')
        with instance_locks.lock_if_free(UUID_A) as held:
            self.assertTrue(held)
