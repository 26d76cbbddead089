"""A throwaway Keystone for tests, and what the tests register in it.

    keystone = KeystoneServer(os.path.join(tmp, 'keystone'))
    keystone.start()              # db_sync, fernet keys, bootstrap, serve
    try:
        keystone.add_endpoint('compute', 'nova', api_url)
        keystone.add_user('demo', 'demo-pass', project='demo', role='member')
        ...                       # keystone.url is the identity endpoint
    finally:
        keystone.stop()           # safe to call twice

The real ``keystone`` package, from its own virtual environment
(``.venv-keystone``, made by ``tools/bootstrap`` with
``NOVA_BOOTSTRAP_KEYSTONE=1``; ``tools/run-tests`` asks for it), on SQLite
in ``base_dir``, with fernet tokens, served on 127.0.0.1 on a free port
by werkzeug (which Keystone depends on) in a process of its own, stopped
by the PID recorded when it started. ``keystone-manage bootstrap``
creates the ``admin`` user (password ``ADMIN_PASSWORD``) with the
``admin`` role in the ``admin`` project, and the ``member`` and
``reader`` roles.
"""

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

from oslo_concurrency import processutils
from oslo_log import log as logging

from nova.testing import rabbitmq
from nova.testing import venvs

LOG = logging.getLogger(__name__)

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
VENV = venvs.path('keystone')
ADMIN_PASSWORD = 'admin-secret'
REGION = 'RegionOne'
START_TIMEOUT = 120

# Keystone's WSGI application, served by werkzeug on the port given in
# argv[1]; argv is emptied first, as Keystone parses it for its options.
# One request at a time: on SQLite, two of Keystone's write transactions
# at once (a token's last_active_at update beside a project delete, as
# Tempest's parallel workers cause) fail with "database is locked" and
# answer 500, which the clients see as an identity error. Keystone's
# requests take milliseconds, so serving them in turn costs little.
_SERVE = '''
import sys
port = int(sys.argv.pop(1))
from werkzeug.serving import run_simple
from keystone.wsgi.api import application
run_simple('127.0.0.1', port, application, threaded=False)
'''

_CONF = '''[DEFAULT]
log_file = {base}/keystone.log
[database]
connection = sqlite:///{base}/keystone.sqlite
[token]
provider = fernet
# Tokens the harness hands out (the cluster's API client, its network
# agents) last as long as a cluster may run.
expiration = 604800
[fernet_tokens]
key_repository = {base}/fernet-keys
[fernet_receipts]
key_repository = {base}/fernet-receipts
[credential]
key_repository = {base}/credential-keys
'''


def venv_bin(name: str, venv: str = VENV) -> str:
    return venvs.binary(venv, name)


def missing_reason(venv: str = VENV) -> str | None:
    """Why a Keystone cannot run here, or None when it can."""
    return venvs.missing_reason(venv, ('keystone-manage', 'openstack',
                                       'python'), 'NOVA_BOOTSTRAP_KEYSTONE')


