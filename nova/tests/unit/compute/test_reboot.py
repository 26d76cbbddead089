from nova.compute import reboot
from nova import exception
from nova.model import power_state
from nova.model import vm_states
from nova.tests.fixtures import compute as fixtures


class TestReboot(fixtures.ComputeTestCase):

    def run_reboot(self, instance, reboot_type):
        self.runner.run(self.context, instance,
                        reboot.operation_for(reboot_type),
                        lambda: reboot.reboot(self.compute, self.context,
                                              instance, reboot_type))

    def test_operations_follow_the_state_table(self):
        self.assertEqual('reboot_soft',
                         reboot.operation_for('SOFT').transition)
        self.assertEqual('reboot_hard',
                         reboot.operation_for('HARD').transition)
        self.assertRaises(exception.InvalidInput, reboot.operation_for,
                          'soft')

    def test_hard_reboot_of_a_stopped_instance_starts_it(self):
        instance = self.active_instance()
        self.driver.power_off(instance)
        instance.vm_state = vm_states.STOPPED
        instance.save()
        self.run_reboot(instance, 'HARD')
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))

    def test_soft_reboot_of_a_stopped_instance_is_refused(self):
        instance = self.active_instance()
        instance.vm_state = vm_states.STOPPED
        instance.save()
        self.assertRaises(exception.InstanceInvalidState, self.run_reboot,
                          instance, 'SOFT')

    def test_failed_hard_reboot_is_error_with_files_kept(self):
        instance = self.active_instance()
        before = self.files(instance)
        self.driver.fail_at('reboot')
        self.assertRaises(exception.InjectedFailure, self.run_reboot,
                          instance, 'HARD')
        self.assertEqual(vm_states.ERROR, self.states(instance)[0])
        self.assertEqual(before, self.files(instance))
