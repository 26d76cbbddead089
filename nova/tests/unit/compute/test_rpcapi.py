"""The compute RPC client against real oslo.messaging servers (inproc://).

The servers' endpoint records what arrives: the test proves each method
reaches the right host with the right arguments and types.
"""

import queue

import oslo_messaging as messaging

from nova.compute import rebuild_request
from nova.compute import rpcapi as compute_rpcapi
from nova import context as nova_context
from nova import exception
from nova.model import external_event
from nova.model import network as network_model
from nova import objects
from nova import rpc
from nova.tests import base


class RecordingEndpoint:
    """Has every method the compute manager serves; records calls.

    Serves the versions a compute of ``version`` serves (the dispatcher
    refuses newer messages).
    """

    METHODS = ('build_and_run_instance', 'start_instance', 'stop_instance',
               'reboot_instance', 'suspend_instance', 'resume_instance',
               'terminate_instance', 'rebuild_instance',
               'external_instance_event', 'get_host_uptime',
               'get_instance_diagnostics', 'pause_instance',
               'unpause_instance', 'snapshot_instance',
               'backup_instance')

    def __init__(self, host, received,
                 version=compute_rpcapi.RPC_API_VERSION):
        self.target = messaging.Target(version=version)
        self.host = host
        for name in self.METHODS:
            setattr(self, name, self._recorder(name))
        self._received = received

    def _recorder(self, name):
        def record(ctxt, **kwargs):
            self._received.put((self.host, name, ctxt, kwargs))
        return record


