"""The embedded default, run as operators run it: ``nova-all`` in its own
process, for the rows that measure it from outside.

``NovaAll()`` makes a temporary ``state_path`` with a ``nova.conf`` for
the embedded default (two compute hosts on libvirt's test driver, SQLite,
``inproc://`` RPC, noauth2, the REST API on a free port of 127.0.0.1).
``prepare(servers=N)`` writes, before the process starts, what
``nova-all`` itself prepares (``nova.cmd.all.prepare_embedded_default``:
schema, flavor ``m1.tiny``, image ``tiny``, network ``public``) plus N
live servers, half on each host: their rows in bulk
(``benchmarks/placement.py``) and their domains, running, in each host's
node file (``benchmarks/init_host.py``). ``start()`` runs
``.venv/bin/nova-all`` and returns once the API answers and both compute
services are up; ``stop()`` ends that process (by its recorded PID) and
removes the directory.

The node files give each host 64 CPUs and 10^6 MiB; the configuration
raises ``[conductor] cpu_allocation_ratio`` and ``disk_allocation_ratio``
so that room never refuses a request (10,000 servers plus the new ones
fit); ``prepare(cidr=...)`` gives network ``public`` a larger subnet
than the default's /24 (253 ports), for rows with more live servers.
Nothing else differs from ``tools/quickstart``.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import sqlalchemy as sa

from rows import common

import init_host  # noqa: E402  (benchmarks/init_host.py)
import placement  # noqa: E402  (benchmarks/placement.py)

from nova.cli import client as client_mod  # noqa: E402
from nova.cli import servers as servers_cli  # noqa: E402
from nova.cmd import all as all_cmd  # noqa: E402
from nova.conf import all_in_one  # noqa: E402
from nova.conf import CONF  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova.db import api as db_api  # noqa: E402
from nova.db import migration  # noqa: E402
from nova.db import models  # noqa: E402
from nova.network import api as network_api  # noqa: E402
from nova.testing import procs  # noqa: E402

TOKEN = 'admin:admin'
START_TIMEOUT = 600
ACTIVE_TIMEOUT = 120
POLL = 0.01
CONF_TEXT = """[DEFAULT]
state_path = %(state)s
debug = %(debug)s
%(workers)s[database]
connection = %(database)s
[api]
listen_port = %(port)d
[conductor]
cpu_allocation_ratio = 1000
disk_allocation_ratio = 10000
[quota]
# The rows boot hundreds of servers as one project; Nova's defaults stop
# at 10 instances and 20 cores.
instances = -1
cores = -1
ram = -1
"""


def venv_bin(name):
    return os.path.join(os.path.dirname(sys.executable), name)


class NovaAll:
    """One ``nova-all`` of the embedded default in a temporary directory."""

    binary = 'nova-all'

    def __init__(self, api_workers=None, debug=False):
        # None: the default of [DEFAULT] osapi_compute_workers.
        self.api_workers = api_workers
        # Debug logging, which logs each phase mark (``nova.phases``).
        self.debug = debug
        self.state = tempfile.mkdtemp(prefix='nova-bench-all-')
        self.port = common.free_port()
        self.database = 'sqlite:///' + os.path.join(self.state,
                                                    'nova.sqlite')
        self.conf_path = os.path.join(self.state, 'nova.conf')
        with open(self.conf_path, 'w') as f:
            f.write(self.conf_text())
        self.log_path = os.path.join(self.state, self.binary + '.log')
        self.popen = None
        self.url = 'http://127.0.0.1:%d/v2.1' % self.port
        self._image = None

    def conf_text(self):
        workers = ('' if self.api_workers is None else
                   'osapi_compute_workers = %d\n' % self.api_workers)
        return CONF_TEXT % {'state': self.state, 'port': self.port,
                            'database': self.database, 'workers': workers,
                            'debug': 'true' if self.debug else 'false'}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    # -- before the process --------------------------------------------------

    def prepare(self, servers=0, cidr=None):
        """Schema, catalog and ``servers`` live servers, in this process;
        with ``cidr``, network ``public`` gets that subnet instead of the
        default's /24 (253 ports)."""
        CONF(['--config-file', self.conf_path], project='nova',
             default_config_files=[])
        settings_list = all_in_one.all_host_settings(CONF)
        db_api.configure(self.database)
        try:
            if cidr is not None:
                migration.db_sync()
                name, bridge, _cidr = all_cmd.DEFAULT_NETWORK
                network_api.API().ensure_network(
                    nova_context.get_admin_context(), name, bridge, cidr)
            all_cmd.prepare_embedded_default(CONF, settings_list)
            placement._bulk_servers(servers)
            with db_api.get_engine().connect() as connection:
                rows = connection.execute(sa.select(
                    models.Instance.uuid, models.Instance.host)).all()
            for settings in settings_list:
                node = settings.connection_uri[len('test://'):]
                init_host._node_with_domains(
                    node, [uuid for uuid, host in rows
                           if host == settings.host])
        finally:
            db_api.dispose()

    # -- the process ---------------------------------------------------------

    def argv(self):
        return [venv_bin(self.binary), '--config-file', self.conf_path]

    def start(self, wait_for_hosts=('compute1', 'compute2')):
        with open(self.log_path, 'ab') as log:
            self.popen = subprocess.Popen(
                self.argv(), stdin=subprocess.DEVNULL, stdout=log,
                stderr=log, start_new_session=True)
        try:
            common.wait_until(lambda: self._ready(wait_for_hosts),
                              START_TIMEOUT, '%s up' % self.binary,
                              alive=self.alive)
        except common.cluster_services.ClusterError as e:
            raise RuntimeError('%s; end of %s:\n%s'
                               % (e, self.log_path, self.log_tail()))
        return self

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def _ready(self, hosts):
        try:
            services = self.client().get('/os-services')['services']
        except client_mod.ClientException:
            return False
        up = {s['host'] for s in services
              if s['binary'] == 'nova-compute' and s['state'] == 'up'}
        return set(hosts) <= up

    def cpu_seconds(self):
        """CPU seconds so far of the nova-all process itself, and of its
        API worker processes together."""
        pid = self.popen.pid
        workers = 0.0
        for child in procs.children(pid):
            try:
                workers += common.cpu_seconds(child)
            except OSError:
                pass        # exited meanwhile
        return common.cpu_seconds(pid), workers

    def rss_mb(self):
        """The process's RSS with its API workers' (an upper bound)."""
        return common.tree_rss_mb(self.popen.pid)

    def stop(self):
        """SIGTERM (SIGKILL after 60 s) to the process started, reaped;
        then the directory goes."""
        if self.popen is not None:
            if self.popen.poll() is None:
                self.popen.send_signal(signal.SIGTERM)
                try:
                    self.popen.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    self.popen.kill()
                    self.popen.wait(timeout=30)
            self.popen = None
        shutil.rmtree(self.state, ignore_errors=True)

    def log_tail(self, size=3000):
        return common.cluster_services.log_tail(self.log_path, size)

    # -- the REST API ------------------------------------------------------

    def client(self):
        """A client of the REST API (a new connection per request, as the
        ``nova`` CLI's)."""
        client = client_mod.Client(self.url, TOKEN, timeout=ACTIVE_TIMEOUT)
        client.negotiate('2.53')
        return client

    def image_id(self):
        if self._image is None:
            self._image = servers_cli.find_image(
                self.client(), all_cmd.DEFAULT_IMAGE_NAME)['id']
        return self._image

    def post_server(self, client, name):
        """``POST /servers`` (the ``nova boot`` body); (seconds to the
        answer, server id)."""
        body = {'server': {'name': name, 'imageRef': self.image_id(),
                           'flavorRef': all_cmd.DEFAULT_FLAVOR['flavorid'],
                           'min_count': 1, 'max_count': 1,
                           'networks': 'auto'}}
        started = time.perf_counter()
        status, _response, answer = client.request('POST', '/servers',
                                                   body=body)
        elapsed = time.perf_counter() - started
        if status != 202:
            raise RuntimeError('POST /servers answered %d' % status)
        return elapsed, answer['server']['id']

    def wait_active(self, client, uuid, timeout=ACTIVE_TIMEOUT,
                    interval=POLL):
        """Until the server is ACTIVE with no task (RuntimeError on
        ERROR); the server."""
        deadline = time.monotonic() + timeout
        while True:
            server = client.get('/servers/%s' % uuid)['server']
            if server['status'] == 'ERROR':
                raise RuntimeError('server %s went to ERROR: %s'
                                   % (uuid, server.get('fault')))
            if (server['status'] == 'ACTIVE'
                    and server.get('OS-EXT-STS:task_state') is None):
                return server
            if time.monotonic() > deadline:
                raise RuntimeError('server %s not ACTIVE after %s s: %s'
                                   % (uuid, timeout, server['status']))
            time.sleep(interval)

    def boot(self, client, name, interval=POLL):
        """POST and wait until ACTIVE (polled every ``interval`` s);
        (seconds to 202, server id)."""
        elapsed, uuid = self.post_server(client, name)
        self.wait_active(client, uuid, interval=interval)
        return elapsed, uuid

    def delete_and_wait(self, client, uuids, timeout=ACTIVE_TIMEOUT):
        common.delete_servers(client, uuids, timeout)
