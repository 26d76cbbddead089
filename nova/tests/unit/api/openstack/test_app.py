"""The application: discovery, auth, microversion headers, body handling,
request ids and path checks, through real requests (no socket)."""

import json

from nova.api.openstack import api_version as av
from nova.api.openstack import app as app_mod
from nova.tests import base
from nova.tests.unit.api.openstack import fakes

MAX = str(av.MAX_VERSION)


class VersionDiscoveryTest(fakes.APITestCase):

    def test_root_lists_v20_then_v21_without_auth(self):
        response = self.request('GET', '/', token=None)
        self.assertEqual(200, response.status_int)
        self.assertEqual({'versions': [
            {'id': 'v2.0', 'status': 'SUPPORTED', 'version': '',
             'min_version': '', 'updated': '2011-01-21T11:33:21Z',
             'links': [{'rel': 'self', 'href': 'http://localhost/v2/'}]},
            {'id': 'v2.1', 'status': 'CURRENT', 'version': MAX,
             'min_version': '2.1', 'updated': '2013-07-23T11:33:21Z',
             'links': [{'rel': 'self', 'href': 'http://localhost/v2.1/'}]},
        ]}, response.json)

    def test_v20_document(self):
        for path in ('/v2', '/v2/'):
            with self.subTest(path=path):
                response = self.request('GET', path, token=None)
                self.assertEqual(200, response.status_int)
                self.assertEqual({'version': {
                    'id': 'v2.0', 'status': 'SUPPORTED', 'version': '',
                    'min_version': '', 'updated': '2011-01-21T11:33:21Z',
                    'links': [{'rel': 'self',
                               'href': 'http://localhost/v2/'},
                              {'rel': 'describedby', 'type': 'text/html',
                               'href': 'https://docs.openstack.org/'}],
                    'media-types': [{
                        'base': 'application/json',
                        'type': 'application/vnd.openstack.compute+json;'
                                'version=2'}]}}, response.json)
        # Only its version document: v2.0's resources are not served.
        self.assertFault(self.request('GET', '/v2/servers'), 404,
                         'itemNotFound')

    def test_v21_document(self):
        for path in ('/v2.1', '/v2.1/'):
            with self.subTest(path=path):
                response = self.request('GET', path, token=None)
                self.assertEqual(200, response.status_int)
                version = response.json['version']
                self.assertEqual(MAX, version['version'])
                self.assertEqual(
                    'application/vnd.openstack.compute+json;version=2.1',
                    version['media-types'][0]['type'])

    def test_maximum_is_295_and_latest_answers_it(self):
        # 2.95: the version in which evacuate last changed.
        self.assertEqual('2.95', MAX)
        (_v20, version) = self.request('GET', '/',
                                       token=None).json['versions']
        self.assertEqual('2.95', version['version'])
        response = self.request('GET', '/v2.1/servers', version='latest')
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual('compute 2.95',
                         response.headers['OpenStack-API-Version'])
        self.assertFault(self.request('GET', '/v2.1/servers',
                                      version='2.96'), 406, 'computeFault')

    def test_unknown_major_version_is_404(self):
        self.assertFault(self.request('GET', '/v3/servers'), 404,
                         'itemNotFound')


class AuthTest(fakes.APITestCase):

    def test_missing_token_is_401(self):
        response = self.request('GET', '/v2.1/servers', token=None)
        self.assertFault(response, 401, 'unauthorized')
        self.assertEqual('Token', response.headers['WWW-Authenticate'])

    def test_static_tokens(self):
        from nova.api.openstack import auth
        from nova.api import wsgi as api_wsgi
        self.app = api_wsgi.make_app(
            self.compute_api, image_store=self.images,
            authenticator=auth.StaticTokenAuth(auth.parse_static_tokens(
                ['good:alice:demo', 'root:ops:admin:admin'])))
        self.assertEqual(200, self.request('GET', '/v2.1/servers',
                                           token='good').status_int)
        self.assertFault(self.request('GET', '/v2.1/servers',
                                      token='alice:demo'), 401,
                         'unauthorized')
        self.assertFault(self.request('GET', '/v2.1/os-services',
                                      token='good'), 403, 'forbidden')
        self.assertEqual(200, self.request('GET', '/v2.1/os-services',
                                           token='root').status_int)


