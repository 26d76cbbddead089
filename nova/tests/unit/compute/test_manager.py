"""The manager as its callers see it: construction and RPC endpoints.

Each operation's behaviour is tested in its workflow's tests and in
nova/tests/functional/test_lifecycle*.py; here, that the facade wires them.
"""

import inspect

import sqlalchemy as sa

from nova.compute import instance_events
from nova.compute import manager as compute_manager
from nova.compute import rebuild_request
from nova.compute import rpcapi
from nova import exception
from nova.model import power_state
from nova.model import vm_states
from nova import objects
from nova import rpc
from nova.tests.fixtures import compute as fixtures
from nova.tests.fixtures import database as dbf
from nova.virt import fake


class TestConstruction(fixtures.ComputeTestCase):

    def test_uses_the_given_driver_and_its_virtapi(self):
        manager = compute_manager.ComputeManager(self.settings,
                                                 driver=self.driver)
        self.assertIs(self.driver, manager.driver)
        self.assertIs(self.virtapi, manager.virtapi)
        self.assertEqual(fixtures.HOST, manager.host)

    def test_loads_the_configured_driver(self):
        self.flags(compute_driver='fake.FakeDriver')
        manager = compute_manager.ComputeManager(self.settings)
        self.assertIsInstance(manager.driver, fake.FakeDriver)
        self.assertIsInstance(manager.virtapi,
                              instance_events.ComputeVirtAPI)
        self.assertIs(manager.virtapi, manager.driver.virtapi)

    def test_listens_to_the_drivers_lifecycle_events(self):
        manager = compute_manager.ComputeManager(self.settings,
                                                 driver=self.driver)
        instance = self.new_instance()
        manager.build_and_run_instance(self.context, instance,
                                       image_meta={})
        self.driver.simulate_shutdown(instance.uuid)
        self.assertEqual(power_state.SHUTDOWN, self.states(instance)[2])


class _RecordingClient:
    """Stands in for the oslo.messaging client of ``rpcapi.ComputeAPI``:
    records the messages it is asked to send instead of sending them."""

    def __init__(self):
        self.sent = []

    def prepare(self, **options):
        return self

    def can_send_version(self, version):
        return True

    def cast(self, ctxt, method, **kwargs):
        self.sent.append((method, kwargs))

    call = cast


def _messages_of_the_compute_rpc_client(context):
    """{client method: (RPC method, kwargs)} for every public method of
    ``rpcapi.ComputeAPI``, each called with an argument for every
    parameter (one instance, on host HOST, where it wants instances)."""
    instance = objects.Instance(context, host=fixtures.HOST)
    special = {'instance': instance, 'instances': [instance],
               'host': fixtures.HOST,
               'request': rebuild_request.RebuildRequest(recreate=True)}
    messages = {}
    for method_name, method in inspect.getmembers(rpcapi.ComputeAPI,
                                                  inspect.isfunction):
        if method_name.startswith('_'):
            continue
        api = rpcapi.ComputeAPI()
        client = api.client = _RecordingClient()
        # All but self and the context.
        params = list(inspect.signature(method).parameters)[2:]
        getattr(api, method_name)(
            context, **{p: special.get(p, 'value-of-' + p) for p in params})
        if len(client.sent) != 1:
            raise AssertionError('%s sent %d messages, not one'
                                 % (method_name, len(client.sent)))
        messages[method_name] = client.sent[0]
    return messages


