"""``ipc://``: messages from another process into an ``inproc://`` bus
through its hub (``nova.rpc_ipc``), through oslo.messaging's own clients
and servers: calls, casts, fanout, remote exceptions, timeouts, a hub that
goes away and comes back, and the socket itself."""

import os
import socket
import stat
import subprocess
import sys
import threading

from oslo_config import cfg
import oslo_messaging as messaging

from nova import context as nova_context
from nova import exception
from nova import rpc
from nova import rpc_ipc
from nova.tests import base


class OtherModuleError(Exception):
    """Of a module the callers do not rebuild exceptions of."""


class Endpoint:
    def __init__(self, name):
        self.name = name
        self.seen = []
        self.arrived = threading.Event()
        self.entered = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def echo(self, ctxt, value):
        self.entered.set()
        self.release.wait(30)
        return {'server': self.name, 'value': value,
                'user': ctxt.user_id}

    def note(self, ctxt, value):
        self.seen.append(value)
        self.arrived.set()

    def not_found(self, ctxt):
        raise exception.InstanceNotFound(instance_id='gone')

    def fail(self, ctxt):
        raise OtherModuleError('endpoint %s failed' % self.name)

    def unsendable(self, ctxt):
        return {'a set': object()}

    def bad_value(self, ctxt):
        raise ValueError('bad value at %s' % self.name)


