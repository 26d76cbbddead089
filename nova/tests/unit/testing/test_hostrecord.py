"""nova.testing.hostrecord: records of started hosts, and reaping them.

Real child processes stand in for a host's daemons; the registry lives in
the test's own directory.
"""

import os
import signal
import subprocess

from nova.testing import hostrecord
from nova.testing import procs
from nova.tests import base


class TestHostRecord(base.TestCase):

    def setUp(self):
        super().setUp()
        self.registry = os.path.join(self.tmp, 'registry')
        self.tree = os.path.join(self.tmp, 'hostx')
        os.makedirs(self.tree)

    def _daemon(self):
        child = subprocess.Popen(['sleep', '60'])
        self.addCleanup(child.wait)
        self.addCleanup(procs.kill, child.pid, signal.SIGKILL)
        return child

    def _dead_owner(self):
        child = subprocess.Popen(['sleep', '60'])
        record = procs.ProcessRecord.of(child.pid)
        child.kill()
        child.wait()
        return record

    def _state(self, owner, daemon):
        return hostrecord.HostState(
            name='hostx', tree=self.tree,
            instances_path=os.path.join(self.tree, 'instances'),
            owner=owner,
            processes={'libvirtd': procs.ProcessRecord.of(daemon.pid)})

    def test_json_round_trip(self):
        state = self._state(procs.ProcessRecord.of(os.getpid()),
                            self._daemon())
        state.ns_inode = 4026532177
        self.assertEqual(state,
                         hostrecord.HostState.from_json(state.to_json()))

    def test_save_and_forget(self):
        state = self._state(procs.ProcessRecord.of(os.getpid()),
                            self._daemon())
        hostrecord.save(state, self.registry)
        path = hostrecord.registry_file(self.tree, self.registry)
        with open(path) as f:
            self.assertEqual(state, hostrecord.HostState.from_json(f.read()))
        self.assertTrue(os.path.exists(os.path.join(self.tree,
                                                    'harness.json')))
        hostrecord.forget(state, self.registry)
        self.assertFalse(os.path.exists(path))
        hostrecord.forget(state, self.registry)     # idempotent

    def test_reap_stops_hosts_of_dead_owners_only(self):
        orphan = self._daemon()
        hostrecord.save(self._state(self._dead_owner(), orphan),
                        self.registry)
        self.assertEqual(['hostx'], hostrecord.reap_stale(self.registry))
        self.assertEqual(-signal.SIGTERM, orphan.wait(timeout=5))
        self.assertEqual([], os.listdir(self.registry))

    def test_reap_leaves_hosts_of_live_owners(self):
        daemon = self._daemon()
        hostrecord.save(self._state(procs.ProcessRecord.of(os.getpid()),
                                    daemon), self.registry)
        self.assertEqual([], hostrecord.reap_stale(self.registry))
        self.assertIsNone(daemon.poll())
        self.assertEqual(1, len(os.listdir(self.registry)))
