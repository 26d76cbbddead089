import http.server
import json
import socket
import threading

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from nova.compute import api as compute_api
from nova.conf import network as network_conf
from nova import context as nova_context
from nova import exception
from nova.model import external_event
from nova.network import events
from nova import objects
from nova.tests import base

PORT_ID = '4b1c3f2e-7a6d-4e5f-9a8b-0c1d2e3f4a5b'


class RecordingComputeRPCAPI:
    """Stands in for the RPC client (tested in compute/test_rpcapi.py)."""

    def __init__(self, fail=False):
        self.casts = []
        self.fail = fail

    def external_instance_event(self, ctxt, instances, events, host=None):
        if self.fail:
            raise RuntimeError('bus is down')
        self.casts.append((host, [i.uuid for i in instances], events))


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers['Content-Length'])
        self.server.requests.append(
            (self.path, dict(self.headers), json.loads(self.rfile.read(
                length))))
        self.send_response(self.server.answer)
        self.send_header('Content-Type', 'application/json')
        self.end_headers()
        self.wfile.write(b'{"events": []}')

    def log_message(self, *args):
        pass


class _SenderTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctxt = nova_context.get_admin_context()
        self.instance = objects.Instance(self.ctxt, display_name='vm1',
                                         host='compute1').create()
        self.event = external_event.InstanceExternalEvent(
            self.instance.uuid, 'network-vif-plugged', PORT_ID)

    def _http_server(self, answer=200):
        server = http.server.HTTPServer(('127.0.0.1', 0), _Handler)
        server.requests = []
        server.answer = answer
        thread = threading.Thread(target=server.serve_forever,
                                  kwargs={'poll_interval': 0.01},
                                  daemon=True)
        thread.start()
        self.addCleanup(thread.join)
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return server


class TestSenders(_SenderTestCase):

    def test_rest_posts_the_compute_api_body_with_the_token(self):
        server = self._http_server()
        sender = events.RESTEventSender(
            'http://127.0.0.1:%d/v2.1/' % server.server_port, 'admin:admin')
        self.assertTrue(sender.send(self.ctxt, [self.event]))
        [(path, headers, body)] = server.requests
        self.assertEqual('/v2.1/os-server-external-events', path)
        self.assertEqual('admin:admin', headers['X-Auth-Token'])
        self.assertEqual({'events': [{
            'server_uuid': self.instance.uuid, 'name': 'network-vif-plugged',
            'tag': PORT_ID, 'status': 'completed'}]}, body)

    def test_rest_failures_say_whether_to_retry(self):
        server = self._http_server(answer=500)
        url = 'http://127.0.0.1:%d/v2.1' % server.server_port
        self.assertFalse(events.RESTEventSender(url, 't').send(
            self.ctxt, [self.event]))
        server.answer = 404     # the instances are gone: nothing to retry
        self.assertTrue(events.RESTEventSender(url, 't').send(
            self.ctxt, [self.event]))

    def test_rest_unreachable_api_is_retried(self):
        server = self._http_server()
        url = 'http://127.0.0.1:%d/v2.1' % server.server_port
        server.shutdown()
        server.server_close()
        self.assertFalse(events.RESTEventSender(url, 't', timeout=5).send(
            self.ctxt, [self.event]))

    def test_rpc_casts_to_its_own_host(self):
        rpcapi = RecordingComputeRPCAPI()
        gone = external_event.InstanceExternalEvent(
            '00000000-0000-0000-0000-000000000000', 'network-vif-plugged',
            PORT_ID)
        sender = events.RPCEventSender('compute2', rpcapi)
        self.assertTrue(sender.send(self.ctxt, [self.event, gone]))
        self.assertEqual([('compute2', [self.instance.uuid], [self.event])],
                         rpcapi.casts)
        self.assertFalse(events.RPCEventSender(
            'compute2', RecordingComputeRPCAPI(fail=True)).send(
                self.ctxt, [self.event]))

    def test_compute_api_routes_to_the_instance_host(self):
        rpcapi = RecordingComputeRPCAPI()
        sender = events.ComputeAPIEventSender(
            compute_api.API(rpcapi, conductor_api=None))
        self.assertTrue(sender.send(self.ctxt, [self.event]))
        self.assertEqual([('compute1', [self.instance.uuid], [self.event])],
                         rpcapi.casts)

    def test_build_sender_prefers_compute_api_then_rest_then_rpc(self):
        from nova.conf import CONF
        api = compute_api.API(RecordingComputeRPCAPI(), conductor_api=None)
        self.assertIsInstance(events.build_sender(CONF, 'h', compute_api=api),
                              events.ComputeAPIEventSender)
        rpcapi = RecordingComputeRPCAPI()
        self.assertIsInstance(
            events.build_sender(CONF, 'h', compute_rpcapi=rpcapi),
            events.RPCEventSender)
        self.flags(group='network', events_api_url='http://api:8774/v2.1')
        sender = events.build_sender(CONF, 'h', compute_rpcapi=rpcapi)
        self.assertEqual('http://api:8774/v2.1/os-server-external-events',
                         sender.url)
        # Over RPC, the caller hands the network layer its client.
        self.flags(group='network', events_api_url=None)
        self.assertRaises(ValueError, events.build_sender, CONF, 'h')


