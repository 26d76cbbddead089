"""The threaded WSGI server: real sockets on 127.0.0.1, port 0."""

import http.client
import threading

from nova.api import server
from nova.tests import base


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

    def test_url(self):
        api = server.APIServer(lambda e, s: [], '127.0.0.1', 0)
        self.addCleanup(api.stop)
        self.assertEqual('http://127.0.0.1:%d' % api.port, api.url)
