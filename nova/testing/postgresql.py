"""A throwaway PostgreSQL cluster for tests.

    server = PostgreSQLServer(os.path.join(tmp, 'pg'))
    server.start()
    try:
        db_api.configure(server.url)   # postgresql+psycopg2://...:PORT/nova
        ...
    finally:
        server.stop()                  # safe to call twice

The cluster trusts local connections (``initdb -A trust``) and listens on
127.0.0.1 only, on a free port, with its socket in ``base_dir``. PostgreSQL
refuses to run as root, so as root the binaries run as the ``postgres``
user (``runuser``), which must be able to reach ``base_dir``: every parent
directory needs at least o+x.
"""

import os
import pwd
import shutil
import signal
import socket
import time

from oslo_concurrency import processutils
from oslo_log import log as logging

LOG = logging.getLogger(__name__)

BIN_DIR = '/usr/lib/postgresql/15/bin'
OS_USER = 'postgres'
DATABASE = 'nova'


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def pid_alive(pid: int) -> bool:
    # NOTE: the postmaster is not our child; where PID 1 does not reap
    # orphans it lingers as a zombie, which counts as gone.
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (FileNotFoundError, ProcessLookupError):
        return False


def missing_reason(bin_dir: str = BIN_DIR) -> str | None:
    """Why a server cannot run here, or None when it can."""
    for binary in ('initdb', 'pg_ctl', 'postgres'):
        if not os.access(os.path.join(bin_dir, binary), os.X_OK):
            return 'PostgreSQL binary %s not found in %s' % (binary, bin_dir)
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(OS_USER)
        except KeyError:
            return 'running as root but there is no %r user' % OS_USER
        if shutil.which('runuser') is None:
            return 'running as root but runuser is missing'
    return None


class PostgreSQLServer:

    def __init__(self, base_dir: str, port: int | None = None,
                 bin_dir: str = BIN_DIR):
        self.base_dir = os.path.abspath(base_dir)
        self.data_dir = os.path.join(self.base_dir, 'data')
        self.log_file = os.path.join(self.base_dir, 'postgres.log')
        self.port = port or _free_port()
        self.bin_dir = bin_dir
        self.pid: int | None = None

    @property
    def url(self) -> str:
        return self.url_of(DATABASE)

    def _run(self, binary, *args):
        command = [os.path.join(self.bin_dir, binary), *args]
        if os.geteuid() == 0:
            command = ['runuser', '-u', OS_USER, '--', *command]
        return processutils.execute(*command)

    def _prepare_dir(self) -> None:
        os.makedirs(self.base_dir, mode=0o700, exist_ok=True)
        if os.geteuid() == 0:
            user = pwd.getpwnam(OS_USER)
            os.chown(self.base_dir, user.pw_uid, user.pw_gid)
            try:
                self._run('pg_ctl', '--version')
                processutils.execute('runuser', '-u', OS_USER, '--',
                                     'test', '-w', self.base_dir)
            except processutils.ProcessExecutionError:
                raise RuntimeError(
                    'user %s cannot write to %s; make its parent '
                    'directories traversable (o+x)' % (OS_USER,
                                                       self.base_dir))

    def start(self) -> 'PostgreSQLServer':
        if self.pid is not None:
            return self
        reason = missing_reason(self.bin_dir)
        if reason:
            raise RuntimeError(reason)
        self._prepare_dir()
        self._run('initdb', '-D', self.data_dir, '-A', 'trust', '-U',
                  OS_USER, '-E', 'UTF8', '--no-sync')
        options = ('-p %d -k %s -c listen_addresses=127.0.0.1 '
                   '-c fsync=off' % (self.port, self.base_dir))
        try:
            self._run('pg_ctl', '-D', self.data_dir, '-o', options,
                      '-l', self.log_file, '-w', '-t', '60', 'start')
        except processutils.ProcessExecutionError as e:
            raise RuntimeError('PostgreSQL did not start: %s\n%s' % (
                e, self._log_tail()))
        self.pid = self._read_pid()
        LOG.debug('PostgreSQL %d listening on port %d', self.pid, self.port)
        self.create_database(DATABASE)
        return self

    def _read_pid(self) -> int:
        with open(os.path.join(self.data_dir, 'postmaster.pid')) as f:
            return int(f.readline())

    def _log_tail(self) -> str:
        try:
            with open(self.log_file) as f:
                return f.read()[-2000:]
        except OSError:
            return ''

    def url_of(self, database: str) -> str:
        """The URL of another database of this server."""
        return 'postgresql+psycopg2://%s@127.0.0.1:%d/%s' % (
            OS_USER, self.port, database)

    def create_database(self, name: str) -> None:
        """An empty database ``name`` (the project's own, or another
        service's: Masakari keeps its segments beside it)."""
        import psycopg2  # only the tests that run a server need it

        connection = psycopg2.connect(host='127.0.0.1', port=self.port,
                                      user=OS_USER, dbname='postgres')
        try:
            connection.autocommit = True
            with connection.cursor() as cursor:
                cursor.execute('CREATE DATABASE %s' % name)
        finally:
            connection.close()

    def stop(self) -> None:
        """Stop the server: pg_ctl, else SIGTERM to the recorded PID."""
        pid, self.pid = self.pid, None
        if pid is None:
            return
        try:
            self._run('pg_ctl', '-D', self.data_dir, '-m', 'fast', '-w',
                      '-t', '30', 'stop')
        except processutils.ProcessExecutionError:
            LOG.warning('pg_ctl stop failed; sending SIGTERM to %d', pid)
        self._wait_gone(pid)

    @staticmethod
    def _wait_gone(pid: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        signalled = False
        while True:
            if not pid_alive(pid):
                return
            if not signalled:
                os.kill(pid, signal.SIGTERM)
                signalled = True
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.stop()
