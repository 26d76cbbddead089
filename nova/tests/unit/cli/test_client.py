"""The CLI's HTTP client: endpoints, errors, microversion negotiation."""

from nova.api.openstack import api_version as av
from nova.api import wsgi as api_wsgi
from nova.cli import client
from nova.tests import base
from nova.tests.unit.api.openstack import fakes


class EndpointTest(base.TestCase):

    def test_normalize(self):
        for given in ('http://h:8774', 'http://h:8774/', 'http://h:8774/v2.1',
                      'http://h:8774/v2.1/'):
            self.assertEqual('http://h:8774/v2.1',
                             client.normalize_endpoint(given))
        self.assertEqual('https://h/compute/v2.1',
                         client.normalize_endpoint('https://h/compute'))
        for bad in ('h:8774', 'ftp://h/v2.1', 'http:///v2.1'):
            self.assertRaises(client.CommandError, client.normalize_endpoint,
                              bad)


class ErrorTest(base.TestCase):

    def test_error_from_fault_body(self):
        e = client.error_from_response(
            404, {'itemNotFound': {'code': 404, 'message': 'gone'}}, 'req-1')
        self.assertIsInstance(e, client.NotFound)
        self.assertEqual('gone (HTTP 404) (Request-ID: req-1)', str(e))
        e = client.error_from_response(409, {'conflictingRequest': {
            'code': 409, 'message': 'busy'}})
        self.assertIsInstance(e, client.Conflict)
        e = client.error_from_response(502, 'Bad gateway')
        self.assertEqual((client.ClientException, 'Bad gateway (HTTP 502)'),
                         (type(e), str(e)))


class ClientAgainstAPITest(fakes.APITestCase):
    """Against the real application on a real socket."""

    def setUp(self):
        super().setUp()
        self.server = api_wsgi.serve(self.app, '127.0.0.1', 0)
        self.addCleanup(self.server.stop)

    def client(self, token=fakes.ADMIN_TOKEN):
        return client.Client(self.server.url, token)

    def test_negotiate(self):
        c = self.client()
        # latest: the newest both sides know; the server knows more than
        # this client.
        self.assertLess(client.CLIENT_MAX_VERSION, av.MAX_VERSION)
        self.assertEqual(client.CLIENT_MAX_VERSION, c.negotiate('latest'))
        self.assertEqual(client.CLIENT_MAX_VERSION, c.negotiate('2.latest'))
        self.assertEqual(av.v('2.95'), c.negotiate('2.95'))
        self.assertEqual(av.v('2.1'), c.negotiate('2'))
        self.assertEqual(av.v('2.14'), c.negotiate('2.14'))
        self.assertRaises(client.CommandError, c.negotiate, 'x.y')

    def test_requests_carry_version_and_token(self):
        c = self.client()
        c.negotiate('2.11')
        status, response, body = c.request('GET', '/os-services')
        self.assertEqual(200, status)
        self.assertEqual('compute 2.11',
                         response.getheader('OpenStack-API-Version'))
        self.assertIn('forced_down', body['services'][0])

    def test_errors(self):
        c = self.client(token=fakes.USER_TOKEN)
        self.assertRaises(client.Forbidden, c.get, '/os-services')
        self.assertRaises(client.NotFound, c.get, '/servers/nope')
        c.negotiate('2.999')
        self.assertRaises(client.NotAcceptable, c.get, '/servers')

    def test_connection_refused(self):
        port = self.server.port
        self.server.stop()
        c = client.Client('http://127.0.0.1:%d' % port, 'x')
        self.assertRaises(client.ConnectionRefused, c.get, '/servers')
