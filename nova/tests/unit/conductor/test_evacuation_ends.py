"""The wake-ups of host-evacuate's watchers."""

import threading

from nova.conductor import evacuation_ends
from nova.tests import base


class TestEndSignals(base.TestCase):

    def setUp(self):
        super().setUp()
        self.ends = evacuation_ends.EndSignals()

    def test_ended_wakes_only_the_watcher_of_that_migration(self):
        with self.ends.expecting('m1') as one, \
                self.ends.expecting('m2') as two:
            self.assertTrue(self.ends.ended('m1'))
            self.assertTrue(one.is_set())
            self.assertFalse(two.is_set())

    def test_an_end_nobody_watches_is_ignored(self):
        self.assertFalse(self.ends.ended('m1'))
        with self.ends.expecting('m1') as event:
            # Said before the watch began: the watcher reads the rows
            # first anyway.
            self.assertFalse(event.is_set())

    def test_two_watchers_of_one_migration_are_both_woken(self):
        with self.ends.expecting('m1') as one:
            with self.ends.expecting('m1') as two:
                self.ends.ended('m1')
                self.assertTrue(one.is_set() and two.is_set())
            one.clear()
            self.assertEqual({'m1'}, self.ends.watched())
            self.ends.ended('m1')
            self.assertTrue(one.is_set())
        self.assertEqual(set(), self.ends.watched())

    def test_an_end_said_while_the_rows_are_read_is_not_lost(self):
        # The watcher clears, reads (the end is said meanwhile), waits:
        # the wait returns at once.
        with self.ends.expecting('m1') as event:
            event.clear()
            self.ends.ended('m1')              # during the read
            self.assertTrue(event.wait(timeout=0))

    def test_wake_all_wakes_every_watcher(self):
        with self.ends.expecting('m1') as one, \
                self.ends.expecting('m2') as two:
            woken = []
            threads = [threading.Thread(
                target=lambda e=e: woken.append(e.wait(timeout=60)))
                for e in (one, two)]
            for thread in threads:
                thread.start()
            self.ends.wake_all()
            for thread in threads:
                thread.join()
            self.assertEqual([True, True], woken)
