from nova.compute import suspend
from nova import exception
from nova.model import power_state
from nova.model import vm_states
from nova.tests.fixtures import compute as fixtures


class TestSuspend(fixtures.ComputeTestCase):

    def run_suspend(self, instance):
        self.runner.run(self.context, instance, suspend.SUSPEND,
                        lambda: suspend.suspend(self.compute, self.context,
                                                instance))

    def run_resume(self, instance):
        self.runner.run(self.context, instance, suspend.RESUME,
                        lambda: suspend.resume(self.compute, self.context,
                                               instance))

    def test_suspend_then_resume(self):
        instance = self.active_instance()
        self.run_suspend(instance)
        self.assertEqual((vm_states.SUSPENDED, None, power_state.SUSPENDED),
                         self.states(instance))
        self.run_resume(instance)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))

    def test_failed_resume_stays_suspended(self):
        instance = self.active_instance()
        self.run_suspend(instance)
        self.driver.fail_at('resume')
        self.assertRaises(exception.InjectedFailure, self.run_resume,
                          instance)
        self.assertEqual((vm_states.SUSPENDED, None, power_state.SUSPENDED),
                         self.states(instance))
        self.assertEqual(1, len(self.faults(instance)))

    def test_resume_of_an_active_instance_is_refused(self):
        instance = self.active_instance()
        self.assertRaises(exception.InstanceInvalidState, self.run_resume,
                          instance)
