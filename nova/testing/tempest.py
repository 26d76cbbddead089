"""Tempest's compute API tests against this project, as an operator runs them.

    python -m nova.testing.tempest [--regex R] [--concurrency N] [--keep]

Starts a throwaway Keystone (``keystone.KeystoneServer``), a real Glance
behind it (``glance.GlanceServer``, in the catalog as the image service,
with a small qcow2 image uploaded for Tempest's ``image_ref``) and
nova-all on the embedded default (two compute hosts on libvirt's test
driver, SQLite) with ``[image] backend = glance``, registers the compute
endpoint in Keystone's catalog, writes a
``tempest.conf`` that declares what the project supports and nothing more
(each feature it lacks set False, with the reason beside it), runs
``tempest run --regex R`` in a Tempest workspace under the run's
directory, prints Tempest's totals, and stops what it started, by the
PIDs recorded when it started them. ``tools/tempest`` installs Tempest in
its own virtual environment (``.venv-tempest``) first.

The run's directory (``--dir``, default a new one under ``/tmp``) keeps
the logs (``nova-all.log``, ``keystone/``, ``glance/``,
``workspace/tempest.log``) and
the ``tempest.conf``; it is removed at the end unless ``--keep`` or the
run failed to start.
"""

import argparse
import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from nova.image import qemu_img
from nova.testing import glance as glance_mod
from nova.testing import keystone as keystone_mod
from nova.testing import procs
from nova.testing import rabbitmq
from nova.testing import venvs

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
VENV = os.path.join(TOP, '.venv-tempest')
DEFAULT_REGEX = r'^tempest\.api\.compute'
# The fixed subset the test suite runs (nova/tests/integration/
# test_tempest_subset.py): servers and their actions (stop, start,
# reboot, rebuild, lock, delete), flavors, keypairs, services, quotas and
# limits, and server groups.
CI_SUBSET = (
    r'^tempest\.api\.compute\.('
    r'servers\.(test_create_server|test_servers\b|test_server_actions'
    r'|test_delete_server|test_instance_actions|test_servers_negative'
    r'|test_server_group)'
    r'|flavors\.|keypairs\.|admin\.test_services|admin\.test_quotas'
    r'|test_quotas|limits\.'
    r')')
SERVICE_USER = ('nova', 'nova-service-pass', 'service')
START_TIMEOUT = 120
# The image Tempest boots: a blank qcow2 (the guests of libvirt's test
# driver never read it), uploaded to Glance at start.
IMAGE_NAME = 'tempest-blank'
IMAGE_SIZE = 64 * 1024 ** 2

# What the project does not offer, and why; each becomes a False in
# tempest.conf so that Tempest skips the tests that need it instead of
# failing them.
UNSUPPORTED = {
    'service_available': {
        'neutron': 'ports come from the project\'s own network API',
        'cinder': 'no block storage service',
        'swift': 'no object storage',
        'placement': 'target choice uses the conductor\'s own claims',
    },
    'compute-feature-enabled': {
        'resize': 'not implemented',
        'cold_migration': 'not implemented',
        'live_migration': 'not implemented',
        'block_migration_for_live_migration': 'not implemented',
        'rescue': 'not implemented',
        'shelve': 'not implemented',
        'shelve_migrate': 'not implemented',
        'change_password': 'no guest agent to set a password',
        'personality': 'no file injection (removed at 2.57 in Nova)',
        'config_drive': 'no config drive',
        'interface_attach': 'no interface attach',
        'vnc_console': 'no console proxy',
        'spice_console': 'no console proxy',
        'serial_console': 'no console proxy',
        'attach_encrypted_volume': 'no block storage service',
        'volume_multiattach': 'no block storage service',
        'metadata_service': 'no metadata service',
        'console_output': 'console logs are not served by the API',
        'hostname_fqdn_sanitization': 'not implemented',
    },
}