class TestEndpoints(fixtures.ComputeTestCase):

    def setUp(self):
        super().setUp()
        self.manager = compute_manager.ComputeManager(self.settings,
                                                      driver=self.driver)

    def test_every_cast_of_the_rpc_client_has_an_endpoint(self):
        """Every message ``rpcapi.ComputeAPI`` sends names a manager method
        that accepts the context and every argument sent, by name, and
        requires no other, as oslo.messaging's dispatcher calls it:
        ``method(ctxt, **args)``.

        The messages are those the client's public methods really send,
        found by introspection, so a new RPC method is checked without
        editing this test.
        """
        # The client is made on a real transport, then its sending part
        # replaced by the recorder.
        rpc.cleanup()
        rpc.init(url='inproc://')
        self.addCleanup(rpc.cleanup)
        sent = _messages_of_the_compute_rpc_client(self.context)
        # A floor, so that an introspection that finds nothing cannot pass.
        self.assertLessEqual(
            {'build_and_run_instance', 'start_instance', 'stop_instance',
             'reboot_instance', 'suspend_instance', 'resume_instance',
             'terminate_instance', 'rebuild_instance',
             'external_instance_event'},
            {name for name, _kwargs in sent.values()})
        for client_method, (name, kwargs) in sent.items():
            # The dispatcher refuses private methods.
            self.assertFalse(name.startswith('_'), client_method)
            endpoint = getattr(self.manager, name, None)
            self.assertTrue(callable(endpoint),
                            '%s casts %s, which the manager lacks'
                            % (client_method, name))
            try:
                inspect.signature(endpoint).bind(self.context, **kwargs)
            except TypeError as e:
                self.fail('%s casts %s(ctxt, %s): %s'
                          % (client_method, name, ', '.join(sorted(kwargs)),
                             e))

    def test_build_takes_network_info_in_its_rpc_form(self):
        instance = self.new_instance()
        self.manager.build_and_run_instance(
            self.context, instance, image={'id': 'img'},
            network_info=self.network_info().to_list())
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual({fixtures.PORT},
                         self.driver.plugged_vifs(instance.uuid))

    def test_lifecycle_through_the_endpoints(self):
        instance = self.new_instance()
        self.manager.build_and_run_instance(self.context, instance,
                                            image_meta={})
        steps = [
            (self.manager.stop_instance, vm_states.STOPPED),
            (self.manager.start_instance, vm_states.ACTIVE),
            (lambda c, i: self.manager.reboot_instance(c, i, 'HARD'),
             vm_states.ACTIVE),
            (self.manager.suspend_instance, vm_states.SUSPENDED),
            (self.manager.resume_instance, vm_states.ACTIVE),
            (self.manager.terminate_instance, vm_states.DELETED),
        ]
        for endpoint, vm_state in steps:
            endpoint(self.context, self.reload(instance))
            self.assertEqual(vm_state, self.states(instance)[0])
        self.assertEqual(
            ['compute_build_and_run_instance', 'compute_stop_instance',
             'compute_start_instance', 'compute_reboot_instance',
             'compute_suspend_instance', 'compute_resume_instance',
             'compute_terminate_instance'],
            [event for _a, event, _r in self.events(instance)])

    def test_storage_identity(self):
        self.assertEqual(self.driver.get_storage_identity(),
                         self.manager.get_storage_identity())


class TestBuildAsAnAttempt(fixtures.ComputeTestCase):
    """A build is an attempt with a token: whether it landed is asked of
    the database before anything it made is undone."""

    def setUp(self):
        super().setUp()
        self.manager = compute_manager.ComputeManager(self.settings,
                                                      driver=self.driver)

    def test_a_landed_build_is_not_undone_by_a_later_database_error(self):
        # The ACTIVE save, with its attempt landed and its action event
        # ended, commits; the build is told it failed. The database says
        # it landed: its disks and guest stay.
        instance = self.new_instance()
        dbf.fail_a_commit(
            self, lambda statement, parameters: (
                statement.startswith('UPDATE instance_attempts')
                and 'landed' in tuple(parameters)), answer_lost=True)
        self.assertRaises(sa.exc.OperationalError,
                          self.manager.build_and_run_instance,
                          self.context, instance, image_meta={})
        row = self.reload(instance)
        self.assertEqual((vm_states.ACTIVE, None), (row.vm_state,
                                                    row.task_state))
        self.assertTrue(row.disks_exist)
        self.assertIsNotNone(row.launched_at)
        self.assertIn('disk', self.files(instance))
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(instance).state)
        self.assertEqual(([], []), self.driver.interrupted_attempts())

    def test_a_build_that_did_not_land_is_undone(self):
        instance = self.new_instance()
        self.driver.fail_at('spawn.start')
        self.assertRaises(exception.InjectedFailure,
                          self.manager.build_and_run_instance,
                          self.context, instance, image_meta={})
        row = self.reload(instance)
        self.assertEqual(vm_states.ERROR, row.vm_state)
        self.assertFalse(row.disks_exist)
        self.assertIsNone(row.launched_at)
        self.assertIsNone(row.attempt_id)
        self.assertEqual({}, self.files(instance))
