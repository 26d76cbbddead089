"""The threaded WSGI server: real sockets on 127.0.0.1, port 0."""

import http.client
import json
import threading
import urllib.error
import urllib.request

from nova.api import server
from nova.api import workers
from nova.tests import base
from nova.tests.unit.api.openstack import fakes


class APIServerTest(base.TestCase):

    def test_serves_concurrent_requests_and_stops(self):
        inside = threading.Barrier(2, timeout=5)

        def app(environ, start_response):
            # Both requests must be inside the app at once, or the barrier
            # breaks: proof that requests run on their own threads.
            inside.wait()
            start_response('200 OK', [('Content-Type', 'text/plain')])
            return [environ['PATH_INFO'].encode()]

        api = server.APIServer(app, '127.0.0.1', 0).start()
        self.assertNotEqual(0, api.port)
        results = {}

        def fetch(path):
            conn = http.client.HTTPConnection('127.0.0.1', api.port,
                                              timeout=5)
            conn.request('GET', path)
            response = conn.getresponse()
            results[path] = (response.status, response.read())
            conn.close()

        threads = [threading.Thread(target=fetch, args=(p,))
                   for p in ('/a', '/b')]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        self.assertEqual({'/a': (200, b'/a'), '/b': (200, b'/b')}, results)
        api.stop()
        conn = http.client.HTTPConnection('127.0.0.1', api.port, timeout=2)
        self.assertRaises(ConnectionRefusedError, conn.request, 'GET', '/')

    def test_servers_on_one_inherited_socket_share_its_port(self):
        # As the API workers do: each serves on its own descriptor of the
        # one listening socket; one stopping leaves the port to the rest.
        def app_of(name):
            def app(environ, start_response):
                start_response('200 OK', [('Content-Type', 'text/plain')])
                return [name]
            return app

        listening = workers.listening_socket('127.0.0.1', 0)
        port = listening.getsockname()[1]
        first = server.APIServer(app_of(b'first'),
                                 sock=listening.dup()).start()
        second = server.APIServer(app_of(b'second'),
                                  sock=listening.dup()).start()
        listening.close()
        self.assertEqual((port, port), (first.port, second.port))
        first.stop()
        url = 'http://127.0.0.1:%d/' % port
        with urllib.request.urlopen(url, timeout=5) as response:
            self.assertEqual(b'second', response.read())
        second.stop()
        conn = http.client.HTTPConnection('127.0.0.1', port, timeout=2)
        self.assertRaises(ConnectionRefusedError, conn.request, 'GET', '/')

    def test_url(self):
        api = server.APIServer(lambda e, s: [], '127.0.0.1', 0)
        self.addCleanup(api.stop)
        self.assertEqual('http://127.0.0.1:%d' % api.port, api.url)


class TooLargeBodyTest(fakes.APITestCase):
    """A client that sends its whole body before it reads the answer, as
    urllib (and so every CLI) does, reads the 413 and its fault body
    instead of a reset connection."""

    def test_413_is_readable_by_a_client_that_sends_first(self):
        api = server.APIServer(self.app, '127.0.0.1', 0).start()
        self.addCleanup(api.stop)
        body = json.dumps({'server': {'name': 'a' * 2000000}}).encode()
        request = urllib.request.Request(
            api.url + '/v2.1/servers', data=body, method='POST',
            headers={'Content-Type': 'application/json',
                     'X-Auth-Token': fakes.ADMIN_TOKEN})
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=10)
        self.assertEqual(413, caught.exception.code)
        fault = json.loads(caught.exception.read())
        self.assertEqual(413, fault['overLimit']['code'])
        self.assertEqual([], fakes.objects.Instance.get_all(self.ctx))
