"""A real Masakari for tests and the cluster: masakari-api and
masakari-engine, unmodified.

    masakari = MasakariServer(os.path.join(tmp, 'masakari'), keystone,
                              database_url, transport_url)
    masakari.start()     # db sync, both services, the catalog entry
    try:
        segment = masakari.create_segment('cluster', 'auto')
        ...               # masakari.url is its API (``/v1``)
    finally:
        masakari.stop()   # both, by the records taken at start

The ``masakari`` package (22.0.0, from PyPI) lives in a virtual
environment of its own (``.venv-masakari``, made by ``tools/bootstrap``
with ``NOVA_BOOTSTRAP_MASAKARI=1``; ``tools/run-tests`` asks for it), as
Keystone's does. It runs on the caller's PostgreSQL (a database of its
own) and RabbitMQ (the API casts notifications to the engine), behind the
caller's Keystone: a ``masakari`` service user, the ``instance-ha``
service in the catalog, and the Compute API found through that catalog,
exactly as in a deployment. Its engine calls this project's Compute API
with python-novaclient at microversion 2.53 as the privileged user the
configuration names.
"""

import os
import subprocess
import time
import urllib.error
import urllib.request

from oslo_concurrency import processutils
from oslo_log import log as logging

from nova.testing import procs
from nova.testing import rabbitmq
from nova.testing import venvs

LOG = logging.getLogger(__name__)

VENV = venvs.path('masakari')
SERVICE_USER = ('masakari', 'masakari-service-pass', 'service')
START_TIMEOUT = 120
SERVICE_TYPE = 'instance-ha'

_CONF = '''[DEFAULT]
log_dir = {base}
transport_url = {transport_url}
masakari_api_listen = 127.0.0.1
masakari_api_listen_port = {port}
masakari_api_workers = 1
auth_strategy = keystone
# The engine's waits, from minutes to a second: it polls the Compute API
# for what it waits on (a disabled service, an evacuated server), and
# this project's answers as soon as it is so.
wait_period_after_service_update = 1
verify_interval = 1
# The engine's calls to the Compute API: this user, the endpoint from
# Keystone's catalog.
os_privileged_user_name = {user}
os_privileged_user_password = {password}
os_privileged_user_tenant = {project}
os_privileged_user_auth_url = {keystone_url}
os_user_domain_name = Default
os_project_domain_name = Default
os_region_name = RegionOne
nova_catalog_admin_info = compute:nova:publicURL
[database]
connection = {database_url}
[wsgi]
api_paste_config = {paste}
# The engine's recovery flows persist there too.
[taskflow]
connection = {database_url}
{authtoken}region_name = RegionOne
[host_failure]
evacuate_all_instances = {evacuate_all}
'''


def venv_bin(name: str, venv: str = VENV) -> str:
    return venvs.binary(venv, name)


def missing_reason(venv: str = VENV) -> str | None:
    """Why a Masakari cannot run here, or None when it can."""
    return venvs.missing_reason(
        venv, ('masakari-api', 'masakari-engine', 'masakari-manage'),
        'NOVA_BOOTSTRAP_MASAKARI')


class MasakariError(Exception):
    pass


