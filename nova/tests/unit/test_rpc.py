import dataclasses
import datetime
import threading

import oslo_messaging as messaging

from nova import context as nova_context
from nova import exception
from nova.model import external_event
from nova.model import network as network_model
from nova import objects
from nova import rpc
from nova.tests import base

PORT = '4b1c3f2e-7a6d-4e5f-9a8b-0c1d2e3f4a5b'


def use_fake_rpc(test):
    """A fresh in-process transport for ``test`` (undone at its end)."""
    rpc.cleanup()
    rpc.init(url='inproc://')
    test.addCleanup(rpc.cleanup)


@dataclasses.dataclass(frozen=True)
class NotOurs:
    x: int = 0


def _network_info():
    net = network_model.Network(id='n1', label='public', bridge='br-public')
    return network_model.NetworkInfo([network_model.VIF(
        id=PORT, address='fa:16:3e:00:00:01', network=net,
        ips=('10.0.0.5',))])


class TestValueSerializer(base.TestCase):

    def setUp(self):
        super().setUp()
        self.serializer = rpc.RequestContextSerializer()
        self.ctxt = nova_context.get_admin_context()

    def _round_trip(self, value):
        # What the bus does in between: the wire form is JSON.
        from oslo_serialization import jsonutils
        wire = jsonutils.loads(jsonutils.dumps(
            self.serializer.serialize_entity(self.ctxt, value)))
        return self.serializer.deserialize_entity(self.ctxt, wire)

    def test_network_info_keeps_its_type_and_nested_values(self):
        again = self._round_trip(_network_info())
        self.assertIsInstance(again, network_model.NetworkInfo)
        self.assertEqual(_network_info(), again)
        self.assertEqual(('10.0.0.5',), again[0].ips)

    def test_external_events_in_a_list(self):
        events = [external_event.InstanceExternalEvent(
            'uuid-1', 'network-vif-plugged', PORT, 'failed')]
        again = self._round_trip(events)
        self.assertEqual(events, again)
        self.assertIsInstance(again[0],
                              external_event.InstanceExternalEvent)

    def test_datetimes_tuples_and_plain_dicts(self):
        when = datetime.datetime(2024, 5, 1, 12, 30, 1, 5,
                                 tzinfo=datetime.timezone.utc)
        value = {'at': when, 'pair': (1, 'a'), 'list': [1, {'k': None}]}
        self.assertEqual(value, self._round_trip(value))

    def test_objects_carry_the_message_context(self):
        flavor = objects.Flavor(flavorid='1', name='m1.tiny', memory_mb=64,
                                vcpus=1, root_gb=1)
        instance = objects.Instance(self.ctxt, display_name='vm1',
                                    host='compute1', flavor=flavor,
                                    network_info=_network_info())
        again = self._round_trip(instance)
        self.assertIsInstance(again, objects.Instance)
        self.assertEqual(instance.uuid, again.uuid)
        self.assertEqual(flavor, again.flavor)
        self.assertIsInstance(again.network_info, network_model.NetworkInfo)
        self.assertIs(self.ctxt, again.context)
        self.assertEqual(flavor, self._round_trip(flavor))

    def test_dataclasses_outside_the_project_are_refused(self):
        wire = self.serializer.serialize_entity(self.ctxt, NotOurs())
        wire[rpc.TYPE_KEY] = 'os:path'
        self.assertRaises(ValueError, self.serializer.deserialize_entity,
                          self.ctxt, wire)

    def test_unknown_types_are_not_sent(self):
        self.assertRaises(TypeError, self.serializer.serialize_entity,
                          self.ctxt, object())

    def test_context_round_trip(self):
        ctxt = nova_context.RequestContext(user_id='u', project_id='p',
                                           roles=('member',))
        again = self.serializer.deserialize_context(
            self.serializer.serialize_context(ctxt))
        self.assertEqual(ctxt, again)


class Endpoint:
    def __init__(self):
        self.received = []
        self.cast_done = threading.Event()

    def echo(self, ctxt, value):
        self.received.append((ctxt, value))
        return value

    def record(self, ctxt, events):
        self.received.append((ctxt, events))
        self.cast_done.set()

    def fail(self, ctxt, uuid):
        raise exception.InstanceNotFound(instance_id=uuid)


class TestFakeTransport(base.TestCase):
    """Client and server in one process over ``inproc://``.

    One server for the whole class: stopping an oslo.messaging server
    waits up to a second for its idle worker threads.
    """

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        base._parse_conf_once()
        rpc.cleanup()
        rpc.init(url='inproc://')
        cls.endpoint = Endpoint()
        cls.server = rpc.get_server(
            messaging.Target(topic='test', server='h1'), [cls.endpoint])
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.server.wait()
        rpc.cleanup()
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.endpoint.received.clear()
        self.endpoint.cast_done.clear()
        self.client = rpc.get_client(
            messaging.Target(topic='test', version='1.0'),
            version_cap='1.0').prepare(server='h1', timeout=10)
        self.ctxt = nova_context.RequestContext(user_id='u1',
                                                project_id='p1')

    def test_server_runs_on_native_threads(self):
        self.assertEqual('threading', self.server.executor_type)

    def test_call_returns_typed_value_and_carries_context(self):
        result = self.client.call(self.ctxt, 'echo', value=_network_info())
        self.assertEqual(_network_info(), result)
        ctxt, value = self.endpoint.received[0]
        self.assertIsInstance(ctxt, nova_context.RequestContext)
        self.assertEqual(self.ctxt.request_id, ctxt.request_id)
        self.assertIsInstance(value, network_model.NetworkInfo)

    def test_cast_delivers(self):
        event = external_event.InstanceExternalEvent(
            'u', 'network-vif-plugged', PORT)
        self.client.cast(self.ctxt, 'record', events=[event])
        self.assertTrue(self.endpoint.cast_done.wait(10))
        self.assertEqual([event], self.endpoint.received[0][1])

    def test_project_exceptions_keep_their_class(self):
        with self.assertRaises(exception.InstanceNotFound) as caught:
            self.client.call(self.ctxt, 'fail', uuid='u-404')
        self.assertIn('u-404', str(caught.exception))

    def test_version_cap_refuses_newer_messages(self):
        client = rpc.get_client(messaging.Target(topic='test'),
                                version_cap='1.0')
        self.assertRaises(messaging.RPCVersionCapError,
                          client.prepare(server='h1', version='1.1').cast,
                          self.ctxt, 'record', events=[])


class TestInit(base.TestCase):

    def test_client_before_init_is_an_error(self):
        rpc.cleanup()
        self.assertRaises(RuntimeError, rpc.get_client,
                          messaging.Target(topic='x'))

    def test_init_is_idempotent(self):
        use_fake_rpc(self)
        self.assertIs(rpc.TRANSPORT, rpc.init(url='inproc://'))
        self.assertTrue(rpc.initialized())
