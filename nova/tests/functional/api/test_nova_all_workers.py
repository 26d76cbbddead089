"""``nova-all`` serving its REST API from worker processes
(``[DEFAULT] osapi_compute_workers``): the real binary, its real children,
the REST API and the ``nova`` CLI over HTTP.

What is asserted is what the processes and the machine show: the worker
processes under ``nova-all`` (``/proc``), a server booted through them
reaching ACTIVE (the workers' casts crossed the hub into ``nova-all``'s
bus), a killed worker replaced while the port keeps accepting, the
workers gone once ``nova-all`` is (SIGKILL included) and the port and the
hub's socket released."""

import os
import signal
import socket
import stat

from nova.testing import procs
from nova.tests import base
from nova.tests.functional.api import test_nova_all_cli

WAIT = 90


def alive(pid):
    return procs.start_time(pid) is not None


class TestAPIWorkers(test_nova_all_cli.TestEmbeddedDefaultCLI):
    """Also the embedded default's boot, stop, start and delete through
    the CLI (inherited), here over two workers."""

    default_options = 'osapi_compute_workers = 2\n'
    api_workers = 2

    def setUp(self):
        super().setUp()
        self.port = int(self.endpoint.rsplit(':', 1)[1])
        self.workers = base.wait_until(lambda: self.worker_pids(2),
                                       timeout=WAIT, interval=0.1)
        self.assertTrue(self.workers, self.log())

    def worker_pids(self, count):
        pids = self.api_worker_pids()
        return pids if len(pids) == count else None

    def port_accepts(self):
        try:
            with socket.create_connection(('127.0.0.1', self.port),
                                          timeout=5):
                return True
        except OSError:
            return False

    def test_a_boot_through_the_workers_reaches_active(self):
        hub = os.path.join(self.state, 'rpc.sock')
        self.assertEqual(0o600, stat.S_IMODE(os.lstat(hub).st_mode))
        self.nova('boot', '--image', 'tiny', '--flavor', 'm1.tiny', '--poll',
                  '--poll-interval', '0.1', 'vm1')
        self.assertIn('ACTIVE', self.nova('show', 'vm1'))
        self.assertEqual(2, self.nova('service-list').count(
            '| nova-compute '))
        # Each request may land on either worker; both answer.
        for _ in range(6):
            self.assertIn('vm1', self.nova('list'))

    def test_a_killed_worker_is_started_again(self):
        os.kill(self.workers[0], signal.SIGKILL)
        replaced = base.wait_until(
            lambda: (lambda pids: pids and self.workers[0] not in pids
                     and pids)(self.worker_pids(2)),
            timeout=WAIT, interval=0.1)
        self.assertTrue(replaced, self.log())
        self.assertIn(self.workers[1], replaced)
        self.assertIn('exited with -9', self.log())
        self.assertIn('ID', self.nova('list'))

    def test_the_workers_stop_when_nova_all_is_killed(self):
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(30)
        self.assertTrue(base.wait_until(
            lambda: not any(alive(p) for p in self.workers),
            timeout=WAIT, interval=0.1))
        self.assertFalse(self.port_accepts())

    def test_sigterm_stops_the_workers_and_removes_the_hub(self):
        self.popen.send_signal(signal.SIGTERM)
        self.assertEqual(0, self.popen.wait(60), self.log()[-3000:])
        self.assertFalse(any(alive(p) for p in self.workers))
        self.assertFalse(os.path.exists(os.path.join(self.state,
                                                     'rpc.sock')))
        self.assertFalse(self.port_accepts())
