"""A throwaway RabbitMQ broker for integration tests and local experiments.

Each broker gets its own node name, ports and state directories under
``base_dir`` (``RABBITMQ_MNESIA_BASE``, ``RABBITMQ_LOG_BASE``), and its own
``epmd`` port, so it never meets another broker on the machine. It is
stopped with ``rabbitmqctl stop`` and its ``epmd`` by the PID recorded at
start, never by process name.

Installing ``rabbitmq-server`` is the CI script's job (``tools/run-tests``
asks ``tools/bootstrap`` for it); ``available()`` says whether it is here.

Example::

    broker = RabbitMQServer(self.tmp, port=free_port())
    broker.start()
    self.addCleanup(broker.stop)
    self.flags(transport_url=broker.url)
"""

import os
import random
import shutil
import socket
import subprocess
import time

from oslo_log import log as logging

from nova.testing import procs

LOG = logging.getLogger(__name__)

SERVER = 'rabbitmq-server'
CTL = 'rabbitmqctl'
# NOTE: Debian's /usr/sbin/rabbitmq-server is a wrapper that switches to
# the rabbitmq user and its HOME (/var/lib/rabbitmq), which cannot write
# our directories nor read our Erlang cookie; the scripts it wraps, in
# /usr/lib/rabbitmq/bin, run as the caller. Prefer those.
_SEARCH_PATH = os.pathsep.join(
    ['/usr/lib/rabbitmq/bin', os.environ.get('PATH', ''), '/usr/sbin'])


def _which(name):
    return shutil.which(name, path=_SEARCH_PATH)


def available():
    """``None`` when a broker can be started here, else why not."""
    for name in (SERVER, CTL):
        if _which(name) is None:
            return '%s is not installed (apt-get install rabbitmq-server)' % (
                name)
    return None


_EPHEMERAL_RANGE = '/proc/sys/net/ipv4/ip_local_port_range'
_LOWEST_PORT = 10000


def _ephemeral_start():
    try:
        with open(_EPHEMERAL_RANGE) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port():
    """A TCP port nobody listens on right now.

    Taken below the kernel's ephemeral range: a port the kernel handed
    out for ``bind(('', 0))`` may be handed out again to any outgoing
    connection or test server before the daemon it is for binds it (a
    parallel test run made PostgreSQL fail with "Address already in
    use" that way). Below the range, only another explicit choice can
    take it.
    """
    top = _ephemeral_start()
    if top <= _LOWEST_PORT + 1000:
        top = 65536
    for _ in range(200):
        port = random.randrange(_LOWEST_PORT, top)
        with socket.socket() as sock:
            try:
                sock.bind(('127.0.0.1', port))
            except OSError:
                continue
            return port
    raise OSError('no free TCP port in %d-%d' % (_LOWEST_PORT, top - 1))


class RabbitMQError(Exception):
    pass


