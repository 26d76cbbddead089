"""nova.testing.procs against real child processes (no mocks)."""

import os
import signal
import subprocess
import sys
import time

from nova.testing import procs
from nova.tests import base

IGNORE_TERM = ('import signal, sys, time\n'
               'signal.signal(signal.SIGTERM, signal.SIG_IGN)\n'
               'print("ready", flush=True)\n'
               'time.sleep(60)\n')


class TestProcessRecord(base.TestCase):

    def _child(self, *argv):
        child = subprocess.Popen(argv or ('sleep', '60'),
                                 stdout=subprocess.PIPE)
        self.addCleanup(child.wait)
        self.addCleanup(procs.kill, child.pid, signal.SIGKILL)
        return child

    def test_record_follows_the_process(self):
        child = self._child()
        record = procs.ProcessRecord.of(child.pid)
        self.assertTrue(record.alive())
        child.kill()
        child.wait()
        self.assertFalse(record.alive())

    def test_zombie_counts_as_gone(self):
        child = self._child('true')
        # Not reaped yet: the kernel keeps a zombie.
        self.assertEqual([], procs.wait_gone([child.pid], timeout=5))
        self.assertTrue(os.path.exists('/proc/%d' % child.pid))
        self.assertIsNone(procs.start_time(child.pid))

    def test_reused_pid_is_never_signalled(self):
        child = self._child()
        stale = procs.ProcessRecord(pid=child.pid,
                                    start_time=procs.start_time(child.pid) - 1)
        self.assertFalse(stale.alive())
        procs.terminate(stale, timeout=1, sig=signal.SIGKILL)
        self.assertIsNone(child.poll())

    def test_terminate_escalates_to_sigkill(self):
        child = self._child(sys.executable, '-c', IGNORE_TERM)
        self.assertEqual(b'ready\n', child.stdout.readline())
        procs.terminate(procs.ProcessRecord.of(child.pid), timeout=0.2)
        self.assertEqual(-signal.SIGKILL, child.wait(timeout=5))

    def test_state_of_a_stopped_and_a_gone_process(self):
        child = self._child()
        self.assertIn(procs.state(child.pid), ('R', 'S'))
        os.kill(child.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 10
        while procs.state(child.pid) != 'T' and \
                time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual('T', procs.state(child.pid))
        child.kill()
        child.wait()
        self.assertIsNone(procs.state(child.pid))

    def test_ns_members_include_children(self):
        child = self._child()
        inode = procs.mount_ns_inode(os.getpid())
        self.assertIn(child.pid, procs.pids_in_mount_ns(inode))
        self.assertIn(os.getpid(), procs.pids_in_mount_ns(inode))


class TestPidFiles(base.TestCase):

    def test_sibling_filter(self):
        for name, text in (('dom1.pid', '101'), ('dom1.xml', '<x/>'),
                           ('driver.pid', '102'), ('broken.pid', 'x'),
                           ('broken.xml', '')):
            with open(os.path.join(self.tmp, name), 'w') as f:
                f.write(text)
        self.assertEqual([101, 102], procs.pids_from_files(self.tmp, '.pid'))
        self.assertEqual([101], procs.pids_from_files(self.tmp, '.pid',
                                                      sibling='.xml'))
        self.assertEqual([], procs.pids_from_files(
            os.path.join(self.tmp, 'missing'), '.pid'))

    def test_wait_for_pid_file(self):
        path = os.path.join(self.tmp, 'd.pid')
        self.assertRaises(TimeoutError, procs.wait_for_pid_file, path, 0)
        with open(path, 'w') as f:
            f.write('%d\n' % os.getpid())
        self.assertEqual(os.getpid(), procs.wait_for_pid_file(path, 1))