# Tests that need something the project does not offer but that no
# tempest.conf option turns off, and why: passed to ``tempest run
# --exclude-list`` (a regex per line, the reason above it), as
# deployments keep their own exclude lists. Every entry is a missing
# feature, never a test that fails against a feature the project claims.
EXCLUDED = {
    r'test_server_actions\.ServerActionsTestOtherA\.'
    r'test_remove_server_all_security_groups':
        'no security groups: the project\'s networking does not filter '
        'traffic, so it shows none rather than an unenforced "default"',
}


def exclude_list() -> str:
    """The ``--exclude-list`` file's text: each regex, its reason above."""
    lines = []
    for regex, why in EXCLUDED.items():
        lines.append('# %s' % why)
        lines.append(regex)
    lines.append('')
    return '\n'.join(lines)


@dataclasses.dataclass(frozen=True)
class Totals:
    """Tempest's counts for one run."""
    ran: int = 0
    passed: int = 0
    skipped: int = 0
    failed: int = 0

    def line(self) -> str:
        return ('tempest: ran %d, passed %d, skipped %d, failed %d'
                % (self.ran, self.passed, self.skipped, self.failed))


def missing_reason(venv: str = VENV) -> str | None:
    """Why Tempest cannot run here, or None when it can."""
    if not os.access(os.path.join(venv, 'bin', 'tempest'), os.X_OK):
        return 'tempest not found in %s: run tools/tempest' % venv
    return glance_mod.missing_reason()


def _get_json(url: str, token: str) -> dict:
    return venvs.json_request(url, 'GET', token)


def _credentials(keystone_url: str) -> list[str]:
    user, password, project = SERVICE_USER
    return [
        'auth_url = %s' % keystone_url,
        'auth_type = password',
        'username = %s' % user,
        'password = %s' % password,
        'project_name = %s' % project,
        'user_domain_name = Default',
        'project_domain_name = Default',
    ]


def nova_conf(base: str, api_port: int, keystone_url: str) -> str:
    """nova.conf of the nova-all under test: the embedded default behind
    Keystone, its images from Glance (found in the catalog, read as the
    service user)."""
    return '\n'.join([
        '[DEFAULT]',
        'state_path = %s' % os.path.join(base, 'state'),
        'log_file = %s' % os.path.join(base, 'nova-all.log'),
        '[api]',
        'listen = 127.0.0.1',
        'listen_port = %d' % api_port,
        'auth_strategy = keystone',
        '[keystone_authtoken]',
        'www_authenticate_uri = %s' % keystone_url,
    ] + _credentials(keystone_url) + [
        '[image]',
        'backend = glance',
        '[glance]',
    ] + _credentials(keystone_url) + [''])


def tempest_conf(keystone_url: str, image: str, flavor: str,
                 max_microversion: str, build_timeout: int = 120,
                 image_alt: str | None = None,
                 flavor_alt: str | None = None) -> str:
    """tempest.conf declaring exactly what the project supports; the
    ``_alt`` image and flavor (default: the same) are the second ones
    Tempest rebuilds and filters with."""
    lines = [
        '[DEFAULT]',
        'log_file = tempest.log',
        '[auth]',
        'admin_username = admin',
        'admin_password = %s' % keystone_mod.ADMIN_PASSWORD,
        'admin_project_name = admin',
        'admin_domain_name = Default',
        'use_dynamic_credentials = True',
        '[identity]',
        'uri_v3 = %s' % keystone_url,
        'auth_version = v3',
        'region = %s' % keystone_mod.REGION,
        '[identity-feature-enabled]',
        'api_v2 = False',
        '[compute]',
        'image_ref = %s' % image,
        'image_ref_alt = %s' % (image_alt or image),
        'flavor_ref = %s' % flavor,
        'flavor_ref_alt = %s' % (flavor_alt or flavor),
        'min_microversion = 2.1',
        'max_microversion = %s' % max_microversion,
        'build_timeout = %d' % build_timeout,
        # NOTE: no fixed_network_name: Tempest would look the network up
        # through os-networks at every microversion, which is gone from
        # 2.36 as in Nova (404), and every test above 2.35 that boots a
        # server would fail. os-networks' own tests skip without it.
        '[validation]',
        '# No guest is reachable: the hosts run libvirt\'s test driver.',
        'run_validation = False',
    ]
    for section, features in UNSUPPORTED.items():
        lines.append('[%s]' % section)
        if section == 'service_available':
            lines.append('nova = True')
            lines.append('# a real Glance, in the catalog')
            lines.append('glance = True')
        for name, why in features.items():
            lines.append('# %s' % why)
            lines.append('%s = False' % name)
    lines.append('')
    return '\n'.join(lines)


