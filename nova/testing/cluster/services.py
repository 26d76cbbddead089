"""The cluster's own processes, and asking each piece whether it answers.

``ServiceProcess`` is one nova service started by the cluster (its PID and
start time recorded, stopped by that record only). ``ApiClient`` is the
few REST calls the harness itself needs (is nova-api up, is a service's
heartbeat recent). The ``*_answers`` probes back ``tools/cluster status``.

Example::

    proc = ServiceProcess.start('nova-api', [bin, '--config-file', f],
                                log_path)
    ApiClient(url, token).wait_for_service('compute1', 'nova-compute',
                                           newer_than=began, timeout=60)
    proc.stop()
"""

import datetime
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

from oslo_log import log as logging

from nova.testing import procs

LOG = logging.getLogger(__name__)

POLL = 0.2
AMQP_HEADER = b'AMQP\x00\x00\x09\x01'


class ClusterError(RuntimeError):
    """A piece of the cluster failed to start or stop; says which."""


def venv_bin(name):
    """A console script next to this interpreter (the project's .venv)."""
    import sys
    path = os.path.join(os.path.dirname(sys.executable), name)
    if not os.access(path, os.X_OK):
        raise ClusterError('%s is not installed in %s (run tools/bootstrap)'
                           % (name, os.path.dirname(sys.executable)))
    return path


def log_tail(path, size=3000):
    try:
        with open(path, 'rb') as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - size))
            return f.read().decode(errors='replace')
    except OSError:
        return ''


