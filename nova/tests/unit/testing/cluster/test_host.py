"""nova.testing.cluster.host: how a host's nova-compute ended, and which
mount is on top of instances_path, without real hosts.

The real thing (restart-compute with a crash point, mount-shared on real
namespaces) runs in nova/tests/integration/e2e/test_crash_matrix.py,
test_late_shared_mount.py and test_cluster_tool.py.
"""

import os
import signal
import sys
import time
from unittest import mock

from nova.testing.cluster import config as cluster_config
from nova.testing.cluster import host as cluster_host
from nova.testing.cluster import services as cluster_services
from nova.tests import base
from nova.virt import mounts

# Logs what nova/crashpoint.py logs, then SIGKILLs itself, as a
# nova-compute reaching its crash point does.
SUICIDE = '''
import os, signal, sys
with open(sys.argv[1], 'a') as log:
    log.write('CRITICAL Crash point %s reached: killing process %d\\n'
              % (sys.argv[2], os.getpid()))
os.kill(os.getpid(), signal.SIGKILL)
'''

# Its main thread ends first, the process a while later: between the two
# /proc shows it as a zombie though it cannot be reaped yet, as a killed
# nova-compute with a thread in the middle of I/O.
MAIN_THREAD_ENDS_FIRST = '''
import ctypes, os, threading, time
def later():
    time.sleep(2)
    os._exit(7)
threading.Thread(target=later).start()
ctypes.CDLL(None).pthread_exit(None)
'''


class TestComputeExit(base.TestCase):

    def setUp(self):
        super().setUp()
        spec = cluster_config.ClusterSpec(base_dir=self.tmp, hosts=1)
        self.host = cluster_host.ClusterHost(
            spec, cluster_config.Layout(self.tmp), 'compute1',
            forwarder=None, forward_ports=())
        self.log = self.host.entry.log_file

    def _run(self, argv, crash_point=None):
        self.host.entry.compute_overrides = (
            cluster_config.compute_overrides(crash_point))
        self.host.compute = cluster_services.ServiceProcess.start(
            'fake nova-compute', argv, self.log)
        self.host._exit_noted = False
        self.host.entry.state = 'up'
        self.host.compute.popen.wait(timeout=30)

    def test_a_sigkill_at_the_crash_point_is_recorded_as_such(self):
        self._run([sys.executable, '-c', SUICIDE, self.log,
                   'spawn.after_mkdir'], crash_point='spawn.after_mkdir')
        died = self.host.note_compute_exit()
        self.assertEqual({'returncode': -signal.SIGKILL, 'signal': 'SIGKILL',
                          'cause': 'crash point',
                          'crash_point': 'spawn.after_mkdir'},
                         {k: died[k] for k in ('returncode', 'signal',
                                               'cause', 'crash_point')})
        self.assertEqual(self.host.compute.popen.pid, died['pid'])
        self.assertEqual('compute-exited', self.host.entry.state)
        self.assertNotIn('nova-compute', self.host.entry.processes)
        # Noticed once.
        self.assertIsNone(self.host.note_compute_exit())
        self.assertEqual(died, self.host.entry.last_exit)

    def test_a_sigkill_without_the_log_line_is_not_the_crash_point(self):
        # Another point's line, or none: killed, but not where it was told.
        self._run([sys.executable, '-c', SUICIDE, self.log,
                   'spawn.writing_root_disk'],
                  crash_point='spawn.after_mkdir')
        died = self.host.note_compute_exit()
        self.assertEqual(('exited', None, 'SIGKILL'), (
            died['cause'], died['crash_point'], died['signal']))

    def test_an_exit_and_a_running_process(self):
        self._run([sys.executable, '-c', 'raise SystemExit(3)'])
        died = self.host.note_compute_exit()
        self.assertEqual((3, None, 'exited'), (
            died['returncode'], died['signal'], died['cause']))
        self.host.compute = cluster_services.ServiceProcess.start(
            'fake nova-compute', ['sleep', '60'], self.log)
        self.host._exit_noted = False
        self.addCleanup(self.host.compute.stop)
        self.assertIsNone(self.host.note_compute_exit())
        self.host.stop_compute()
        self.assertEqual('stopped', self.host.entry.last_exit['cause'])

    def test_an_exit_seen_before_it_can_be_reaped_is_this_runs(self):
        self._run([sys.executable, '-c', 'raise SystemExit(3)'])
        self.host.note_compute_exit()
        self.host.compute = cluster_services.ServiceProcess.start(
            'fake nova-compute', [sys.executable, '-c',
                                  MAIN_THREAD_ENDS_FIRST], self.log)
        self.host._exit_noted = False
        self.addCleanup(self.host.compute.stop)
        deadline = time.monotonic() + 30
        while self.host.compute.record.alive():
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.01)
        # Not alive, and not reaped yet: nothing to record so far.
        self.assertFalse(self.host.compute.alive())
        self.assertIsNone(self.host.note_compute_exit())
        self.host.compute.wait_reaped(30)
        died = self.host.note_compute_exit()
        self.assertEqual((7, self.host.compute.popen.pid),
                         (died['returncode'], died['pid']))

    def test_partition_stops_nova_compute_and_heal_lets_it_go_on(self):
        self.host.compute = cluster_services.ServiceProcess.start(
            'fake nova-compute', [sys.executable, '-c', TERMINABLE],
            self.log)
        self.host._exit_noted = False
        self.host.entry.state = 'up'
        self.addCleanup(self.host.compute.stop)
        pid = self.host.compute.popen.pid
        _wait_for_line(self.log, 'ready')       # its handler is set
        self.host.partition()
        self.assertEqual('partitioned', self.host.entry.state)
        self.assertEqual('T', _process_state(pid, until='T'))
        self.assertIsNone(self.host.note_compute_exit())
        self.assertRaises(cluster_services.ClusterError,
                          self.host.partition)
        self.host.heal()
        self.assertEqual('up', self.host.entry.state)
        self.assertNotEqual('T', _process_state(pid, until='not T'))
        self.assertRaises(cluster_services.ClusterError, self.host.heal)
        # Stopping a partitioned one: it is continued, so its SIGTERM
        # handler runs (exit 0), not killed after the grace period.
        self.host.partition()
        self.host.stop_compute()
        self.assertEqual((0, 'stopped'),
                         (self.host.entry.last_exit['returncode'],
                          self.host.entry.last_exit['cause']))

    def test_a_process_that_stops_itself_is_marked_stalled(self):
        self.host.entry.compute_overrides = cluster_config.compute_overrides(
            stall_point='spawn.after_mkdir')
        self.host.compute = cluster_services.ServiceProcess.start(
            'fake nova-compute', [sys.executable, '-c', STALLING], self.log)
        self.host._exit_noted = False
        self.host.entry.state = 'up'
        self.addCleanup(self.host.stop_compute)
        pid = self.host.compute.popen.pid
        _wait_for_line(self.log, 'ready')
        self.assertEqual('T', _process_state(pid, until='T'))
        self.assertTrue(self.host.compute_stopped())
        self.host.mark_stalled()
        self.assertEqual('partitioned', self.host.entry.state)
        self.assertRaises(cluster_services.ClusterError,
                          self.host.mark_stalled)
        # Healed, it goes on from where it stopped itself.
        self.host.heal()
        _wait_for_line(self.log, 'continued')
        self.assertFalse(self.host.compute_stopped())
        self.assertEqual('up', self.host.entry.state)
        # Running: not stalled.
        self.assertRaises(cluster_services.ClusterError,
                          self.host.mark_stalled)
        self.host.stop_compute()
        self.assertEqual('stopped', self.host.entry.last_exit['cause'])
        self.assertFalse(self.host.compute_stopped())