class KeystoneServer:

    def __init__(self, base_dir: str, venv: str = VENV,
                 port: int | None = None):
        self.base_dir = os.path.abspath(base_dir)
        self.venv = venv
        self.conf_file = os.path.join(self.base_dir, 'keystone.conf')
        self.port: int | None = port
        self._popen: subprocess.Popen | None = None
        self._token: str | None = None

    @property
    def url(self) -> str:
        """The identity endpoint (``OS_AUTH_URL``)."""
        return 'http://127.0.0.1:%d/v3' % self.port

    def _manage(self, *args: str) -> None:
        processutils.execute(venv_bin('keystone-manage', self.venv),
                             '--config-file', self.conf_file, *args)

    def start(self) -> 'KeystoneServer':
        os.makedirs(self.base_dir, exist_ok=True)
        with open(self.conf_file, 'w') as f:
            f.write(_CONF.format(base=self.base_dir))
        self.port = self.port or rabbitmq.free_port()
        owner = ('--keystone-user', 'root', '--keystone-group', 'root') \
            if os.geteuid() == 0 else ()
        user = os.environ.get('USER') or str(os.geteuid())
        if not owner:
            owner = ('--keystone-user', user, '--keystone-group', user)
        self._manage('db_sync')
        self._manage('fernet_setup', *owner)
        self._manage('credential_setup', *owner)
        # keystonemiddleware validates tokens at the internal endpoint.
        self._manage('bootstrap', '--bootstrap-password', ADMIN_PASSWORD,
                     '--bootstrap-region-id', REGION,
                     '--bootstrap-public-url', self.url,
                     '--bootstrap-internal-url', self.url,
                     '--bootstrap-admin-url', self.url)
        env = dict(os.environ, OS_KEYSTONE_CONFIG_FILES=self.conf_file)
        log = open(os.path.join(self.base_dir, 'serve.log'), 'ab')
        with log:
            self._popen = subprocess.Popen(
                [venv_bin('python', self.venv), '-c', _SERVE,
                 str(self.port)], stdin=subprocess.DEVNULL, stdout=log,
                stderr=log, env=env, start_new_session=True)
        LOG.info('Keystone (pid %d) starting on %s', self._popen.pid,
                 self.url)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self._popen.poll() is not None:
                raise RuntimeError('Keystone exited (%s); see %s' % (
                    self._popen.returncode, self.base_dir))
            try:
                with urllib.request.urlopen(self.url, timeout=5) as resp:
                    if resp.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError('Keystone not up after %d s'
                                   % START_TIMEOUT)
            time.sleep(0.2)

    @property
    def pid(self) -> int | None:
        return None if self._popen is None else self._popen.pid

    def stop(self) -> None:
        """Stop the server started by ``start`` (by its PID), reaped."""
        popen, self._popen = self._popen, None
        venvs.stop(popen)

    # -- the identity API, as the admin ------------------------------------

    def token(self, user='admin', password=ADMIN_PASSWORD,
              project='admin') -> str:
        """A project-scoped token (password authentication)."""
        body = {'auth': {
            'identity': {'methods': ['password'], 'password': {'user': {
                'name': user, 'password': password,
                'domain': {'id': 'default'}}}},
            'scope': {'project': {'name': project,
                                  'domain': {'id': 'default'}}}}}
        request = urllib.request.Request(
            self.url + '/auth/tokens', data=json.dumps(body).encode(),
            headers={'Content-Type': 'application/json'}, method='POST')
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.headers['X-Subject-Token']

    def _admin(self, method: str, path: str, body=None) -> dict:
        if self._token is None:
            self._token = self.token()
        return venvs.json_request(self.url + path, method, self._token,
                                  body)

    def _id_of(self, collection: str, name: str) -> str:
        (found,) = self._admin('GET', '/%s?name=%s' % (collection, name))[
            collection]
        return found['id']

    def add_endpoint(self, service_type: str, name: str, url: str) -> None:
        """A service and its public endpoint in the catalog."""
        service = self._admin('POST', '/services', {'service': {
            'type': service_type, 'name': name}})['service']
        self._admin('POST', '/endpoints', {'endpoint': {
            'service_id': service['id'], 'interface': 'public',
            'region_id': REGION, 'url': url}})

    def add_user(self, name: str, password: str, project: str,
                 role: str) -> None:
        """A user with ``role`` in ``project`` (the project made if new)."""
        try:
            project_id = self._id_of('projects', project)
        except ValueError:
            project_id = self._admin('POST', '/projects', {'project': {
                'name': project, 'domain_id': 'default'}})['project']['id']
        user_id = self._admin('POST', '/users', {'user': {
            'name': name, 'password': password, 'domain_id': 'default',
            'default_project_id': project_id}})['user']['id']
        role_id = self._id_of('roles', role)
        self._admin('PUT', '/projects/%s/users/%s/roles/%s' % (
            project_id, user_id, role_id))

    def client_environ(self, user='admin', password=ADMIN_PASSWORD,
                       project='admin') -> dict:
        """``OS_*`` variables for the clients, as that user."""
        return {'OS_AUTH_URL': self.url, 'OS_USERNAME': user,
                'OS_PASSWORD': password, 'OS_PROJECT_NAME': project,
                'OS_USER_DOMAIN_NAME': 'Default',
                'OS_PROJECT_DOMAIN_NAME': 'Default',
                'OS_IDENTITY_API_VERSION': '3',
                'OS_REGION_NAME': REGION}


def main(argv=None):
    """``python -m nova.testing.keystone BASE_DIR``: serve until Ctrl-C
    (for trying the clients by hand)."""
    argv = sys.argv[1:] if argv is None else argv
    server = KeystoneServer(argv[0]).start()
    print('Keystone on %s (admin / %s)' % (server.url, ADMIN_PASSWORD))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == '__main__':
    main()
