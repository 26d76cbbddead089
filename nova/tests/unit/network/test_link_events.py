"""The link watcher against the kernel's real netlink events: devices made
and removed with ``ip`` in this network namespace (root only)."""

import os
import threading
import unittest
from unittest import mock
import uuid

from oslo_concurrency import processutils

from nova.network import link_events
from nova.testing import netdev
from nova.tests import base


@unittest.skipUnless(os.geteuid() == 0, 'needs root to make devices')
class LinkWatcherTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.seen = []
        self.changed = threading.Event()
        # A prefix of this test's own: tests run in parallel processes in
        # one network namespace, and another's taps must not count here.
        self.prefix = 'tn' + uuid.uuid4().hex[:5]
        self.watcher = link_events.LinkWatcher(self._changed,
                                               prefix=self.prefix)
        self.assertTrue(self.watcher.start())
        self.addCleanup(self.watcher.stop, 10)

    def _changed(self):
        # What taps exist when the watcher calls: the one it was told of.
        self.seen.append(netdev.tap_devices(self.prefix))
        self.changed.set()

    def device(self, prefix, *add):
        """A device this test makes (``ip <add...>`` with its name) and
        removes again."""
        name = netdev.unique_name(prefix)
        processutils.execute('ip', *(a.format(name=name) for a in add))
        self.addCleanup(lambda: netdev.link_exists(name)
                        and netdev.delete_link(name))
        return name

    def tap(self):
        return self.device(self.prefix, 'tuntap', 'add', 'dev', '{name}',
                           'mode', 'tap')

    def test_a_tap_that_comes_and_goes_is_seen(self):
        name = self.tap()
        self.assertTrue(self.changed.wait(30), 'no event for a new tap')
        self.assertIn(name, self.seen[0])
        self.changed.clear()
        netdev.delete_link(name)
        self.assertTrue(self.changed.wait(30), 'no event for a gone tap')

    def test_other_devices_are_ignored(self):
        self.device('nvbr', 'link', 'add', '{name}', 'type', 'bridge')
        name = self.tap()
        self.assertTrue(self.changed.wait(30), 'no event for the tap')
        # The first call came for the tap, not for the bridge made
        # before it.
        self.assertIn(name, self.seen[0])

    def test_without_netlink_the_agent_polls_only(self):
        def unavailable():
            raise OSError('netlink unavailable')
        with mock.patch.object(link_events, '_open_socket', unavailable):
            watcher = link_events.LinkWatcher(self._changed)
            self.assertFalse(watcher.start())
        watcher.stop()