# Stops itself as nova/crashpoint.py does at a stall point.
STALLING = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print('ready', flush=True)
os.kill(os.getpid(), signal.SIGSTOP)
print('continued', flush=True)
while True:
    time.sleep(1)
"""


TERMINABLE = """
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
print('ready', flush=True)
while True:
    time.sleep(1)
"""


def _wait_for_line(path, line, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(path) as f:
            if line in f.read().splitlines():
                return
        time.sleep(0.05)
    raise AssertionError('%s never said %r' % (path, line))


def _process_state(pid, until, timeout=10):
    """The state letter of /proc/<pid>/stat once it is ``until`` (a
    signal is delivered a moment after it was sent), or at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        with open('/proc/%d/stat' % pid) as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
        if (state == 'T') == (until == 'T') or \
                time.monotonic() > deadline:
            return state
        time.sleep(0.02)


class TestTopMount(base.TestCase):

    def test_the_last_mount_on_a_path_is_on_top(self):
        with open('/proc/self/mountinfo') as f:
            lines = [line.split() for line in f]
        target = lines[-1][4]
        expected = [int(m[0]) for m in lines if m[4] == target][-1]
        spec = cluster_config.ClusterSpec(base_dir=self.tmp, hosts=1)
        host = cluster_host.ClusterHost(
            spec, cluster_config.Layout(self.tmp), 'compute1',
            forwarder=None, forward_ports=())
        with mock.patch.object(type(host.hypervisor), 'ns_pid',
                               new_callable=mock.PropertyMock,
                               return_value=os.getpid()):
            self.assertEqual(expected, host._top_mount_id(
                mounts.unescape(target)))
            self.assertIsNone(host._top_mount_id('/no/such/mount'))