class IPCTransportTest(base.TestCase):

    def setUp(self):
        super().setUp()
        rpc.cleanup()
        rpc.init(url='inproc://')
        self.addCleanup(rpc.cleanup)
        self.path = os.path.join(self.tmp, 'rpc.sock')
        self.hub = rpc.serve_hub(self.path)
        self.addCleanup(lambda: self.hub.stop())
        self.transport = messaging.get_rpc_transport(
            cfg.CONF, url=self.hub.url,
            allowed_remote_exmods=rpc.ALLOWED_EXMODS)
        self.addCleanup(self.transport.cleanup)
        self.ctxt = nova_context.RequestContext('u1', 'p1')

    def serve(self, name, topic='t'):
        endpoint = Endpoint(name)
        self.serve_rpc(messaging.Target(topic=topic, server=name),
                       [endpoint])
        return endpoint

    def client(self, topic='t', timeout=10, **kwargs):
        return messaging.get_rpc_client(
            self.transport, messaging.Target(topic=topic),
            serializer=rpc.RequestContextSerializer(),
            timeout=timeout).prepare(**kwargs)

    def test_call_reaches_the_named_server_with_its_context(self):
        self.serve('s1')
        self.serve('s2')
        answer = self.client(server='s2').call(self.ctxt, 'echo', value=[1])
        self.assertEqual({'server': 's2', 'value': [1], 'user': 'u1'},
                         answer)

    def test_cast_is_delivered(self):
        endpoint = self.serve('s1')
        self.client(server='s1').cast(self.ctxt, 'note', value='x')
        self.assertTrue(endpoint.arrived.wait(10))
        self.assertEqual(['x'], endpoint.seen)

    def test_fanout_reaches_every_server(self):
        endpoints = [self.serve('s%d' % i) for i in range(3)]
        self.client(fanout=True).cast(self.ctxt, 'note', value='all')
        for endpoint in endpoints:
            self.assertTrue(endpoint.arrived.wait(10))
            self.assertEqual(['all'], endpoint.seen)

    def test_concurrent_calls_each_get_their_own_reply(self):
        endpoint = self.serve('s1')
        endpoint.release.clear()
        answers = {}

        def call(n):
            answers[n] = self.client(server='s1').call(self.ctxt, 'echo',
                                                       value=n)
        threads = [threading.Thread(target=call, args=(n,))
                   for n in range(8)]
        for thread in threads:
            thread.start()
        endpoint.release.set()
        for thread in threads:
            thread.join(30)
        self.assertEqual({n: n for n in range(8)},
                         {n: a['value'] for n, a in answers.items()})

    def test_a_project_exception_keeps_its_class(self):
        self.serve('s1')
        self.assertRaises(exception.InstanceNotFound,
                          self.client(server='s1').call, self.ctxt,
                          'not_found')

    def test_other_exceptions_arrive_as_remote_errors(self):
        self.serve('s1')
        with self.assertRaises(messaging.RemoteError) as raised:
            self.client(server='s1').call(self.ctxt, 'fail')
        error = raised.exception
        self.assertEqual('OtherModuleError', error.exc_type)
        self.assertIn('endpoint s1 failed', error.value)

    def test_builtin_exceptions_keep_their_class_as_over_a_broker(self):
        self.serve('s1')
        with self.assertRaises(ValueError) as raised:
            self.client(server='s1').call(self.ctxt, 'bad_value')
        self.assertIn('bad value at s1', str(raised.exception))

    def test_a_reply_that_cannot_be_sent_fails_the_call(self):
        # Refused by the serializer, on the server's side.
        self.serve('s1')
        self.assertRaises(TypeError, self.client(server='s1',
                                                 timeout=30).call,
                          self.ctxt, 'unsendable')
        # Refused by JSON, at the hub: the caller gets a failure frame.
        hub_end, child_end = socket.socketpair()
        self.addCleanup(hub_end.close)
        self.addCleanup(child_end.close)
        rpc_ipc._Reply(rpc_ipc._HubConnection(self.hub, hub_end), 7).put(
            ({'not json': object()}, None))
        frame = rpc_ipc.read_frame(child_end)
        self.assertEqual(7, frame['id'])
        self.assertNotIn('result', frame)
        self.assertIn('failure', frame)

    def test_a_call_nobody_serves_times_out(self):
        self.assertRaises(messaging.MessagingTimeout,
                          self.client(topic='nobody', timeout=0.3).call,
                          self.ctxt, 'echo', value=1)

    def test_a_call_in_flight_when_the_hub_stops_fails(self):
        endpoint = self.serve('s1')
        endpoint.release.clear()
        self.addCleanup(endpoint.release.set)
        failures = []

        def call():
            try:
                self.client(server='s1', timeout=60).call(
                    self.ctxt, 'echo', value=1)
            except messaging.MessageDeliveryFailure as e:
                failures.append(e)
        thread = threading.Thread(target=call)
        thread.start()
        self.assertTrue(endpoint.entered.wait(30))
        self.hub.stop()
        thread.join(30)
        self.assertFalse(thread.is_alive())
        self.assertEqual(1, len(failures))

    def test_a_send_after_the_hub_came_back_connects_again(self):
        endpoint = self.serve('s1')
        client = self.client(server='s1')
        self.assertEqual(1, client.call(self.ctxt, 'echo', value=1)['value'])
        self.hub.stop()
        self.assertRaises(messaging.MessageDeliveryFailure,
                          client.call, self.ctxt, 'echo', value=2)
        self.hub = rpc.serve_hub(self.path)
        self.assertEqual(3, client.call(self.ctxt, 'echo', value=3)['value'])
        client.cast(self.ctxt, 'note', value=4)
        self.assertTrue(endpoint.arrived.wait(10))

    def test_the_ipc_transport_serves_no_topic(self):
        server = messaging.get_rpc_server(
            self.transport, messaging.Target(topic='t', server='x'),
            [Endpoint('x')])
        self.assertRaises(messaging.InvalidTransportURL, server.start)

    def test_only_the_owner_may_connect(self):
        mode = os.lstat(self.path).st_mode
        self.assertTrue(stat.S_ISSOCK(mode))
        self.assertEqual(0o600, stat.S_IMODE(mode))

    def test_a_stale_socket_is_replaced_and_removed_at_stop(self):
        self.hub.stop()
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(self.path)
        stale.close()
        self.hub = rpc.serve_hub(self.path)
        self.serve('s1')
        self.assertEqual(1, self.client(server='s1').call(
            self.ctxt, 'echo', value=1)['value'])
        self.hub.stop()
        self.assertFalse(os.path.exists(self.path))

    def test_a_path_too_long_for_a_socket_gets_a_private_directory(self):
        self.hub.stop()
        deep = os.path.join(self.tmp, 'd' * 60, 'e' * 60)
        os.makedirs(deep)
        self.hub = rpc.serve_hub(os.path.join(deep, 'rpc.sock'))
        private = os.path.dirname(self.hub.path)
        self.assertNotEqual(deep, private)
        self.assertEqual(0o700, stat.S_IMODE(os.stat(private).st_mode))
        self.serve('s1')
        self.assertEqual(1, messaging.get_rpc_client(
            messaging.get_rpc_transport(cfg.CONF, url=self.hub.url),
            messaging.Target(topic='t', server='s1'),
            serializer=rpc.RequestContextSerializer(), timeout=10).call(
                self.ctxt, 'echo', value=1)['value'])
        self.hub.stop()
        self.assertFalse(os.path.exists(private))

    def test_a_file_that_is_not_a_socket_is_kept(self):
        self.hub.stop()
        with open(self.path, 'w') as f:
            f.write('data')
        self.assertRaises(FileExistsError, rpc.serve_hub, self.path)
        with open(self.path) as f:
            self.assertEqual('data', f.read())

    def test_a_garbage_frame_drops_only_that_connection(self):
        self.serve('s1')
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(self.path)
            sock.sendall(b'\x00\x00\x00\x05nope!')
            self.assertEqual(b'', sock.recv(1))
        self.assertEqual(1, self.client(server='s1').call(
            self.ctxt, 'echo', value=1)['value'])

    def test_from_another_process(self):
        endpoint = self.serve('s1')
        child = (
            'import sys\n'
            'from oslo_config import cfg\n'
            'import oslo_messaging as messaging\n'
            'from nova import context, rpc\n'
            't = messaging.get_rpc_transport(cfg.CONF, url=sys.argv[1])\n'
            'c = messaging.get_rpc_client(t, messaging.Target(topic="t", '
            'server="s1"), serializer=rpc.RequestContextSerializer(), '
            'timeout=30)\n'
            'ctxt = context.RequestContext("u2", "p2")\n'
            'c.cast(ctxt, "note", value="from %d" % 7)\n'
            'print(c.call(ctxt, "echo", value="hello")["user"])\n')
        out = subprocess.run([sys.executable, '-c', child, self.hub.url],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(0, out.returncode, out.stderr)
        self.assertEqual('u2', out.stdout.strip())
        self.assertTrue(endpoint.arrived.wait(10))
        self.assertEqual(['from 7'], endpoint.seen)
