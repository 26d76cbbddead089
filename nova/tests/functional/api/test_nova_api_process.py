"""``nova-api`` as its own process: it serves, and stops on SIGTERM."""

import json
import os
import signal
import time
import urllib.error
import urllib.request

from nova.testing import procs
from nova.testing import rabbitmq
from nova.tests import base


class NovaAPIProcessTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.db_url = self.use_database()
        self.port = rabbitmq.free_port()
        self.conf = os.path.join(self.tmp, 'nova.conf')
        with open(self.conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\ntransport_url = inproc://\n'
                    '[database]\nconnection = %s\n'
                    '[api]\nlisten = 127.0.0.1\nlisten_port = %d\n'
                    % (self.state_path, self.db_url, self.port))

    def get(self, path, token='admin:admin'):
        request = urllib.request.Request(
            'http://127.0.0.1:%d%s' % (self.port, path),
            headers={'X-Auth-Token': token})
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())

    def start(self):
        self.log_path = os.path.join(self.tmp, 'nova-api.log')
        return self.start_nova_process('nova.cmd.api', self.conf,
                                       self.log_path)

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def wait_serving(self, proc):
        # With workers, nova-api listens before they serve: a request
        # waits in the backlog until one has started, which on a loaded
        # machine can outlast one request's timeout. Refused, reset and
        # timed out alike mean "not yet".
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self.fail('nova-api exited with %s: %s'
                          % (proc.returncode, self.log()[-3000:]))
            try:
                return self.get('/v2.1')
            except OSError:
                time.sleep(0.1)
        self.fail('nova-api did not answer: %s' % self.log()[-3000:])

    def test_serves_and_stops_on_sigterm(self):
        proc = self.start()
        status, doc = self.wait_serving(proc)
        self.assertEqual((200, 'v2.1'), (status, doc['version']['id']))
        status, body = self.get('/v2.1/os-services')
        self.assertEqual((200, {'services': []}), (status, body))
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(timeout=15))
        self.assertRaises(urllib.error.URLError, self.get, '/v2.1')

    def test_workers_serve_and_stop_with_it(self):
        with open(self.conf, 'a') as f:
            f.write('[DEFAULT]\nosapi_compute_workers = 2\n')
        proc = self.start()
        status, doc = self.wait_serving(proc)
        self.assertEqual((200, 'v2.1'), (status, doc['version']['id']))
        workers = base.wait_until(lambda: len(procs.children(proc.pid)) == 2
                                  and procs.children(proc.pid))
        self.assertTrue(workers)

        def serving():
            return self.log().count('REST API worker serving')
        # Each worker says so once it serves; one may still be starting
        # while the other answers.
        self.assertTrue(base.wait_until(lambda: serving() == 2, timeout=60),
                        serving())
        self.assertEqual((200, {'services': []}),
                         self.get('/v2.1/os-services'))
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(timeout=60))
        self.assertTrue(base.wait_until(
            lambda: all(procs.start_time(p) is None for p in workers)))