class RabbitMQServer:
    """One RabbitMQ node living in ``base_dir``, listening on ``port``."""

    def __init__(self, base_dir, port, epmd_port=None, dist_port=None,
                 nodename=None, startup_timeout=60):
        self.base_dir = os.path.abspath(base_dir)
        self.port = port
        self.epmd_port = epmd_port or free_port()
        self.dist_port = dist_port or free_port()
        self.nodename = nodename or 'nova-test-%d@localhost' % port
        self.startup_timeout = startup_timeout
        # procs.ProcessRecord values: PID plus start time, so a reused PID
        # is never signalled.
        self.epmd = None
        self.beam = None
        self.started = False

    @property
    def url(self):
        return 'rabbit://guest:guest@127.0.0.1:%d/' % self.port

    def _env(self):
        mnesia = os.path.join(self.base_dir, 'mnesia')
        logs = os.path.join(self.base_dir, 'log')
        os.makedirs(mnesia, exist_ok=True)
        os.makedirs(logs, exist_ok=True)
        env = dict(os.environ)
        env.update({
            'RABBITMQ_NODENAME': self.nodename,
            'RABBITMQ_NODE_IP_ADDRESS': '127.0.0.1',
            'RABBITMQ_NODE_PORT': str(self.port),
            'RABBITMQ_DIST_PORT': str(self.dist_port),
            'RABBITMQ_MNESIA_BASE': mnesia,
            'RABBITMQ_LOG_BASE': logs,
            'RABBITMQ_PID_FILE': self._pid_file(),
            # A private epmd: stopping it cannot disturb another broker.
            'ERL_EPMD_PORT': str(self.epmd_port),
            'RABBITMQ_ENABLED_PLUGINS_FILE': os.path.join(
                self.base_dir, 'enabled_plugins'),
            'HOME': self.base_dir,
            'PATH': _SEARCH_PATH,
        })
        # An empty plugin list: the management plugin would need a port.
        with open(env['RABBITMQ_ENABLED_PLUGINS_FILE'], 'w') as f:
            f.write('[].\n')
        return env

    def _run(self, *args, timeout=60, check=True):
        result = subprocess.run(args, env=self._env(), capture_output=True,
                                text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise RabbitMQError('%s failed (%d): %s%s' % (
                ' '.join(args), result.returncode, result.stdout,
                result.stderr))
        return result

    def start(self):
        reason = available()
        if reason:
            raise RabbitMQError(reason)
        os.makedirs(self.base_dir, exist_ok=True)
        # The Erlang cookie is read from $HOME; a private HOME needs one.
        cookie = os.path.join(self.base_dir, '.erlang.cookie')
        if not os.path.exists(cookie):
            with open(cookie, 'w') as f:
                f.write('novatest%d' % self.port)
            os.chmod(cookie, 0o400)
        started = time.monotonic()
        self._run(_which(SERVER), '-detached')
        self.started = True
        try:
            self._await_startup(started + self.startup_timeout)
        except Exception:
            self.stop()
            raise
        self.beam = self._record(procs.read_pid(self._pid_file()))
        self.epmd = self._record(self._find_epmd_pid())
        LOG.info('RabbitMQ %(node)s on port %(port)d up after %(secs).1f s',
                 {'node': self.nodename, 'port': self.port,
                  'secs': time.monotonic() - started})
        return self

    def _await_startup(self, deadline):
        # await_startup fails at once while the node has not registered
        # with epmd yet (the first second or so), so retry until deadline.
        while True:
            left = deadline - time.monotonic()
            result = self._run(_which(CTL), '-n', self.nodename,
                               'await_startup', '--timeout',
                               str(max(1, int(left))), check=False,
                               timeout=max(1, left) + 10)
            if result.returncode == 0:
                return
            if time.monotonic() >= deadline:
                raise RabbitMQError('RabbitMQ %s did not start: %s%s' % (
                    self.nodename, result.stdout, result.stderr))
            time.sleep(0.5)

    def _pid_file(self):
        return os.path.join(self.base_dir, 'rabbit.pid')

    @staticmethod
    def _record(pid):
        if pid is None:
            return None
        try:
            return procs.ProcessRecord.of(pid)
        except ProcessLookupError:
            return None

    def _find_epmd_pid(self):
        """PID of the epmd started for this broker's ``ERL_EPMD_PORT``.

        Found by its own command line and environment (in /proc), so no
        other epmd is ever touched.
        """
        wanted = ('ERL_EPMD_PORT=%d' % self.epmd_port).encode()
        for entry in os.listdir('/proc'):
            if not entry.isdigit():
                continue
            try:
                with open('/proc/%s/cmdline' % entry, 'rb') as f:
                    cmdline = f.read().split(b'\0')
                if not cmdline or not os.path.basename(
                        cmdline[0]).startswith(b'epmd'):
                    continue
                with open('/proc/%s/environ' % entry, 'rb') as f:
                    environ = f.read().split(b'\0')
            except OSError:
                continue
            if wanted in environ or str(self.epmd_port).encode() in cmdline:
                return int(entry)
        return None

    def stop(self):
        """``rabbitmqctl stop``, then end our epmd by its recorded PID."""
        if not self.started:
            return
        self.started = False
        if self.beam is None:
            self.beam = self._record(procs.read_pid(self._pid_file()))
        if self.epmd is None:
            self.epmd = self._record(self._find_epmd_pid())
        try:
            self._run(_which(CTL), '-n', self.nodename, 'stop', timeout=60,
                      check=False)
        except subprocess.TimeoutExpired:
            LOG.warning('rabbitmqctl stop timed out for %s', self.nodename)
        # rabbitmqctl returns while the node halts; wait for it to end
        # (SIGTERM, then SIGKILL, if it would not).
        if self.beam is not None:
            procs.wait_gone([self.beam.pid], 30)
            procs.terminate(self.beam, 10)
            self.beam = None
        if self.epmd is not None:
            procs.terminate(self.epmd, 10)
            self.epmd = None
