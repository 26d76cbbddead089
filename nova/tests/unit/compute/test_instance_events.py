import threading
import time

from nova.compute import instance_events
from nova import exception
from nova.model import external_event
from nova.tests import base

UUID = '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b'


class _Instance:
    uuid = UUID


def _event(tag, status='completed', uuid=UUID):
    return external_event.InstanceExternalEvent(
        instance_uuid=uuid, name='network-vif-plugged', tag=tag,
        status=status)


class TestComputeVirtAPI(base.TestCase):

    def setUp(self):
        super().setUp()
        self.virtapi = instance_events.ComputeVirtAPI()

    def _wait(self, tags, deadline=5, error_callback=None, during=None):
        names = [('network-vif-plugged', t) for t in tags]
        with self.virtapi.wait_for_instance_event(
                _Instance(), names, deadline=deadline,
                error_callback=error_callback):
            if during:
                during()

    def test_event_delivered_during_the_body_is_not_lost(self):
        def during():
            self.assertTrue(self.virtapi.events.deliver(_event('p1')))
        self._wait(['p1'], during=during)

    def test_event_from_another_thread_releases_the_wait(self):
        def later():
            threading.Timer(0.05, self.virtapi.events.deliver,
                            [_event('p1')]).start()
        self._wait(['p1'], during=later)

    def test_timeout_raises_timeout_error(self):
        self.assertRaises(TimeoutError, self._wait, ['p1'], deadline=0.05)

    def test_partial_arrival_still_times_out(self):
        def during():
            self.virtapi.events.deliver(_event('p1'))
        self.assertRaises(TimeoutError, self._wait, ['p1', 'p2'],
                          deadline=0.05, during=during)

    def test_failed_event_without_callback_raises(self):
        def during():
            self.virtapi.events.deliver(_event('p1', status='failed'))
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          self._wait, ['p1'], during=during)

    def test_failed_event_calls_error_callback(self):
        seen = []

        def during():
            self.virtapi.events.deliver(_event('p1', status='failed'))
        self._wait(['p1'], during=during,
                   error_callback=lambda name, inst: seen.append(name))
        self.assertEqual(['network-vif-plugged'], seen)

    def test_event_for_nobody_is_dropped(self):
        self.assertFalse(self.virtapi.events.deliver(_event('p9')))

    def test_other_instance_event_does_not_release(self):
        def during():
            self.virtapi.events.deliver(
                _event('p1', uuid='00000000-0000-4000-8000-000000000000'))
        self.assertRaises(TimeoutError, self._wait, ['p1'], deadline=0.05,
                          during=during)

    def test_no_events_means_no_wait(self):
        self._wait([], deadline=0)

    def test_waiter_is_forgotten_after_the_wait(self):
        self._wait(['p1'], during=lambda: self.virtapi.events.deliver(
            _event('p1')))
        self.assertEqual({}, self.virtapi.events._waiters)


class TestCancel(base.TestCase):

    def setUp(self):
        super().setUp()
        self.virtapi = instance_events.ComputeVirtAPI()

    def _wait_in_thread(self, deadline=30):
        outcome = []
        started = threading.Event()

        def wait():
            try:
                with self.virtapi.wait_for_instance_event(
                        _Instance(), [('network-vif-plugged', 'p1')],
                        deadline=deadline):
                    started.set()
                outcome.append('returned')
            except Exception as e:
                outcome.append(e)

        thread = threading.Thread(target=wait)
        thread.start()
        started.wait(5)
        return thread, outcome

    def test_cancel_all_makes_the_waiter_raise(self):
        thread, outcome = self._wait_in_thread()
        self.virtapi.events.cancel_all(UUID)
        thread.join(5)
        self.assertFalse(thread.is_alive())
        self.assertIsInstance(outcome[0],
                              exception.UnexpectedDeletingTaskStateError)

    def test_cancel_everything_releases_a_long_wait_at_once(self):
        """A 30 s deadline: only the cancellation can end it before join's
        5 s bound (a bound on a hang, not a measure of speed)."""
        thread, outcome = self._wait_in_thread(deadline=30)
        self.virtapi.events.cancel_everything()
        thread.join(5)
        self.assertFalse(thread.is_alive())
        self.assertIsInstance(outcome[0], exception.InstanceEventsCancelled)
        self.assertEqual({}, self.virtapi.events._waiters)

    def test_a_wait_prepared_after_the_stop_is_cancelled_at_once(self):
        """The stop came while an operation was between two steps (its
        disks made, its wait not yet prepared): the wait it prepares next
        gives up at once with InstanceEventsCancelled instead of holding
        the stop for its whole deadline.

        The deadline is 30 s and the elapsed time is bounded by 10 s: a
        generous bound that only a wait that really sat out its deadline
        can exceed (this test then also sees TimeoutError, not the
        cancellation).
        """
        self.virtapi.events.cancel_everything()
        started = time.monotonic()
        with self.assertRaises(exception.InstanceEventsCancelled) as cm:
            with self.virtapi.wait_for_instance_event(
                    _Instance(), [('network-vif-plugged', 'p1')],
                    deadline=30):
                pass
        elapsed = time.monotonic() - started
        self.assertLess(elapsed, 10)
        self.assertIn('stopping', str(cm.exception))
        self.assertIn(UUID, str(cm.exception))
        # Nothing is left registered: an event arriving now finds nobody.
        self.assertEqual({}, self.virtapi.events._waiters)
        self.assertFalse(self.virtapi.events.deliver(_event('p1')))