def parse_totals(output: str) -> Totals:
    """Tempest's ``Totals`` block (stestr's), e.g. ``- Passed: 59``."""
    counts = {}
    for raw in output.splitlines():
        line = raw.strip()
        if line.startswith('Ran: '):
            counts['ran'] = int(line.split()[1])
        for name in ('Passed', 'Skipped', 'Failed'):
            prefix = '- %s: ' % name
            if line.startswith(prefix):
                counts[name.lower()] = int(line[len(prefix):].split()[0])
    return Totals(**counts)


class Run:
    """Keystone and nova-all for one Tempest run, stopped by their PIDs."""

    def __init__(self, base: str):
        self.base = base
        self.keystone = keystone_mod.KeystoneServer(
            os.path.join(base, 'keystone'))
        self.glance = glance_mod.GlanceServer(os.path.join(base, 'glance'),
                                              self.keystone)
        self.image_id: str | None = None
        self.alt_image_id: str | None = None
        self.api_port = rabbitmq.free_port()
        self._nova: subprocess.Popen | None = None
        self._nova_record: procs.ProcessRecord | None = None

    @property
    def api_url(self) -> str:
        return 'http://127.0.0.1:%d/v2.1' % self.api_port

    def start(self) -> None:
        self.keystone.start()
        user, password, project = SERVICE_USER
        self.keystone.add_user(user, password, project=project,
                               role='admin')
        self.keystone.add_endpoint('compute', 'nova', self.api_url)
        # Tempest's compute tests read and make images in Glance, and
        # nova-api and the compute hosts read them from it.
        self.glance.start()
        self.image_id = self._upload_image(IMAGE_NAME)
        # A second, distinct image: the tests that filter servers by
        # image or rebuild onto another need two.
        self.alt_image_id = self._upload_image(IMAGE_NAME + '-alt')
        conf = os.path.join(self.base, 'nova.conf')
        with open(conf, 'w') as f:
            f.write(nova_conf(self.base, self.api_port, self.keystone.url))
        with open(os.path.join(self.base, 'nova-all.out'), 'ab') as out:
            self._nova = subprocess.Popen(
                # This checkout's nova-all, with the interpreter running
                # this (a console script would be the installed one's).
                [sys.executable, '-m', 'nova.cmd.all', '--config-file',
                 conf], cwd=TOP, stdin=subprocess.DEVNULL,
                stdout=out, stderr=out, start_new_session=True)
        # Recorded now: stop signals this process, never a later one that
        # reused its PID.
        self._nova_record = procs.ProcessRecord.of(self._nova.pid)
        self._wait_for_api()

    def _upload_image(self, name: str) -> str:
        """A public qcow2 image in Glance (the admin's: only an
        administrator makes images public); its id."""
        path = os.path.join(self.base, name + '.qcow2')
        qemu_img.create(path, 'qcow2', size=IMAGE_SIZE)
        return self.glance.upload(self.keystone.token(), name, path,
                                  'qcow2')['id']

    def _wait_for_api(self) -> None:
        token = self.keystone.token()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert self._nova is not None
            if self._nova.poll() is not None:
                raise RuntimeError('nova-all exited (%s); see %s' % (
                    self._nova.returncode, self.base))
            try:
                _get_json(self.api_url + '/flavors', token)
                return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError('nova-all not up after %d s; see %s'
                                   % (START_TIMEOUT, self.base))
            time.sleep(0.2)

    def image_and_flavor(self) -> tuple[str, str, str]:
        """The image uploaded to Glance at start, the embedded default's
        flavor and the API's maximum microversion."""
        assert self.image_id is not None
        token = self.keystone.token()
        flavors = _get_json(self.api_url + '/flavors', token)['flavors']
        root = _get_json(self.api_url + '/', token)['version']
        return self.image_id, flavors[0]['id'], root['version']

    def alt_flavor(self) -> str:
        """A second flavor (the admin's ``POST /flavors``), for the tests
        that filter servers by flavor or need two; its id."""
        return venvs.json_request(
            self.api_url + '/flavors', 'POST', self.keystone.token(),
            {'flavor': {'name': 'tempest-alt', 'ram': 96, 'vcpus': 1,
                        'disk': 1}})['flavor']['id']

    def stop(self) -> None:
        popen, self._nova = self._nova, None
        if popen is not None:
            if self._nova_record is not None:
                procs.terminate(self._nova_record, timeout=60)
            popen.wait()
        self.glance.stop()
        self.keystone.stop()