class MicroversionTest(fakes.APITestCase):

    def test_default_version_headers(self):
        response = self.request('GET', '/v2.1/servers')
        self.assertEqual('compute 2.1',
                         response.headers['OpenStack-API-Version'])
        self.assertEqual('2.1',
                         response.headers['X-OpenStack-Nova-API-Version'])
        self.assertEqual(
            'OpenStack-API-Version, X-OpenStack-Nova-API-Version',
            response.headers['Vary'])

    def test_latest(self):
        response = self.request('GET', '/v2.1/servers', version='latest')
        self.assertEqual('compute ' + MAX,
                         response.headers['OpenStack-API-Version'])

    def test_legacy_header(self):
        response = self.request(
            'GET', '/v2.1/servers',
            headers={'X-OpenStack-Nova-API-Version': '2.14'})
        self.assertEqual('2.14',
                         response.headers['X-OpenStack-Nova-API-Version'])

    def test_out_of_range_is_406(self):
        response = self.request('GET', '/v2.1/servers', version='2.999')
        message = self.assertFault(response, 406, 'computeFault')
        self.assertIn('Version 2.999 is not supported by the API. Minimum '
                      'is 2.1 and maximum is %s.' % MAX, message)
        self.assertIn('OpenStack-API-Version', response.headers['Vary'])

    def test_malformed_is_400(self):
        self.assertFault(self.request('GET', '/v2.1/servers',
                                      version='2.x'), 400, 'badRequest',
                         'invalid format')

    def test_versions_documents_are_not_versioned(self):
        response = self.request('GET', '/v2.1', version='2.999')
        self.assertEqual(200, response.status_int)
        self.assertNotIn('OpenStack-API-Version', response.headers)