class TestComputeAPI(base.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        base._parse_conf_once()
        rpc.cleanup()
        rpc.init(url='inproc://')
        cls.received = queue.Queue()
        cls.servers = []
        # compute-old: a compute not upgraded yet, serving up to 1.1.
        for host, version in (('compute1', compute_rpcapi.RPC_API_VERSION),
                              ('compute2', compute_rpcapi.RPC_API_VERSION),
                              ('compute-old', '1.1')):
            server = rpc.get_server(
                messaging.Target(topic='compute', server=host),
                [RecordingEndpoint(host, cls.received, version)])
            server.start()
            cls.servers.append(server)

    @classmethod
    def tearDownClass(cls):
        for server in cls.servers:
            server.stop()
        for server in cls.servers:
            server.wait()
        rpc.cleanup()
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.api = compute_rpcapi.ComputeAPI()
        self.ctxt = nova_context.RequestContext(user_id='u', project_id='p')
        self.instance = objects.Instance(self.ctxt, host='compute1',
                                         display_name='vm1')

    def _next(self):
        host, name, ctxt, kwargs = self.received.get(timeout=10)
        self.assertEqual(self.ctxt.request_id, ctxt.request_id)
        return host, name, kwargs

    def test_instance_operations_go_to_the_instance_host(self):
        for method, extra in (('start_instance', {}),
                              ('stop_instance', {}),
                              ('reboot_instance', {'reboot_type': 'HARD'}),
                              ('suspend_instance', {}),
                              ('resume_instance', {}),
                              ('pause_instance', {}),
                              ('unpause_instance', {}),
                              ('terminate_instance', {})):
            getattr(self.api, method)(self.ctxt, self.instance, **extra)
            host, name, kwargs = self._next()
            self.assertEqual(('compute1', method), (host, name))
            self.assertIsInstance(kwargs.pop('instance'), objects.Instance)
            self.assertEqual(extra, kwargs)

    def test_build_goes_to_the_chosen_host_with_typed_values(self):
        vif = network_model.VIF(
            id='p1', address='fa:16:3e:00:00:01',
            network=network_model.Network('n1', 'public', 'br-public'))
        self.api.build_and_run_instance(
            self.ctxt, self.instance, host='compute2',
            image_meta={'id': 'img'},
            network_info=network_model.NetworkInfo([vif]))
        host, name, kwargs = self._next()
        self.assertEqual(('compute2', 'build_and_run_instance'), (host, name))
        self.assertEqual(self.instance.uuid, kwargs['instance'].uuid)
        self.assertEqual(network_model.NetworkInfo([vif]),
                         kwargs['network_info'])
        self.assertEqual({'id': 'img'}, kwargs['image_meta'])

    def test_rebuild_goes_to_the_evacuation_target(self):
        migration = objects.Migration(self.ctxt,
                                      instance_uuid=self.instance.uuid,
                                      migration_type='evacuation',
                                      status='accepted')
        self.api.rebuild_instance(
            self.ctxt, self.instance, rebuild_request.RebuildRequest(
                recreate=True, image_ref='a', on_shared_storage=False,
                migration=migration),
            host='compute2')
        host, name, kwargs = self._next()
        self.assertEqual(('compute2', 'rebuild_instance'), (host, name))
        self.assertEqual({'instance', 'request'}, set(kwargs))
        request = kwargs['request']
        self.assertIsInstance(request, rebuild_request.RebuildRequest)
        self.assertIs(True, request.recreate)
        self.assertIs(False, request.on_shared_storage)
        self.assertEqual(migration.uuid, request.migration.uuid)

    def test_external_events_go_to_the_named_host(self):
        event = external_event.InstanceExternalEvent(
            self.instance.uuid, 'network-vif-plugged', 'p1')
        self.api.external_instance_event(self.ctxt, [self.instance], [event],
                                         host='compute2')
        host, name, kwargs = self._next()
        self.assertEqual(('compute2', 'external_instance_event'),
                         (host, name))
        self.assertEqual([event], kwargs['events'])
        self.api.external_instance_event(self.ctxt, [], [event])
        self.assertTrue(self.received.empty())

    def test_reading_calls_go_to_the_host_and_wait(self):
        # The endpoint answers None; a call returns once it has run.
        self.assertIsNone(self.api.get_host_uptime(self.ctxt, 'compute2'))
        self.assertEqual(('compute2', 'get_host_uptime', {}), self._next())
        self.api.get_instance_diagnostics(self.ctxt, self.instance)
        host, name, kwargs = self._next()
        self.assertEqual(('compute1', 'get_instance_diagnostics'),
                         (host, name))
        self.assertEqual(self.instance.uuid, kwargs['instance'].uuid)

    def test_reading_calls_need_13(self):
        capped = compute_rpcapi.ComputeAPI(version_cap='1.2')
        self.assertRaises(exception.ComputeServiceUnavailable,
                          capped.get_host_uptime, self.ctxt, 'compute1')
        self.assertTrue(self.received.empty())

    def test_snapshot_and_backup_go_to_the_host_as_1_5(self):
        self.api.snapshot_instance(self.ctxt, self.instance, 'img-1')
        host, name, kwargs = self._next()
        self.assertEqual(('compute1', 'snapshot_instance', 'img-1'),
                         (host, name, kwargs['image_id']))
        self.api.backup_instance(self.ctxt, self.instance, 'img-2',
                                 'daily', 2)
        host, name, kwargs = self._next()
        kwargs.pop('instance')
        self.assertEqual(('compute1', 'backup_instance',
                          {'image_id': 'img-2', 'backup_type': 'daily',
                           'rotation': 2}), (host, name, kwargs))

    def test_snapshot_is_refused_below_1_5(self):
        capped = compute_rpcapi.ComputeAPI(version_cap='1.3')
        self.assertRaises(exception.InstanceInvalidState,
                          capped.snapshot_instance, self.ctxt,
                          self.instance, 'img-1')
        self.assertTrue(self.received.empty())

    def test_no_host_is_refused_before_sending(self):
        self.instance.host = None
        self.assertRaises(ValueError, self.api.stop_instance, self.ctxt,
                          self.instance)

    def test_pause_needs_14_and_is_refused_below(self):
        # A compute of 1.3 has no pause endpoint: a client capped below
        # 1.4 sends nothing and says why.
        capped = compute_rpcapi.ComputeAPI(version_cap='1.3')
        for method in (capped.pause_instance, capped.unpause_instance):
            self.assertRaises(exception.PauseUnsupported, method, self.ctxt,
                              self.instance)
        self.assertTrue(self.received.empty())
        capped.suspend_instance(self.ctxt, self.instance)
        self.assertEqual(('compute1', 'suspend_instance'), self._next()[:2])

    def test_version_cap(self):
        self.assertEqual('1.5', compute_rpcapi.RPC_API_VERSION)
        capped = compute_rpcapi.ComputeAPI(version_cap='0.9')
        self.assertRaises(messaging.RPCVersionCapError,
                          capped.stop_instance, self.ctxt, self.instance)

    def _rebuild(self, api, host='compute2', **kwargs):
        api.rebuild_instance(
            self.ctxt, self.instance, rebuild_request.RebuildRequest(
                recreate=True, image_ref='i', scheduled_node='compute2',
                **kwargs),
            host=host)

    # What every 1.0/1.1 sender sent besides the instance.
    OLD_FORM = {'orig_image_ref': 'i', 'image_ref': 'i', 'injected_files': [],
                'new_pass': None, 'orig_sys_metadata': {}, 'bdms': None,
                'recreate': True, 'on_shared_storage': None,
                'preserve_ephemeral': False, 'migration': None,
                'scheduled_node': 'compute2'}

    def test_a_1_2_compute_gets_the_request_whole(self):
        self._rebuild(self.api, target_state='stopped')
        _host, name, kwargs = self._next()
        self.assertEqual('rebuild_instance', name)
        kwargs.pop('instance')
        self.assertEqual({'request': rebuild_request.RebuildRequest(
            recreate=True, image_ref='i', scheduled_node='compute2',
            target_state='stopped')}, kwargs)

    def test_a_client_capped_at_1_1_sends_the_old_form(self):
        # Served by a compute that knows no 1.2 (the dispatcher would
        # refuse a 1.2 message): the old keyword arguments, target_state
        # only when there is one.
        capped = compute_rpcapi.ComputeAPI(version_cap='1.1')
        self._rebuild(capped, host='compute-old', target_state='stopped')
        host, name, kwargs = self._next()
        self.assertEqual(('compute-old', 'rebuild_instance'), (host, name))
        kwargs.pop('instance')
        self.assertEqual(dict(self.OLD_FORM, target_state='stopped'),
                         kwargs)
        self._rebuild(capped, host='compute-old')
        _host, _name, kwargs = self._next()
        kwargs.pop('instance')
        self.assertEqual(self.OLD_FORM, kwargs)

    def test_target_state_needs_1_1_and_is_refused_below(self):
        # Without a target state a client capped at 1.0 sends 1.0 (no
        # target_state); with one it refuses instead of letting the
        # evacuation end in another state.
        capped = compute_rpcapi.ComputeAPI(version_cap='1.0')
        self._rebuild(capped, host='compute-old')
        _host, name, kwargs = self._next()
        self.assertEqual('rebuild_instance', name)
        kwargs.pop('instance')
        self.assertEqual(self.OLD_FORM, kwargs)
        self.assertRaises(exception.EvacuationTargetStateUnsupported,
                          self._rebuild, capped, target_state='stopped')
        self.assertTrue(self.received.empty())
