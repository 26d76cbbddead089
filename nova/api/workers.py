"""The REST API served by worker processes on one socket this process
listens on (``[DEFAULT] osapi_compute_workers``).

The parent binds and listens, then starts each worker
(``nova.cmd.api_worker``) with the listening socket and the read end of a
pipe among its file descriptors. Workers accept on the socket; the parent
never serves it. Because the socket belongs to the parent:

* a port already in use fails the parent's start, before any worker runs;
* while a worker starts (or is started again after it died), connections
  wait in the socket's backlog rather than being refused.

The pipe is how a worker learns that its parent is gone, even after a
SIGKILL: the parent never writes to it, so the worker's read returns only
at end of file, when the parent's end is closed, and the worker then
stops. A worker that exits while the parent runs is logged and started
again, after 1 s, doubled each time it dies within a minute of starting,
up to a minute, so a worker that cannot start does not spin.

Example::

    workers = APIWorkers('127.0.0.1', 8774, 1, ['--config-file', F],
                         env={'OS_DEFAULT__TRANSPORT_URL': hub.url})
    workers.start()
    ...
    workers.stop()          # SIGTERM, then SIGKILL after 30 s
"""

import os
import signal
import socket
import subprocess
import sys
import threading
import time

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

WORKER_MODULE = 'nova.cmd.api_worker'
BACKLOG = 128
STOP_TIMEOUT = 30.0
FIRST_RESTART_DELAY = 1.0
MAX_RESTART_DELAY = 60.0
# A worker that ran this long before it died is started again after the
# first delay, not a longer one.
STABLE_AFTER = 60.0


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` and listening, as the
    single-process API server would bind it."""
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    return socket.create_server((host, port), family=family,
                                backlog=BACKLOG)


def worker_command(listen_fd: int, parent_fd: int, argv) -> list:
    return [sys.executable, '-m', WORKER_MODULE,
            '--listen-fd', str(listen_fd), '--parent-fd', str(parent_fd),
            '--'] + list(argv)


class _Worker:
    def __init__(self, index):
        self.index = index
        self.popen = None
        self.started_at = 0.0
        self.delay = FIRST_RESTART_DELAY
        self.thread = None


class APIWorkers:
    """``count`` processes serving the REST API on ``host``:``port``.

    :param argv: the configuration arguments of this service
        (``--config-file`` ...), given to every worker as is
    :param env: variables added to this process's environment for the
        workers (``OS_DEFAULT__TRANSPORT_URL``, oslo.config's environment
        source, when the workers need another bus than the files say)
    """

    def __init__(self, host: str, port: int, count: int, argv, env=None):
        if count < 1:
            raise ValueError('at least one API worker')
        self.host = host
        self.port = port
        self.count = count
        self.argv = list(argv)
        self.env = dict(os.environ, **(env or {}))
        self._sock = None
        self._parent_r = self._parent_w = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._workers = []

    def __repr__(self):
        return '<APIWorkers %d on %s:%s>' % (self.count, self.host,
                                             self.port)

    @property
    def url(self) -> str:
        host = self.host if ':' not in self.host else '[%s]' % self.host
        return 'http://%s:%d' % (host, self.port)

    def pids(self) -> list:
        with self._lock:
            return [w.popen.pid for w in self._workers
                    if w.popen is not None and w.popen.poll() is None]

    def start(self) -> 'APIWorkers':
        self._sock = listening_socket(self.host, self.port)
        self.host, self.port = self._sock.getsockname()[:2]
        # Both ends are close-on-exec: only the workers get the read end
        # (pass_fds), and nothing else this process runs keeps the write
        # end open after it is gone.
        self._parent_r, self._parent_w = os.pipe()
        for index in range(self.count):
            worker = _Worker(index)
            self._workers.append(worker)
            self._spawn(worker)
            worker.thread = threading.Thread(
                target=self._watch, args=(worker,), daemon=True,
                name='nova-api-worker-%d' % index)
            worker.thread.start()
        LOG.info('REST API listening on %s (%d worker %s)', self.url,
                 self.count, 'process' if self.count == 1 else 'processes')
        return self

    def _spawn(self, worker) -> bool:
        """Start ``worker``'s process unless ``stop()`` began: under the
        lock, so that ``stop()`` sees every process started."""
        command = worker_command(self._sock.fileno(), self._parent_r,
                                 self.argv)
        with self._lock:
            if self._stopping.is_set():
                return False
            worker.popen = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, env=self.env,
                pass_fds=(self._sock.fileno(), self._parent_r))
            worker.started_at = time.monotonic()
        LOG.info('API worker %d started: pid %d', worker.index,
                 worker.popen.pid)
        return True

    def _watch(self, worker) -> None:
        while True:
            code = worker.popen.wait()
            if self._stopping.is_set():
                return
            ran = time.monotonic() - worker.started_at
            if ran >= STABLE_AFTER:
                worker.delay = FIRST_RESTART_DELAY
            LOG.error('API worker %d (pid %d) exited with %s after %.1f s; '
                      'starting it again in %.0f s', worker.index,
                      worker.popen.pid, code, ran, worker.delay)
            if self._stopping.wait(worker.delay):
                return
            worker.delay = min(worker.delay * 2, MAX_RESTART_DELAY)
            if not self._spawn(worker):
                return

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            popens = [w.popen for w in self._workers if w.popen is not None]
        for popen in popens:
            if popen.poll() is None:
                popen.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        for popen in popens:
            try:
                popen.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                LOG.warning('API worker pid %d did not stop in %.0f s: '
                            'killing it', popen.pid, STOP_TIMEOUT)
                popen.kill()
                popen.wait()
        for worker in self._workers:
            if worker.thread is not None:
                worker.thread.join()
        self._workers = []
        for fd in (self._parent_r, self._parent_w):
            if fd is not None:
                os.close(fd)
        self._parent_r = self._parent_w = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        LOG.info('REST API workers on %s stopped', self.url)
