"""The in-process transport ``inproc://`` through oslo.messaging's own
clients and servers (``nova.rpc``): calls, casts, fanout, timeouts, stop,
and what it refuses to send."""

import datetime
import threading
import time

import oslo_messaging as messaging

from nova import context as nova_context
from nova import rpc
from nova.tests import base


class Endpoint:
    def __init__(self, name):
        self.name = name
        self.seen = []
        self.cast_arrived = threading.Event()

    def echo(self, ctxt, value):
        return {'server': self.name, 'value': value}

    def note(self, ctxt, value):
        self.seen.append(value)
        self.cast_arrived.set()

    def fail(self, ctxt):
        raise ValueError('endpoint %s failed' % self.name)


class InProcessTransportTest(base.TestCase):

    def setUp(self):
        super().setUp()
        rpc.cleanup()
        rpc.init(url='inproc://')
        self.addCleanup(rpc.cleanup)
        self.ctxt = nova_context.get_admin_context()

    def serve(self, name, topic='t'):
        endpoint = Endpoint(name)
        self.serve_rpc(messaging.Target(topic=topic, server=name),
                       [endpoint])
        return endpoint

    def client(self, topic='t', timeout=5, **kwargs):
        return rpc.get_client(messaging.Target(topic=topic),
                              timeout=timeout).prepare(**kwargs)

    def test_call_reaches_the_named_server_and_returns(self):
        self.serve('s1')
        self.serve('s2')
        for name in ('s1', 's2'):
            self.assertEqual({'server': name, 'value': [1, 'a']},
                             self.client(server=name).call(
                                 self.ctxt, 'echo', value=[1, 'a']))

    def test_typed_values_round_trip(self):
        self.serve('s1')
        when = datetime.datetime(2026, 12, 2, 3, 4, 5)
        self.assertEqual({'server': 's1', 'value': (when, 'x')},
                         self.client(server='s1').call(
                             self.ctxt, 'echo', value=(when, 'x')))

    def test_cast_returns_at_once_and_is_delivered(self):
        endpoint = self.serve('s1')
        self.client(server='s1').cast(self.ctxt, 'note', value=7)
        self.assertTrue(endpoint.cast_arrived.wait(5))
        self.assertEqual([7], endpoint.seen)

    def test_a_topic_message_is_taken_by_exactly_one_server(self):
        endpoints = [self.serve('s1'), self.serve('s2')]
        for value in range(20):
            self.client().call(self.ctxt, 'note', value=value)
        self.assertEqual(list(range(20)), sorted(
            endpoints[0].seen + endpoints[1].seen))

    def test_fanout_reaches_every_server(self):
        endpoints = [self.serve('s1'), self.serve('s2')]
        self.client(fanout=True).cast(self.ctxt, 'note', value='all')
        for endpoint in endpoints:
            self.assertTrue(endpoint.cast_arrived.wait(5))
            self.assertEqual(['all'], endpoint.seen)

    def test_an_endpoint_failure_is_raised_at_the_caller(self):
        self.serve('s1')
        with self.assertRaisesRegex(ValueError, 'endpoint s1 failed'):
            self.client(server='s1').call(self.ctxt, 'fail')

    def test_a_call_nobody_serves_times_out(self):
        started = time.monotonic()
        self.assertRaises(messaging.MessagingTimeout,
                          self.client(server='nobody', timeout=0.3).call,
                          self.ctxt, 'echo', value=1)
        # It waited for its timeout, not for ever (a bound, not a
        # measurement).
        self.assertLess(time.monotonic() - started, 30)

    def test_a_message_that_is_not_json_is_refused_before_sending(self):
        endpoint = self.serve('s1')
        self.assertRaises(TypeError, self.client(server='s1').cast,
                          self.ctxt, 'note', value=object())
        self.assertEqual([], endpoint.seen)

    def test_stop_wakes_an_idle_server(self):
        self.serve('s1')
        server = rpc.get_server(messaging.Target(topic='t', server='s3'),
                                [Endpoint('s3')])
        server.start()
        stopped = threading.Event()

        def stop():
            server.stop()
            server.wait()
            stopped.set()
        threading.Thread(target=stop, daemon=True).start()
        self.assertTrue(stopped.wait(10))
