"""make_app and serve: the app over a real socket."""

import json
import os
import socket
import urllib.error
import urllib.request

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from nova.api.openstack import auth
from nova.api import wsgi as api_wsgi
from nova.conf import CONF
from nova.conf import keystone as keystone_conf
from nova import exception
from nova.tests import base
from nova.tests.unit.api.openstack import fakes


class MakeAppTest(base.TestCase):

    def test_serve_version_document_with_options(self):
        self.flags(compute_link_prefix='https://cloud.example:8774/',
                   group='api')
        # The version document needs no compute API.
        app = api_wsgi.make_app(compute_api=None, image_store=object())
        api = api_wsgi.serve(app, '127.0.0.1', 0)
        self.addCleanup(api.stop)
        with urllib.request.urlopen(api.url + '/v2.1', timeout=5) as resp:
            self.assertEqual(200, resp.status)
            doc = json.loads(resp.read())
        self.assertEqual('https://cloud.example:8774/v2.1/',
                         doc['version']['links'][0]['href'])

    def test_serve_defaults_to_the_api_options(self):
        self.flags(listen='127.0.0.1', listen_port=0, group='api')
        api = api_wsgi.serve(api_wsgi.make_app(None, image_store=object()))
        self.addCleanup(api.stop)
        self.assertEqual('127.0.0.1', api.host)
        self.assertNotEqual(0, api.port)


class KeystoneAppTest(base.TestCase):
    """The app behind keystonemiddleware's auth_token. No Keystone runs
    here: only what needs no token validation is exercised (the real
    Keystone: nova/tests/integration/test_keystone_clients.py).

    Each test has a configuration of its own: auth_token registers the
    options of the auth plugin it loads (some required) on the
    configuration it is given, which must not outlive the test."""

    def _conf(self, **credentials):
        conf = cfg.ConfigOpts()
        keystone_conf.register_opts(conf)
        conf([], project='nova', default_config_files=[])
        if credentials.get('auth_type'):
            conf.register_opts(ks_loading.get_auth_plugin_conf_options(
                credentials['auth_type']), group='keystone_authtoken')
        for name, value in credentials.items():
            conf.set_override(name, value, group='keystone_authtoken')
        return conf

    def test_the_options_are_registered_and_checked_whatever_the_strategy(
            self):
        # A configuration nothing registered [keystone_authtoken] on, as a
        # test's or harness's: make_app registers it, then reads it all.
        path = os.path.join(self.tmp, 'nova.conf')
        with open(path, 'w') as f:
            f.write('[keystone_authtoken]\nhttp_connect_timeout = soon\n')
        conf = cfg.ConfigOpts()
        conf(['--config-file', path], project='nova',
             default_config_files=[])
        self.assertEqual('noauth2', CONF.api.auth_strategy)
        with self.assertRaises(exception.InvalidConfiguration) as c:
            api_wsgi.make_app(compute_api=None, image_store=object(),
                              auth_token_conf=conf)
        self.assertIn('[keystone_authtoken] http_connect_timeout',
                      str(c.exception))
        self.assertIsNone(conf.keystone_authtoken.auth_type)

    def test_keystone_without_service_credentials_is_refused(self):
        self.flags(auth_strategy='keystone', group='api')
        with self.assertRaises(exception.InvalidConfiguration) as c:
            api_wsgi.make_app(compute_api=None, image_store=object())
        self.assertIn('[keystone_authtoken]', str(c.exception))

    def test_incomplete_service_credentials_are_refused(self):
        conf = self._conf(auth_type='password')
        with self.assertRaises(exception.InvalidConfiguration) as c:
            api_wsgi.keystone_auth_token(object(), conf)
        self.assertIn('auth_url', str(c.exception))

    def test_discovery_is_public_and_the_rest_needs_a_token(self):
        conf = self._conf(auth_type='password',
                          auth_url='http://127.0.0.1:1/v3', username='nova',
                          password='secret', project_name='service',
                          user_domain_name='Default',
                          project_domain_name='Default',
                          www_authenticate_uri='http://127.0.0.1:1/v3')
        app = api_wsgi.make_app(compute_api=None, image_store=object(),
                                authenticator=auth.KeystoneAuth(),
                                auth_token_conf=conf)
        api = api_wsgi.serve(app, '127.0.0.1', 0)
        self.addCleanup(api.stop)
        with urllib.request.urlopen(api.url + '/v2.1', timeout=5) as resp:
            self.assertEqual(200, resp.status)
        # No token, and a client's own identity headers, which auth_token
        # removes: the API's 401 fault.
        request = urllib.request.Request(
            api.url + '/v2.1/servers',
            headers={'X-Identity-Status': 'Confirmed', 'X-User-Id': 'u',
                     'X-Project-Id': 'p', 'X-Roles': 'admin'})
        with self.assertRaises(urllib.error.HTTPError) as c:
            urllib.request.urlopen(request, timeout=5)
        self.assertEqual(401, c.exception.code)
        self.assertIn('unauthorized', json.loads(c.exception.read()))


class RawHTTPTest(fakes.APITestCase):
    """Requests only a raw socket can send."""

    def setUp(self):
        super().setUp()
        self.server = api_wsgi.serve(self.app, '127.0.0.1', 0)
        self.addCleanup(self.server.stop)

    def send(self, raw: bytes) -> bytes:
        with socket.create_connection(('127.0.0.1', self.server.port),
                                      timeout=5) as sock:
            sock.sendall(raw)
            sock.shutdown(socket.SHUT_WR)
            chunks = []
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    return b''.join(chunks)
                chunks.append(chunk)

    def test_post_without_length_has_no_body(self):
        instance = self.make_instance()
        reply = self.send(
            b'POST /v2.1/servers/%s/action HTTP/1.1\r\nHost: x\r\n'
            b'X-Auth-Token: admin:admin\r\n'
            b'Content-Type: application/json\r\n\r\n{"os-stop": null}'
            % instance.uuid.encode())
        self.assertTrue(reply.startswith(b'HTTP/1.0 400 '), reply)
        self.assertIn(b'a JSON body is required', reply)
        self.assertIsNone(self.reload(instance).task_state)

    def test_chunked_body_is_411(self):
        instance = self.make_instance()
        reply = self.send(
            b'POST /v2.1/servers/%s/action HTTP/1.1\r\nHost: x\r\n'
            b'X-Auth-Token: admin:admin\r\nTransfer-Encoding: chunked\r\n'
            b'Content-Type: application/json\r\n\r\n'
            b'11\r\n{"os-stop": null}\r\n0\r\n\r\n' % instance.uuid.encode())
        self.assertTrue(reply.startswith(b'HTTP/1.0 411 '), reply)
        self.assertIsNone(self.reload(instance).task_state)

    def test_encoded_traversal_in_the_raw_path(self):
        instance = self.make_instance()
        for path in (b'/v2.1/servers/%2e%2e/action',
                     b'/v2.1/servers/%2E%2E%2Fos-services',
                     b'/v2.1/servers/' + instance.uuid.encode()
                     + b'/%2e%2e/%2e%2e/os-services'):
            with self.subTest(path=path):
                reply = self.send(
                    b'POST %s HTTP/1.1\r\nHost: x\r\nX-Auth-Token: '
                    b'admin:admin\r\nContent-Type: application/json\r\n'
                    b'Content-Length: 17\r\n\r\n{"os-stop": null}' % path)
                self.assertTrue(reply.startswith((b'HTTP/1.0 400 ',
                                                  b'HTTP/1.0 404 ')), reply)
        self.assertIsNone(self.reload(instance).task_state)
