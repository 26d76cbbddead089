"""The manager as its callers see it: construction and RPC endpoints.

Each operation's behaviour is tested in its workflow's tests and in
nova/tests/functional/test_lifecycle*.py; here, that the facade wires them.
"""

import inspect

from nova.compute import instance_events
from nova.compute import manager as compute_manager
from nova.model import power_state
from nova.compute import rpcapi
from nova.model import vm_states
from nova.tests.fixtures import compute as fixtures
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


class TestEndpoints(fixtures.ComputeTestCase):

    def setUp(self):
        super().setUp()
        self.manager = compute_manager.ComputeManager(self.settings,
                                                      driver=self.driver)

    def test_every_cast_of_the_rpc_client_has_an_endpoint(self):
        # Parameters the rpcapi client casts must be accepted by name.
        casts = {'build_and_run_instance': ['instance', 'image_meta',
                                            'network_info'],
                 'start_instance': ['instance'],
                 'stop_instance': ['instance'],
                 'reboot_instance': ['instance', 'reboot_type'],
                 'suspend_instance': ['instance'],
                 'resume_instance': ['instance'],
                 'terminate_instance': ['instance'],
                 'external_instance_event': ['instances', 'events']}
        for method, kwargs in casts.items():
            self.assertTrue(hasattr(rpcapi.ComputeAPI, method), method)
            params = inspect.signature(
                getattr(self.manager, method)).parameters
            for name in ['context'] + kwargs:
                self.assertIn(name, params, method)

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