class MasakariServer:

    def __init__(self, base_dir: str, keystone, database_url: str,
                 transport_url: str, venv: str = VENV,
                 port: int | None = None, evacuate_all_instances=True):
        self.base_dir = os.path.abspath(base_dir)
        self.keystone = keystone
        self.database_url = database_url
        self.transport_url = transport_url
        self.venv = venv
        self.port = port
        self.evacuate_all_instances = evacuate_all_instances
        self.conf_file = os.path.join(self.base_dir, 'masakari.conf')
        self.records: dict[str, procs.ProcessRecord] = {}
        self._popens: dict[str, subprocess.Popen] = {}
        self._token: str | None = None

    @property
    def url(self) -> str:
        return 'http://127.0.0.1:%d/v1' % self.port

    def start(self) -> 'MasakariServer':
        reason = missing_reason(self.venv)
        if reason:
            raise MasakariError(reason)
        os.makedirs(self.base_dir, exist_ok=True)
        self.port = self.port or rabbitmq.free_port()
        user, password, project = SERVICE_USER
        self.keystone.add_user(user, password, project=project,
                               role='admin')
        self._write_conf()
        processutils.execute(venv_bin('masakari-manage', self.venv),
                             '--config-file', self.conf_file, 'db', 'sync')
        for binary in ('masakari-api', 'masakari-engine'):
            self._spawn(binary)
        self._wait_for_api()
        self.keystone.add_endpoint(SERVICE_TYPE, 'masakari', self.url)
        return self

    def _write_conf(self) -> None:
        user, password, project = SERVICE_USER
        with open(self.conf_file, 'w') as f:
            f.write(_CONF.format(
                base=self.base_dir, transport_url=self.transport_url,
                port=self.port, paste=os.path.join(
                    self.venv, 'etc', 'masakari', 'api-paste.ini'),
                user=user, password=password, project=project,
                keystone_url=self.keystone.url,
                authtoken=venvs.authtoken_section(
                    self.keystone.url, user, password, project),
                database_url=self.database_url,
                evacuate_all=self.evacuate_all_instances))

    def configure_engine(self, evacuate_all_instances: bool) -> None:
        """Set ``[host_failure] evacuate_all_instances``: on a running
        engine, a restart of the engine alone (it reads it at start; the
        API never does). Notifications cast meanwhile wait in the
        engine's queue, which outlives it."""
        if evacuate_all_instances == self.evacuate_all_instances:
            return
        self.evacuate_all_instances = evacuate_all_instances
        popen = self._popens.get('masakari-engine')
        if popen is None:
            return              # written when it starts
        self._write_conf()
        if popen.poll() is None:
            procs.terminate(self.records['masakari-engine'], timeout=30)
        popen.wait()
        self._spawn('masakari-engine')

    def _spawn(self, binary: str) -> None:
        out = open(os.path.join(self.base_dir, binary + '.out'), 'ab')
        with out:
            popen = subprocess.Popen(
                [venv_bin(binary, self.venv), '--config-file',
                 self.conf_file], stdin=subprocess.DEVNULL, stdout=out,
                stderr=out, start_new_session=True)
        self._popens[binary] = popen
        # Recorded now: stop signals this process, never a later one
        # that reused its PID.
        self.records[binary] = procs.ProcessRecord.of(popen.pid)
        LOG.info('%s (pid %d) started', binary, popen.pid)

    def _wait_for_api(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            for binary, popen in self._popens.items():
                if popen.poll() is not None:
                    raise MasakariError('%s exited (%s); see %s' % (
                        binary, popen.returncode, self.base_dir))
            try:
                with urllib.request.urlopen(
                        'http://127.0.0.1:%d/' % self.port, timeout=5):
                    return
            except urllib.error.HTTPError:
                return          # it answers
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise MasakariError('masakari-api not up after %d s; see %s'
                                    % (START_TIMEOUT, self.base_dir))
            time.sleep(0.2)

    def alive(self) -> dict[str, bool]:
        return {binary: popen.poll() is None
                for binary, popen in self._popens.items()}

    def stop(self) -> None:
        """Stop both services, by the records taken when they started;
        safe to call twice."""
        popens, self._popens = self._popens, {}
        for binary, popen in popens.items():
            record = self.records.get(binary)
            if popen.poll() is None and record is not None:
                procs.terminate(record, timeout=30)
            popen.wait()

    # -- its API, as the admin ---------------------------------------------

    def request(self, method: str, path: str, body=None) -> dict:
        if self._token is None:
            self._token = self.keystone.token()
        return venvs.json_request(self.url + path, method, self._token,
                                  body)

    def create_segment(self, name: str, recovery_method: str) -> dict:
        """A failover segment of compute hosts (``auto``,
        ``reserved_host``, ``auto_priority`` or ``rh_priority``)."""
        return self.request('POST', '/segments', {'segment': {
            'name': name, 'recovery_method': recovery_method,
            'service_type': 'COMPUTE'}})['segment']

    def add_host(self, segment_uuid: str, host: str,
                 reserved: bool = False) -> dict:
        """``host`` in the segment; Masakari checks with the Compute API
        that it runs a nova-compute."""
        return self.request('POST', '/segments/%s/hosts' % segment_uuid, {
            'host': {'name': host, 'type': 'COMPUTE',
                     'control_attributes': 'SSH',
                     'reserved': reserved}})['host']
