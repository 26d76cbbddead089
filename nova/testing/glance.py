"""A throwaway Glance (the Image service) behind a test Keystone.

    glance = GlanceServer(os.path.join(tmp, 'glance'), keystone)
    glance.start()        # db_sync, service user, serve, catalog entry
    try:
        ...               # glance.url is the image endpoint
    finally:
        glance.stop()     # safe to call twice

The real ``glance`` package, from its own virtual environment
(``.venv-glance``, made by ``tools/bootstrap`` with
``NOVA_BOOTSTRAP_GLANCE=1``), on SQLite in ``base_dir`` with the file
store under ``base_dir/images``, tokens checked by keystonemiddleware
against ``keystone`` (a started ``nova.testing.keystone.KeystoneServer``).
Glance 33 has no standalone server any more (``glance-api`` only says so),
so its WSGI application (``glance.wsgi.api``) is served by werkzeug, as
Keystone's is, in a process of its own on 127.0.0.1, on a port below the
ephemeral range, and stopped by the PID recorded when it started.
``start`` registers the ``image`` service at ``url`` in Keystone's
catalog, so clients and nova find it there.
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

from nova.testing import keystone as keystone_mod
from nova.testing import rabbitmq
from nova.testing import venvs

LOG = logging.getLogger(__name__)

VENV = venvs.path('glance')
SERVICE_USER = ('glance', 'glance-service-pass', 'service')
START_TIMEOUT = 120

# Glance's WSGI application, served by werkzeug on the port given in
# argv[1]; argv is emptied first, as Glance parses it for its options.
# One request at a time, as Keystone's (nova.testing.keystone): on SQLite
# two write transactions at once fail with "database is locked".
_SERVE = '''
import sys
port = int(sys.argv.pop(1))
from werkzeug.serving import run_simple
from glance.wsgi.api import application
run_simple('127.0.0.1', port, application, threaded=False)
'''

# One file store ("local"), and the two reserved ones Glance insists on
# when stores are named (the import staging area and the tasks' work
# area), all under the run's directory.
_CONF = '''[DEFAULT]
log_file = {base}/glance-api.log
enabled_backends = local:file
[database]
connection = sqlite:///{base}/glance.sqlite
[glance_store]
default_backend = local
[local]
filesystem_store_datadir = {base}/images
[os_glance_staging_store]
filesystem_store_datadir = {base}/staging
[os_glance_tasks_store]
filesystem_store_datadir = {base}/tasks
[paste_deploy]
flavor = keystone
config_file = {paste}
{authtoken}'''


def venv_bin(name: str, venv: str = VENV) -> str:
    return venvs.binary(venv, name)


def missing_reason(venv: str = VENV) -> str | None:
    """Why a Glance cannot run here, or None when it can."""
    return (venvs.missing_reason(venv, ('glance-manage', 'python'),
                                 'NOVA_BOOTSTRAP_GLANCE')
            or keystone_mod.missing_reason())


class GlanceServer:

    def __init__(self, base_dir: str, keystone: keystone_mod.KeystoneServer,
                 venv: str = VENV, port: int | None = None):
        self.base_dir = os.path.abspath(base_dir)
        self.keystone = keystone
        self.venv = venv
        self.conf_file = os.path.join(self.base_dir, 'glance-api.conf')
        self.port: int | None = port
        self._popen: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """The image endpoint (what the catalog says)."""
        return 'http://127.0.0.1:%d' % self.port

    @property
    def store_dir(self) -> str:
        """Where the file store keeps image data."""
        return os.path.join(self.base_dir, 'images')

    @property
    def pid(self) -> int | None:
        return None if self._popen is None else self._popen.pid

    def _write_conf(self) -> None:
        user, password, project = SERVICE_USER
        paste = os.path.join(self.venv, 'etc', 'glance',
                             'glance-api-paste.ini')
        for name in ('images', 'staging', 'tasks'):
            os.makedirs(os.path.join(self.base_dir, name), exist_ok=True)
        with open(self.conf_file, 'w') as f:
            f.write(_CONF.format(
                base=self.base_dir, paste=paste,
                authtoken=venvs.authtoken_section(
                    self.keystone.url, user, password, project)))

    def start(self, register: bool = True) -> 'GlanceServer':
        """Serve, and (``register``) put the ``image`` service at ``url``
        in Keystone's catalog."""
        os.makedirs(self.base_dir, exist_ok=True)
        self._write_conf()
        processutils.execute(venv_bin('glance-manage', self.venv),
                             '--config-file', self.conf_file, 'db_sync')
        user, password, project = SERVICE_USER
        self.keystone.add_user(user, password, project=project,
                               role='admin')
        self.port = self.port or rabbitmq.free_port()
        env = dict(os.environ, OS_GLANCE_CONFIG_DIR=self.base_dir)
        log = open(os.path.join(self.base_dir, 'serve.log'), 'ab')
        with log:
            self._popen = subprocess.Popen(
                [venv_bin('python', self.venv), '-c', _SERVE,
                 str(self.port)], stdin=subprocess.DEVNULL, stdout=log,
                stderr=log, env=env, start_new_session=True)
        LOG.info('Glance (pid %d) starting on %s', self._popen.pid, self.url)
        self._wait_until_up()
        if register:
            self.keystone.add_endpoint('image', 'glance', self.url)
        return self

    def _wait_until_up(self) -> None:
        # The health check needs no token; the first request to it loads
        # the application (werkzeug imports it at start).
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert self._popen is not None
            if self._popen.poll() is not None:
                raise RuntimeError('Glance exited (%s); see %s' % (
                    self._popen.returncode, self.base_dir))
            try:
                with urllib.request.urlopen(self.url + '/healthcheck',
                                            timeout=5) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError('Glance not up after %d s; see %s'
                                   % (START_TIMEOUT, self.base_dir))
            time.sleep(0.2)

    def stop(self) -> None:
        """Stop the server started by ``start`` (by its PID), reaped."""
        popen, self._popen = self._popen, None
        venvs.stop(popen)

    # -- the image API, as a Keystone user ---------------------------------

    def request(self, method: str, path: str, token: str, body=None,
                data: bytes | None = None, content_type: str | None = None):
        """(status, parsed JSON or None) of one call to the image API."""
        headers = {'X-Auth-Token': token}
        if body is not None:
            data = json.dumps(body).encode()
            content_type = content_type or 'application/json'
        if content_type:
            headers['Content-Type'] = content_type
        request = urllib.request.Request(self.url + path, data=data,
                                         headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as resp:
                raw, status = resp.read(), resp.status
        except urllib.error.HTTPError as e:
            raw, status = e.read(), e.code
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, None

    def upload(self, token: str, name: str, path: str,
               disk_format: str, visibility: str = 'public',
               **properties) -> dict:
        """Create an image and upload ``path`` as its data; its record."""
        body = dict(properties, name=name, disk_format=disk_format,
                    container_format='bare', visibility=visibility)
        status, image = self.request('POST', '/v2/images', token, body)
        if status != 201:
            raise RuntimeError('Glance refused the image: %s %s'
                               % (status, image))
        with open(path, 'rb') as f:
            status, _ = self.request(
                'PUT', '/v2/images/%s/file' % image['id'], token,
                data=f.read(), content_type='application/octet-stream')
        if status != 204:
            raise RuntimeError('Glance refused the data of %s: %s'
                               % (image['id'], status))
        return self.request('GET', '/v2/images/%s' % image['id'], token)[1]


def main(argv=None):
    """``python -m nova.testing.glance BASE_DIR``: Keystone and Glance,
    served until Ctrl-C (for trying the clients by hand)."""
    argv = sys.argv[1:] if argv is None else argv
    keystone = keystone_mod.KeystoneServer(
        os.path.join(argv[0], 'keystone')).start()
    try:
        glance = GlanceServer(os.path.join(argv[0], 'glance'),
                              keystone).start()
        print('Keystone on %s (admin / %s), Glance on %s'
              % (keystone.url, keystone_mod.ADMIN_PASSWORD, glance.url))
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
        finally:
            glance.stop()
    finally:
        keystone.stop()


if __name__ == '__main__':
    main()
