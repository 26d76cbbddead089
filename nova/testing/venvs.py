"""What the harnesses of other OpenStack services share: their virtual
environments, the section that makes them check Keystone tokens, and
stopping the process they serve from.

Keystone, Glance and Masakari each live in a virtual environment of
their own (``.venv-keystone``, ``.venv-glance``, ``.venv-masakari``,
made by ``tools/bootstrap`` when ``NOVA_BOOTSTRAP_<NAME>=1``), so that
their dependencies never mix with the project's.
"""

import json
import os
import subprocess
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def path(name: str) -> str:
    """The virtual environment ``.venv-<name>`` of this checkout."""
    return os.path.join(TOP, '.venv-' + name)


def binary(venv: str, name: str) -> str:
    return os.path.join(venv, 'bin', name)


def missing_reason(venv: str, names, flag: str) -> str | None:
    """Why the service cannot run from ``venv`` (one of ``names`` is not
    there: ``flag`` is the bootstrap variable that installs it), or
    None."""
    for name in names:
        if not os.access(binary(venv, name), os.X_OK):
            return ('%s not found: run %s=1 tools/bootstrap (tools/'
                    'run-tests does)' % (binary(venv, name), flag))
    return None


def authtoken_section(auth_url: str, user: str, password: str,
                      project: str) -> str:
    """``[keystone_authtoken]`` of a service that checks tokens with
    keystonemiddleware as ``user`` of ``project``."""
    return '\n'.join([
        '[keystone_authtoken]',
        'www_authenticate_uri = %s' % auth_url,
        'auth_url = %s' % auth_url,
        'auth_type = password',
        'username = %s' % user,
        'password = %s' % password,
        'project_name = %s' % project,
        'user_domain_name = Default',
        'project_domain_name = Default',
        ''])


def stop(popen: subprocess.Popen | None, timeout: float = 15) -> None:
    """Stop a server this harness started (its own child, so its PID is
    still its own until reaped): SIGTERM, SIGKILL after ``timeout``."""
    if popen is None or popen.poll() is not None:
        return
    popen.terminate()
    try:
        popen.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        popen.kill()
        popen.wait(timeout=timeout)


def json_request(url: str, method: str, token: str, body=None,
                 headers: dict | None = None) -> dict:
    """One JSON call to a service's API with a Keystone token (and
    ``headers``, e.g. a microversion); the parsed answer ({} when empty).
    An error status raises ``HTTPError``."""
    request = urllib.request.Request(
        url, method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={'Content-Type': 'application/json',
                 'Accept': 'application/json', 'X-Auth-Token': token,
                 **(headers or {})})
    with urllib.request.urlopen(request, timeout=30) as resp:
        data = resp.read()
    return json.loads(data) if data else {}