def run_tempest(base: str, conf_text: str, regex: str, concurrency: int,
                venv: str = VENV) -> tuple[int, Totals]:
    workspace = os.path.join(base, 'workspace')
    tempest = os.path.join(venv, 'bin', 'tempest')
    # The workspace registry stays in the run's directory: the user's
    # ~/.tempest/workspace.yaml would refuse a second run's name.
    subprocess.run([tempest, 'init', '--workspace-path',
                    os.path.join(base, 'workspace.yaml'), workspace],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(workspace, 'etc', 'tempest.conf'), 'w') as f:
        f.write(conf_text)
    excluded = os.path.join(workspace, 'etc', 'exclude-list.txt')
    with open(excluded, 'w') as f:
        f.write(exclude_list())
    print('tempest: %d tests excluded, with their reasons, in %s'
          % (len(EXCLUDED), excluded))
    proc = subprocess.Popen(
        [tempest, 'run', '--regex', regex, '--exclude-list', excluded,
         '--concurrency', str(concurrency)], cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        lines.append(line)
    rc = proc.wait()
    return rc, parse_totals(''.join(lines))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='tools/tempest')
    parser.add_argument('--regex', default=DEFAULT_REGEX)
    parser.add_argument('--concurrency', type=int, default=2)
    parser.add_argument('--dir', help='run directory (default: new, /tmp)')
    parser.add_argument('--keep', action='store_true',
                        help='keep the run directory')
    parser.add_argument('--venv', default=VENV,
                        help='Tempest\'s virtual environment')
    args = parser.parse_args(argv)
    # A SIGTERM (a CI timeout, a user's kill) stops what the run started
    # too: it unwinds through run()'s finally.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    reason = missing_reason(args.venv)
    if reason:
        print('tempest: cannot run: %s' % reason, file=sys.stderr)
        return 2
    base = os.path.abspath(args.dir or tempfile.mkdtemp(
        prefix='nova-tempest-'))
    rc, totals = run(base, args.regex, args.concurrency, args.venv,
                     keep=args.keep)
    print(totals.line())
    return rc


def run(base: str, regex: str, concurrency: int, venv: str = VENV,
        keep: bool = True) -> tuple[int, Totals]:
    """Starts Keystone and nova-all in ``base``, runs Tempest's tests
    matching ``regex``, stops both; Tempest's exit status and totals.
    ``base`` is removed at the end unless ``keep`` or the start failed."""
    os.makedirs(base, exist_ok=True)
    stack = Run(base)
    try:
        try:
            stack.start()
        except Exception:
            keep = True
            raise
        image, flavor, microversion = stack.image_and_flavor()
        conf = tempest_conf(stack.keystone.url, image, flavor, microversion,
                            flavor_alt=stack.alt_flavor(),
                            image_alt=stack.alt_image_id)
        return run_tempest(base, conf, regex, concurrency, venv)
    finally:
        stack.stop()
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            print('tempest: run directory kept: %s' % base)


if __name__ == '__main__':
    sys.exit(main())
