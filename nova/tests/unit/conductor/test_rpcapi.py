"""The conductor RPC client against a real oslo.messaging server
(inproc://)."""

import queue

import oslo_messaging as messaging

from nova.conductor import rpcapi as conductor_rpcapi
from nova import context as nova_context
from nova import exception
from nova import objects
from nova import rpc
from nova.tests import base


class RecordingConductor:
    def __init__(self, received):
        self.received = received

    # Serves 1.3, as ConductorManager does.
    target = messaging.Target(version=conductor_rpcapi.RPC_API_VERSION)

    def evacuate_instance(self, ctxt, instance, migration, host=None,
                          on_shared_storage=None, target_state=None):
        self.received.put(('evacuate_instance', instance, migration, host,
                           on_shared_storage))
        self.received.put(('target_state', target_state))

    def run_host_evacuation(self, ctxt, evacuation_uuid):
        self.received.put(('run_host_evacuation', evacuation_uuid))

    def evacuation_ended(self, ctxt, migration_uuid):
        self.received.put(('evacuation_ended', migration_uuid))


class TestConductorAPI(base.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        base._parse_conf_once()
        rpc.cleanup()
        rpc.init(url='inproc://')
        cls.received = queue.Queue()
        # Any conductor may serve: the server name is not in the target.
        cls.server = rpc.get_server(
            messaging.Target(topic='conductor', server='conductor-host'),
            [RecordingConductor(cls.received)])
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.server.wait()
        rpc.cleanup()
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.api = conductor_rpcapi.ConductorAPI(timeout=10)
        self.ctxt = nova_context.get_admin_context()

    def instance_and_migration(self):
        instance = objects.Instance(self.ctxt, host='compute1')
        return instance, objects.Migration(self.ctxt,
                                           instance_uuid=instance.uuid,
                                           migration_type='evacuation',
                                           status='accepted')

    def test_evacuate_instance_is_cast_with_objects(self):
        instance, migration = self.instance_and_migration()
        self.api.evacuate_instance(self.ctxt, instance, migration,
                                   host='compute2', on_shared_storage=True)
        name, got_instance, got_migration, host, shared = \
            self.received.get(timeout=10)
        self.assertEqual('evacuate_instance', name)
        self.assertEqual(instance.uuid, got_instance.uuid)
        self.assertIsInstance(got_migration, objects.Migration)
        self.assertEqual(('compute2', True), (host, shared))
        self.assertEqual(('target_state', None),
                         self.received.get(timeout=10))

    def test_evacuate_instance_with_a_target_state_is_1_1(self):
        instance, migration = self.instance_and_migration()
        self.api.evacuate_instance(self.ctxt, instance, migration,
                                   target_state='stopped')
        self.received.get(timeout=10)
        self.assertEqual(('target_state', 'stopped'),
                         self.received.get(timeout=10))
        capped = conductor_rpcapi.ConductorAPI(version_cap='1.0')
        self.assertRaises(exception.EvacuationTargetStateUnsupported,
                          capped.evacuate_instance, self.ctxt, instance,
                          migration, target_state='stopped')
        self.assertTrue(self.received.empty())

    def test_run_host_evacuation_is_a_cast_of_1_2(self):
        self.api.run_host_evacuation(self.ctxt, 'run-1')
        self.assertEqual(('run_host_evacuation', 'run-1'),
                         self.received.get(timeout=10))
        capped = conductor_rpcapi.ConductorAPI(version_cap='1.1')
        self.assertRaises(messaging.RPCVersionCapError,
                          capped.run_host_evacuation, self.ctxt, 'run-2')
        self.assertTrue(self.received.empty())

    def test_evacuation_ended_is_a_fanout_cast_of_1_3(self):
        # A second conductor: every conductor hears it, since the target
        # does not know which one runs the host-evacuate.
        other = queue.Queue()
        server = rpc.get_server(
            messaging.Target(topic='conductor', server='conductor-2'),
            [RecordingConductor(other)])
        server.start()
        try:
            self.assertTrue(self.api.evacuation_ended(self.ctxt, 'mig-1'))
            for received in (self.received, other):
                self.assertEqual(('evacuation_ended', 'mig-1'),
                                 received.get(timeout=10))
        finally:
            server.stop()
            server.wait()
        # Capped below 1.3 (an older conductor): not sent, and no error:
        # the watcher reads the rows at its next poll. A conductor serves
        # its own queue first, so a fanout sent would come before this.
        capped = conductor_rpcapi.ConductorAPI(version_cap='1.2')
        self.assertFalse(capped.evacuation_ended(self.ctxt, 'mig-2'))
        self.api.run_host_evacuation(self.ctxt, 'marker')
        self.assertEqual(('run_host_evacuation', 'marker'),
                         self.received.get(timeout=10))