class RequestHandlingTest(fakes.APITestCase):

    def test_request_ids(self):
        response = self.request('GET', '/v2.1/servers')
        request_id = response.headers['X-OpenStack-Request-ID']
        self.assertTrue(request_id.startswith('req-'))
        self.assertEqual(request_id,
                         response.headers['X-Compute-Request-Id'])

    def test_request_id_is_the_action_request_id(self):
        instance = self.make_instance()
        response = self.action(instance, {'os-stop': None})
        self.assertEqual(202, response.status_int)
        (action,) = fakes.objects.InstanceAction.get_by_instance_uuid(
            self.ctx, instance.uuid)
        self.assertEqual(response.headers['X-OpenStack-Request-ID'],
                         action.request_id)

    def test_malformed_json_is_400_and_changes_nothing(self):
        instance = self.make_instance()
        response = self.action(instance, None, raw=b'{"os-stop": ')
        self.assertFault(response, 400, 'badRequest', 'Malformed request')
        self.assertIsNone(self.reload(instance).task_state)
        self.assertEqual([], self.compute_rpc.casts)

    def test_non_utf8_body_is_400(self):
        response = self.request('POST', '/v2.1/servers', raw=b'\xff\xfe')
        self.assertFault(response, 400, 'badRequest')

    def test_wrong_content_type_is_415(self):
        response = self.request(
            'POST', '/v2.1/servers', raw=b'<server/>',
            headers={'Content-Type': 'application/xml'})
        self.assertFault(response, 415, 'badMediaType')

    def test_too_large_body_is_413(self):
        response = self.request('POST', '/v2.1/servers',
                                raw=b'{"x": "' + b'a' * 200000 + b'"}')
        self.assertFault(response, 413, 'overLimit')

    def test_deeply_nested_body_is_400_and_changes_nothing(self):
        instance = self.make_instance()
        # 50,000 levels: under the size limit, deeper than the stack.
        deep = b'[' * 50000 + b']' * 50000
        for raw in (deep, b'{"os-stop": ' + deep + b'}',
                    b'{"a": ' * 33 + b'1' + b'}' * 33):
            with self.subTest(size=len(raw)):
                response = self.action(instance, None, raw=raw)
                self.assertFault(response, 400, 'badRequest',
                                 'nested deeper than 32 levels')
        self.assertIsNone(self.reload(instance).task_state)
        self.assertEqual([], self.compute_rpc.casts)
        # A real body nests a few levels: still accepted.
        response = self.action(instance, {'os-stop': None})
        self.assertEqual(202, response.status_int)

    def test_query_that_is_not_utf8_is_400(self):
        response = self.request('GET', '/v2.1/servers?name=%ff')
        self.assertFault(response, 400, 'badRequest',
                         'Invalid query string: not valid UTF-8')

    def test_path_that_is_not_utf8_is_404(self):
        for path in ('/v2.1/servers/%ff', '/v2.1/%ff/servers', '/%c3%28'):
            with self.subTest(path=path):
                response = self.request('GET', path)
                self.assertFault(response, 404, 'itemNotFound',
                                 'not valid UTF-8')

    def test_missing_body_is_400(self):
        instance = self.make_instance()
        self.assertFault(self.action(instance, None), 400, 'badRequest',
                         'a JSON body is required')

    def test_method_not_allowed(self):
        response = self.request('PATCH', '/v2.1/servers')
        self.assertFault(response, 405, 'badMethod')
        self.assertEqual('GET, POST', response.headers['Allow'])

    def test_path_tricks_are_refused_and_change_nothing(self):
        instance = self.make_instance()
        paths = ['/v2.1/servers/../os-services',
                 '/v2.1/servers/%2e%2e/action',
                 '/v2.1/servers/%s/../%s/action' % (instance.uuid,
                                                    instance.uuid),
                 '/v2.1/./servers',
                 '/v2.1/servers/%s%%2F..%%2Faction' % instance.uuid,
                 '/v2.1/servers/%s%%00/action' % instance.uuid]
        for path in paths:
            with self.subTest(path=path):
                response = self.request('POST', path, {'os-stop': None})
                self.assertIn(response.status_int, (400, 404), path)
                self.assertIn(list(response.json)[0],
                              ('badRequest', 'itemNotFound'))
        self.assertIsNone(self.reload(instance).task_state)
        self.assertEqual([], self.compute_rpc.casts)

    def test_unexpected_error_is_500_without_details(self):
        def broken(ctx, *args, **kwargs):
            raise RuntimeError('database password is hunter2')
        self.compute_api.get_all = broken
        response = self.request('GET', '/v2.1/servers')
        message = self.assertFault(response, 500, 'computeFault')
        self.assertNotIn('hunter2', message)
        self.assertIn(response.headers['X-OpenStack-Request-ID'], message)


class FaultBarrierTest(base.TestCase):

    def test_a_middleware_that_raises_gets_a_fault_body(self):
        def middleware(environ, start_response):
            raise RuntimeError('catalog has no internal identity endpoint')
        app = app_mod.FaultBarrier(middleware)
        seen = {}

        def start_response(status, headers, exc_info=None):
            seen['status'], seen['headers'] = status, dict(headers)
        with self.assertLogs('nova.api.openstack.faults', 'ERROR'):
            body = json.loads(b''.join(app({}, start_response)))
        self.assertEqual('500 Internal Server Error', seen['status'])
        self.assertEqual('application/json', seen['headers']['Content-Type'])
        self.assertEqual(500, body['computeFault']['code'])
        self.assertIn(seen['headers']['X-OpenStack-Request-ID'],
                      body['computeFault']['message'])
