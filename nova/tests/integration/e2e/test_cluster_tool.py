"""``tools/cluster`` itself: up, status, fail, revive, down, by hand.

Runs the real entry script (which also checks that the packages it needs
are installed) as an operator would, and proves what its users rely on:
``cluster.json`` describes every piece, ``up`` twice is harmless, a
cluster whose supervisor was killed is reclaimed by the next ``up`` and
by ``down``, and ``down`` leaves no process, namespace, mount or file.
"""

import json
import os
import signal
import subprocess
import unittest

from nova.testing import cluster as cluster_mod
from nova.testing.cluster import net as cluster_net
from nova.testing.cluster import record as cluster_record
from nova.testing import procs
from nova.tests import base
from nova.tests.integration.e2e import base as e2e_base

TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))),
    'tools', 'cluster')


class TestClusterTool(base.TestCase):

    def setUp(self):
        super().setUp()
        reason = cluster_mod.unavailable_reason()
        if reason:
            raise unittest.SkipTest('no real cluster here: ' + reason)
        os.makedirs(e2e_base.E2E_ROOT, mode=0o755, exist_ok=True)
        os.chmod(e2e_base.E2E_ROOT, 0o755)
        self.dir = os.path.join(e2e_base.E2E_ROOT, 'tool')
        self.records = []
        self.addCleanup(self._assert_nothing_left)
        self.addCleanup(self.tool, 'down', check=False)

    def tool(self, *args, check=True):
        return self.tool_result(*args, check=check).stdout

    def tool_result(self, *args, check=True):
        result = subprocess.run([TOOL, '--dir', self.dir] + list(args),
                                capture_output=True, text=True, timeout=600)
        print('$ tools/cluster %s -> %d\n%s%s' % (
            ' '.join(args), result.returncode, result.stdout,
            result.stderr[-3000:]))
        if check:
            self.assertEqual(0, result.returncode, result.stderr)
        return result

    def record(self):
        record = cluster_record.ClusterRecord.load(
            os.path.join(self.dir, 'cluster.json'))
        self.records.append(record)
        return record

    def status(self):
        return {line['piece']: line
                for line in json.loads(self.tool('status', '--json'))}

    def _recorded_processes(self, record):
        found = [record.owner] + list(record.processes.values())
        for host in record.hosts:
            found.extend(host.processes.values())
        return found

    def _assert_nothing_left(self):
        self.assertFalse(os.path.exists(self.dir),
                         os.listdir(self.dir) if os.path.isdir(self.dir)
                         else '')
        for record in self.records:
            alive = [p for p in self._recorded_processes(record)
                     if p.alive()]
            self.assertEqual([], alive)
        tag = cluster_mod.ClusterSpec(base_dir=self.dir).tag
        self.assertEqual([], cluster_net.existing('nvc%s-' % tag))
        with open('/proc/self/mountinfo') as f:
            self.assertEqual([], [m for m in f if self.dir in m])

    def test_up_status_fail_revive_down_and_crash(self):
        self.tool('up', '2', '--shared-storage', 'compute1,compute2')
        record = self.record()
        self.assertEqual('up', record.state)
        self.assertEqual(['compute1', 'compute2'],
                         [h.name for h in record.hosts])
        for host in record.hosts:
            self.assertEqual('shared1', host.storage_group)
            self.assertIn('socket=%s' % host.tree, host.libvirt_uri)
            self.assertEqual({'holder', 'virtlogd', 'virtlockd',
                              'libvirtd', 'nova-compute'},
                             set(host.processes))
            self.assertEqual('lockd', host.lock_manager)
        self.assertEqual({'postgres', 'rabbitmq', 'epmd', 'nova-api',
                          'nova-conductor'}, set(record.processes))
        status = self.status()
        for piece, line in status.items():
            if not piece.endswith('/qemu'):
                self.assertTrue(line['running'], line)
            self.assertNotIn(line['answers'], (False, 'down'), line)

        # up again: already up, nothing restarted.
        out = self.tool('up', '2', '--shared-storage', 'compute1,compute2')
        self.assertIn('already up', out)
        self.assertEqual(record.owner, self.record().owner)

        self.tool('fail', 'compute2')
        status = self.status()
        self.assertFalse(status['compute2/libvirtd']['running'])
        self.assertFalse(status['compute2/nova-compute']['running'])
        self.assertTrue(status['compute1/libvirtd']['running'])
        # The harness reaped the killed nova-compute and says how it ended.
        self.assertIn('killed by SIGKILL: host failed',
                      self.tool('wait-exit', 'compute2'))
        self.tool('revive', 'compute2')
        status = self.status()
        self.assertTrue(status['compute2/libvirtd']['running'])
        self.assertEqual('up', status['compute2/nova-compute']['answers'])

        self._restart_compute_with_a_crash_point_and_back()
        self._mounts_are_refused_where_they_make_no_sense()
        self._partition_heal_and_restart_libvirtd()

        # The supervisor dies: its hosts stop themselves; the next up
        # reclaims the rest (database, broker, API, conductor).
        os.kill(record.owner.pid, signal.SIGKILL)
        procs.wait_gone([record.owner.pid], 10)
        self.tool('up', '1')
        self.assertEqual([], [p for p in self._recorded_processes(record)
                              if p.alive()])
        crashed_again = self.record()
        self.assertEqual(['compute1'], [h.name for h in crashed_again.hosts])
        os.kill(crashed_again.owner.pid, signal.SIGKILL)
        procs.wait_gone([crashed_again.owner.pid], 10)

        # down after a crash, then down with nothing there.
        self.tool('down')
        self.assertIn('no cluster', self.tool('down'))

    def _restart_compute_with_a_crash_point_and_back(self):
        point = 'spawn.after_mkdir'
        out = self.tool('restart-compute', 'compute2', '--crash-point', point)
        self.assertIn('with crash point %s' % point, out)
        host = self.record().host('compute2')
        self.assertEqual({'fault_injection': {'crash_point': point}},
                         host.compute_overrides)
        with open(host.override_file) as f:
            self.assertIn('crash_point = %s' % point, f.read())
        self.assertEqual('stopped', host.last_exit['cause'])
        line = self.status()['compute2/nova-compute']
        self.assertEqual('up', line['answers'])
        self.assertIn('crash point %s' % point, line['detail'])
        # Nothing builds there: it runs on, and wait-exit says so.
        result = self.tool_result('wait-exit', 'compute2', '--timeout', '1',
                                  check=False)
        self.assertEqual(1, result.returncode)
        self.assertIn('still runs', result.stderr)
        # A plain restart drops the override.
        self.tool('restart-compute', 'compute2')
        again = self.record().host('compute2')
        self.assertEqual({}, again.compute_overrides)
        self.assertFalse(os.path.exists(host.override_file))
        self.assertEqual('up', self.status()['compute2/nova-compute'][
            'answers'])
        result = self.tool_result('restart-compute', 'compute2',
                                  '--crash-point', 'nowhere', check=False)
        self.assertEqual(2, result.returncode)
        self.assertIn('invalid choice', result.stderr)

    def _partition_heal_and_restart_libvirtd(self):
        before = self.record().host('compute1')
        compute = before.processes['nova-compute']
        self.assertIn('partitioned', self.tool('partition', 'compute1'))
        host = self.record().host('compute1')
        self.assertEqual('partitioned', host.state)
        line = self.status()['compute1/nova-compute']
        self.assertTrue(line['running'], line)
        self.assertIn('host state partitioned', line['detail'])
        result = self.tool_result('partition', 'compute1', check=False)
        self.assertEqual(1, result.returncode)
        self.assertIn('partitioned already', result.stderr)
        self.assertIn('healed', self.tool('heal', 'compute1'))
        host = self.record().host('compute1')
        self.assertEqual('up', host.state)
        self.assertEqual(compute, host.processes['nova-compute'])
        self.tool('restart-libvirtd', 'compute1')
        after = self.record().host('compute1')
        self.assertNotEqual(before.processes['libvirtd'],
                            after.processes['libvirtd'])
        for role in ('virtlockd', 'virtlogd', 'nova-compute'):
            self.assertEqual(before.processes[role], after.processes[role])
        self.assertTrue(self.status()['compute1/libvirtd']['answers'])

    def _mounts_are_refused_where_they_make_no_sense(self):
        # Both hosts already share shared1 (the late mount itself is in
        # test_late_shared_mount.py); these only make the supervisor say
        # no, changing nothing.
        for args, said in ((('mount-shared', 'compute1', 'shared1'),
                            'already has'),
                           (('mount-shared', 'compute1', 'shared9'),
                            'no storage group'),
                           (('unmount-shared', 'compute1'),
                            'no mount of its own')):
            result = self.tool_result(*args, check=False)
            self.assertEqual(1, result.returncode)
            self.assertIn(said, result.stderr)
        self.assertEqual([], self.record().host('compute1').mounts)
