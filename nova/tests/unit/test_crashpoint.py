"""Crash points: a kill -9, a stall, and the hooks tests hold threads with,
each in a real child process or thread."""

import os
import signal
import subprocess
import sys
import threading
import time

from nova import crashpoint
from nova.tests import base

_CHILD = '''
import sys
from nova.conf import CONF
from nova import crashpoint
CONF([], project='nova')
CONF.set_override(sys.argv[1], sys.argv[2], group='fault_injection')
print('before', flush=True)
crashpoint.reached('spawn.after_mkdir')
print('after', flush=True)
crashpoint.reached('spawn.after_mkdir')
print('again', flush=True)
'''

_CHILD_THREAD = '''
import mmap
import os
import sys
import threading
# One CPU for both threads, and the main thread (the one a signal sent to
# the process wakes) runs only when the worker waits: as on a loaded host,
# where it waits for a CPU while the worker goes on.
os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
from nova.conf import CONF
from nova import crashpoint
CONF([], project='nova')
CONF.set_override('stall_point', 'spawn.after_mkdir', group='fault_injection')


with open(sys.argv[1], 'r+b') as f:
    shared = mmap.mmap(f.fileno(), 5)


def attempt():
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    crashpoint.reached('spawn.after_mkdir')
    # The step right after the point, a store to shared memory (no
    # system call where a pending stop would catch the thread): it must
    # not happen before the process is continued.
    shared[:5] = b'after'


worker = threading.Thread(target=attempt)
worker.start()
worker.join()
'''


def _state(pid):
    """The process state letter in /proc (R, S, T, Z ...)."""
    with open('/proc/%d/stat' % pid) as f:
        return f.read().rsplit(')', 1)[1].split()[0]


class TestCrashPoints(base.TestCase):

    def child(self, option, point):
        proc = subprocess.Popen(
            [sys.executable, '-c', _CHILD, option, point],
            stdout=subprocess.PIPE, text=True,
            cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                os.path.dirname(os.path.abspath(__file__))))))
        self.addCleanup(self._reap, proc)
        return proc

    def _reap(self, proc):
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
        proc.wait()
        proc.stdout.close()

    def wait_until(self, predicate, what):
        deadline = time.monotonic() + 30
        while not predicate():
            if time.monotonic() > deadline:
                self.fail('gave up waiting for %s' % what)
            time.sleep(0.01)

    def test_crash_point_kills_the_process_there(self):
        proc = self.child('crash_point', 'spawn.after_mkdir')
        self.assertEqual(-signal.SIGKILL, proc.wait(30))
        self.assertEqual('before\n', proc.stdout.read())

    def test_stall_point_stops_the_process_there_once(self):
        proc = self.child('stall_point', 'spawn.after_mkdir')
        self.assertEqual('before\n', proc.stdout.readline())
        self.wait_until(lambda: _state(proc.pid) == 'T',
                        'the child to stop itself')
        proc.send_signal(signal.SIGCONT)
        # It goes on from where it stopped, and passes the point freely
        # the next time.
        self.assertEqual(0, proc.wait(30))
        self.assertEqual('after\nagain\n', proc.stdout.read())

    def test_stall_point_in_a_worker_thread_stops_it_before_its_next_step(
            self):
        # A SIGSTOP sent to the process is taken by the main thread: the
        # worker that reached the point ran on and acted before the group
        # stop caught it.
        marker = os.path.join(self.tmp, 'after')
        with open(marker, 'wb') as f:
            f.write(b'-----')
        proc = subprocess.Popen(
            [sys.executable, '-c', _CHILD_THREAD, marker],
            cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                os.path.dirname(os.path.abspath(__file__))))))
        self.addCleanup(self._reap_quiet, proc)
        self.wait_until(lambda: _state(proc.pid) == 'T',
                        'the child to stop itself')
        with open(marker, 'rb') as f:
            self.assertEqual(b'-----', f.read())
        proc.send_signal(signal.SIGCONT)
        self.assertEqual(0, proc.wait(30))
        with open(marker, 'rb') as f:
            self.assertEqual(b'after', f.read())

    def _reap_quiet(self, proc):
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
        proc.wait()

    def test_an_observer_holds_the_thread_that_reached_a_point(self):
        release = threading.Event()
        seen = []

        def hold(name):
            seen.append(name)
            if name == 'spawn.after_mkdir':
                release.wait(30)

        self.addCleanup(crashpoint.observe(hold))
        worker = threading.Thread(
            target=crashpoint.reached, args=('spawn.after_mkdir',))
        worker.start()
        self.wait_until(lambda: seen, 'the worker to reach the point')
        self.assertTrue(worker.is_alive())
        release.set()
        worker.join(30)
        self.assertFalse(worker.is_alive())
        self.assertRaises(ValueError, crashpoint.reached, 'no.such.point')
