from nova.compute import attempts
from nova.compute import build
from nova import exception
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova.tests.fixtures import compute as fixtures
from nova.virt import journal


class TestBuild(fixtures.ComputeTestCase):

    def run_build(self, instance, network_info):
        build.place(self.compute, instance, network_info)
        token = attempts.Claim.new(self.context, instance, fixtures.HOST,
                                   journal.BUILD)
        self.runner.run(self.context, instance, build.BUILD,
                        lambda: build.spawn(self.compute, self.context,
                                            instance, {}, token.attempt),
                        token=token)
        return token

    def test_place_fills_only_what_is_missing(self):
        instance = self.new_instance(host=None, node=None)
        build.place(self.compute, instance, None)
        self.assertEqual((fixtures.HOST, fixtures.HOST),
                         (instance.host, instance.node))
        other = self.new_instance(host='chosen', node='chosen-node')
        build.place(self.compute, other, self.network_info())
        self.assertEqual(('chosen', 'chosen-node'), (other.host, other.node))

    def test_build_places_spawns_and_activates(self):
        instance = self.new_instance(host=None, node=None,
                                     task_state=task_states.SCHEDULING)
        self.run_build(instance, self.network_info())
        row = self.reload(instance)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         (row.vm_state, row.task_state, row.power_state))
        self.assertEqual(fixtures.HOST, row.host)
        self.assertIsNotNone(row.launched_at)
        self.assertIn('disk', self.files(instance))

    def test_failed_build_is_error_and_stays_placed_here(self):
        instance = self.new_instance(host=None, node=None)
        self.driver.fail_at('spawn.define')
        self.assertRaises(exception.InjectedFailure, self.run_build,
                          instance, self.network_info())
        row = self.reload(instance)
        self.assertEqual((vm_states.ERROR, None), (row.vm_state,
                                                   row.task_state))
        self.assertEqual(fixtures.HOST, row.host)
        self.assertEqual({}, self.files(instance))