class _Tokens:
    """A token source that counts what the sender asks of it."""

    def __init__(self, fail=False):
        self.fail = fail
        self.invalidated = 0

    def get(self):
        if self.fail:
            raise OSError('Keystone is unreachable')
        return 'tok-%d' % self.invalidated

    def invalidate(self):
        self.invalidated += 1


class TestKeystoneTokens(_SenderTestCase):

    def test_a_refused_token_is_renewed_for_the_retry(self):
        server = self._http_server(answer=401)
        tokens = _Tokens()
        sender = events.RESTEventSender(
            'http://127.0.0.1:%d/v2.1' % server.server_port, tokens)
        self.assertFalse(sender.send(self.ctxt, [self.event]))
        self.assertEqual(1, tokens.invalidated)
        server.answer = 200
        self.assertTrue(sender.send(self.ctxt, [self.event]))
        self.assertEqual(['tok-0', 'tok-1'], [
            headers['X-Auth-Token'] for _, headers, _ in server.requests])

    def test_no_token_means_retry_later_and_nothing_posted(self):
        server = self._http_server()
        sender = events.RESTEventSender(
            'http://127.0.0.1:%d/v2.1' % server.server_port,
            _Tokens(fail=True))
        self.assertFalse(sender.send(self.ctxt, [self.event]))
        self.assertEqual([], server.requests)

    def _conf(self, **credentials):
        # A configuration of its own: keystoneauth registers the plugin's
        # options (auth-url required) on the one it loads from.
        conf = cfg.ConfigOpts()
        network_conf.register_opts(conf)
        # build_sender registers auth_type before it reads it: overridden
        # here first.
        network_conf.register_keystoneauth_opts(conf)
        conf([], project='nova', default_config_files=[])
        conf.set_override('events_api_url', 'http://127.0.0.1:1/v2.1',
                          group='network')
        conf.set_override('auth_type', credentials.pop('auth_type'),
                          group='network')
        if credentials:
            # The plugin's options, registered as keystoneauth would,
            # auth_url (required) set first.
            conf.register_opts(ks_loading.get_auth_plugin_conf_options(
                'password'), group='network')
            for name in sorted(credentials, key=lambda n: n != 'auth_url'):
                conf.set_override(name, credentials[name], group='network')
        return conf

    def test_keystone_credentials_pick_keystone_tokens(self):
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            closed = s.getsockname()[1]
        conf = self._conf(auth_type='password',
                          auth_url='http://127.0.0.1:%d/v3' % closed,
                          username='nova', password='p',
                          project_name='service',
                          user_domain_name='Default',
                          project_domain_name='Default')
        sender = events.build_sender(conf, 'h', compute_rpcapi=object())
        self.assertIsInstance(sender.tokens, events.KeystoneToken)
        # Keystone down: a retry later, not a crash.
        self.assertRaises(OSError, sender.tokens.get)
        self.assertFalse(sender.send(self.ctxt, [self.event]))

    def test_incomplete_keystone_credentials_are_refused(self):
        conf = self._conf(auth_type='password')
        with self.assertRaises(exception.InvalidConfiguration) as c:
            events.build_sender(conf, 'h', compute_rpcapi=object())
        self.assertIn('[network]', str(c.exception))