def wait_until(predicate, timeout, what, interval=POLL, alive=None):
    """Poll ``predicate`` until true; ClusterError after ``timeout`` s, or
    as soon as ``alive()`` (when given) returns false."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if alive is not None and not alive():
            raise ClusterError('%s: the process exited' % what)
        if time.monotonic() > deadline:
            raise ClusterError('%s: not after %s s' % (what, timeout))
        time.sleep(interval)


class ApiError(ClusterError):
    """nova-api answered an error status."""

    def __init__(self, method, path, code, body):
        super().__init__('%s %s: %d %s' % (method, path, code, body[:500]))
        self.code = code


class ServiceProcess:
    """A nova service process the cluster started (and so may stop)."""

    def __init__(self, name, popen, log_path):
        self.name = name
        self.popen = popen
        self.log_path = log_path
        self.record = procs.ProcessRecord.of(popen.pid)

    @classmethod
    def start(cls, name, argv, log_path):
        """Start ``argv`` in its own session (a Ctrl-C meant for the caller
        must not reach it), stdout and stderr appended to ``log_path``."""
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
        with open(log_path, 'ab') as log:
            popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=log,
                                     start_new_session=True)
        LOG.debug('Started %s (%d): %s', name, popen.pid, ' '.join(argv))
        return cls(name, popen, log_path)

    def alive(self):
        return self.popen.poll() is None and self.record.alive()

    def wait_reaped(self, timeout):
        """Until the process is reaped (at most ``timeout`` s): a
        multi-threaded process killed shows as a zombie as soon as its
        main thread ends, but can be waited for only once every thread
        has, which takes a while when one is in the middle of I/O."""
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise self.failure('not reaped %s s after it ended' % timeout)

    def failure(self, what):
        return ClusterError('%s: %s (exit status %s); end of %s:\n%s'
                            % (self.name, what, self.popen.poll(),
                               self.log_path, log_tail(self.log_path)))

    def stop(self, timeout=15):
        """SIGTERM, then SIGKILL after ``timeout``; reaped. Idempotent."""
        if self.popen.poll() is None:
            try:
                procs.terminate(self.record, timeout, sig=signal.SIGTERM)
            except RuntimeError as e:
                LOG.warning('%s: %s', self.name, e)
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            LOG.warning('%s (%d) could not be reaped', self.name,
                        self.popen.pid)

    def kill(self):
        # Popen.kill() signals only a child not yet reaped: never a
        # reused PID.
        self.popen.kill()
        self.popen.wait(timeout=10)


def _parse_dbtime(text):
    return datetime.datetime.strptime(text, '%Y-%m-%dT%H:%M:%S.%f')


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class ApiClient:
    """The REST calls the harness makes (never to act on instances)."""

    def __init__(self, url, token, timeout=30.0):
        self.url = url.rstrip('/')
        self.token = token
        self.timeout = timeout

    def request(self, method, path, body=None, microversion=None):
        """One JSON request; the decoded answer (HTTPError on 4xx/5xx)."""
        headers = {'X-Auth-Token': self.token, 'Accept': 'application/json'}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers['Content-Type'] = 'application/json'
        if microversion:
            headers['OpenStack-API-Version'] = 'compute ' + microversion
        request = urllib.request.Request(self.url + path, data=data,
                                         headers=headers, method=method)
        try:
            with urllib.request.urlopen(request,
                                        timeout=self.timeout) as resp:
                return json.loads(resp.read() or b'null')
        except urllib.error.HTTPError as e:
            raise ApiError(method, path, e.code,
                           e.read().decode(errors='replace'))

    def get(self, path, microversion=None):
        return self.request('GET', path, microversion=microversion)

    def answers(self):
        try:
            self.get('')
            return True
        except (OSError, ValueError, ClusterError):
            return False

    def services(self):
        """Every service record, as ``GET /os-services`` shows it (2.53:
        ids are UUIDs, as ``PUT /os-services/{id}`` wants them)."""
        return self.get('/os-services', microversion='2.53')['services']

    def service(self, host, binary):
        try:
            services = self.services()
        except (OSError, ValueError, ClusterError):
            return None
        for svc in services:
            if svc['host'] == host and svc['binary'] == binary:
                return svc
        return None

    def wait_for_service(self, host, binary, timeout, newer_than=None,
                         alive=None):
        """Until the service is up with a heartbeat newer than
        ``newer_than`` (naive UTC): for a compute host, that means its
        ``init_host`` has finished, since it heartbeats only after."""
        wait_until(lambda: self.service_is_up(host, binary, newer_than),
                   timeout, '%s on %s up' % (binary, host), alive=alive)

    def service_is_up(self, host, binary, newer_than=None):
        """Whether the service is up, with a heartbeat newer than
        ``newer_than`` (naive UTC) when given."""
        svc = self.service(host, binary)
        if svc is None or svc['state'] != 'up':
            return False
        if newer_than is None:
            return True
        seen = svc.get('updated_at')
        return bool(seen) and _parse_dbtime(seen) > newer_than

    def wait_for_state(self, host, binary, state, timeout):
        def reached():
            svc = self.service(host, binary)
            return svc is not None and svc['state'] == state
        wait_until(reached, timeout, '%s on %s %s' % (binary, host, state))


# -- probes for `status` ---------------------------------------------------

def tcp_answers(port, host='127.0.0.1', timeout=1.0):
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def amqp_answers(port, timeout=2.0):
    """The broker answers an AMQP 0-9-1 header with Connection.Start."""
    try:
        with socket.create_connection(('127.0.0.1', port),
                                      timeout=timeout) as sock:
            sock.sendall(AMQP_HEADER)
            return sock.recv(1) == b'\x01'      # a method frame
    except OSError:
        return False


def libvirt_answers(uri, timeout=5):
    try:
        result = subprocess.run(['virsh', '-c', uri, 'version'],
                                capture_output=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


def postgres_answers(port, socket_dir, timeout=3):
    """``pg_isready`` on the server's socket."""
    from nova.testing import postgresql
    binary = os.path.join(postgresql.BIN_DIR, 'pg_isready')
    try:
        result = subprocess.run([binary, '-h', socket_dir, '-p', str(port),
                                 '-t', str(timeout)], capture_output=True,
                                timeout=timeout + 2)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0
