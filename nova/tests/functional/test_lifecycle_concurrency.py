"""Operations that meet on one instance: locks and compare-and-swap.

Real threads, the real manager, FakeDriver and SQLite. The tests wait on
events the code under test reaches, never on time.
"""

import threading

from nova import exception
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.tests.functional import test_lifecycle


class TestConcurrency(test_lifecycle.LifecycleTestCase):

    def build_in_thread(self, instance):
        """A build left waiting: the network backend stays silent."""
        self.virtapi.answer = False
        errors = []

        def target():
            try:
                self.manager.build_and_run_instance(
                    self.request(), instance, image_meta={},
                    network_info=self.network_info())
            except Exception as e:
                errors.append(e)

        thread = threading.Thread(target=target)
        thread.start()
        self.addCleanup(thread.join, 30)
        return thread, errors

    def test_delete_during_build_waits_for_it_and_cleans_the_host(self):
        instance = self.new_instance()
        thread, errors = self.build_in_thread(instance)
        self.assertTrue(self.virtapi.driver_waits.wait(30))

        # The delete ends the build waiting for its VIF event (the build
        # cleans up what it made, as a deleted-during-build, with no
        # fault), then runs once the build let go of the instance lock.
        self.manager.terminate_instance(self.request(),
                                        self.reload(instance))
        thread.join(30)

        self.assertEqual(1, len(errors))
        self.assertIsInstance(errors[0],
                              exception.UnexpectedDeletingTaskStateError)
        self.assertIsNone(objects.InstanceFault.get_latest_for_instance(
            self.context, instance.uuid))
        self.assertTrue(self.reload(instance).deleted)
        self.assertNothingOnHost(instance)

    def test_delete_accepted_by_the_api_during_build(self):
        instance = self.new_instance()
        thread, errors = self.build_in_thread(instance)
        self.assertTrue(self.virtapi.driver_waits.wait(30))
        # The API marks the instance deleting while the build runs.
        row = self.reload(instance)
        row.task_state = task_states.DELETING
        row.save()

        self.manager.terminate_instance(self.request(), row)
        thread.join(30)

        # The build lost its final compare-and-swap: no fault, no ERROR.
        self.assertEqual(1, len(errors))
        self.assertIsInstance(errors[0],
                              exception.UnexpectedDeletingTaskStateError)
        self.assertEqual([], self.faults(instance))
        row = self.reload(instance)
        self.assertTrue(row.deleted)
        self.assertEqual(vm_states.DELETED, row.vm_state)
        self.assertNothingOnHost(instance)

    def test_two_starts_of_one_instance_one_wins(self):
        instance = self.stopped()
        first, second = self.reload(instance), self.reload(instance)
        results = []

        def start(obj):
            try:
                self.manager.start_instance(self.request(), obj)
                results.append('started')
            except exception.UnexpectedTaskStateError:
                results.append('refused')

        threads = [threading.Thread(target=start, args=(obj,))
                   for obj in (first, second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)

        self.assertEqual(['refused', 'started'], sorted(results))
        self.assertStates(instance, vm_states.ACTIVE, None, 1)
        self.assertGuestRunning(instance)
