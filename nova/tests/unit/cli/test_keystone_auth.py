"""Where the nova CLI sends requests and with which token. A real
Keystone: nova/tests/integration/test_keystone_clients.py."""

import io
import socket

from nova.cli import client as client_mod
from nova.cli import keystone_auth
from nova.cli import shell
from nova.tests import base


def _args(environ, *argv):
    return shell.build_parser(environ).parse_args([*argv, 'list'])


def _closed_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class ResolveTest(base.TestCase):

    def test_without_keystone_the_embedded_defaults(self):
        self.assertEqual((client_mod.DEFAULT_ENDPOINT, 'admin:admin'),
                         keystone_auth.resolve(_args({})))
        self.assertEqual(('http://api:8774/v2.1', 't0k'),
                         keystone_auth.resolve(_args(
                             {'NOVA_ENDPOINT': 'http://api:8774/v2.1',
                              'OS_TOKEN': 't0k'})))

    def test_an_explicit_token_wins_over_the_auth_url(self):
        environ = {'OS_AUTH_URL': 'http://127.0.0.1:%d/v3' % _closed_port(),
                   'OS_TOKEN': 't0k'}
        self.assertEqual((client_mod.DEFAULT_ENDPOINT, 't0k'),
                         keystone_auth.resolve(_args(environ)))

    def test_missing_credentials_are_named(self):
        environ = {'OS_AUTH_URL': 'http://127.0.0.1:1/v3',
                   'OS_USERNAME': 'demo'}
        with self.assertRaises(client_mod.UsageError) as c:
            keystone_auth.resolve(_args(environ))
        self.assertIn('OS_PASSWORD, OS_PROJECT_NAME', str(c.exception))

    def test_an_unreachable_keystone_is_a_clear_failure(self):
        url = 'http://127.0.0.1:%d/v3' % _closed_port()
        environ = {'OS_AUTH_URL': url, 'OS_USERNAME': 'demo',
                   'OS_PASSWORD': 'x', 'OS_PROJECT_NAME': 'demo'}
        out, err = io.StringIO(), io.StringIO()
        code = shell.main(['list'], stdout=out, stderr=err,
                          environ=environ)
        self.assertEqual(shell.EXIT_FAILED, code)
        self.assertIn('ERROR (ClientException): Keystone at %s' % url,
                      err.getvalue())
