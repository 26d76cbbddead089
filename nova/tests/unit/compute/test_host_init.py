from nova.compute import host_init
from nova.compute import power_state
from nova.compute import task_states
from nova.compute import vm_states
from nova.tests.unit.compute import fixtures


class TestInitInstances(fixtures.ComputeTestCase):

    def reconcile(self, *instances, do_not_touch=frozenset()):
        host_init.init_instances(self.compute, self.runner,
                                 [self.reload(i) for i in instances],
                                 do_not_touch=do_not_touch)

    def test_do_not_touch_is_honoured(self):
        instance = self.active_instance()
        instance.task_state = task_states.POWERING_OFF
        instance.save()
        self.reconcile(instance, do_not_touch={instance.uuid})
        self.assertEqual(task_states.POWERING_OFF,
                         self.states(instance)[1])

    def test_instance_of_another_host_in_the_list_is_skipped(self):
        instance = self.active_instance()
        instance.host = 'compute2'
        instance.task_state = task_states.POWERING_OFF
        instance.save()
        self.reconcile(instance)
        self.assertEqual(task_states.POWERING_OFF,
                         self.states(instance)[1])
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(instance).state)

    def test_one_failure_does_not_stop_the_others(self):
        first = self.active_instance()
        second = self.active_instance()
        for instance in (first, second):
            instance.task_state = task_states.POWERING_OFF
            instance.save()
        self.driver.fail_at('power_off')
        self.reconcile(first, second)
        # The first stop failed (vm_state kept, fault); the second ran.
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(first))
        self.assertEqual(1, len(self.faults(first)))
        self.assertEqual((vm_states.STOPPED, None, power_state.SHUTDOWN),
                         self.states(second))

    def test_idle_instance_gets_the_hypervisors_power_state(self):
        instance = self.active_instance()
        instance.power_state = power_state.NOSTATE
        instance.save()
        self.reconcile(instance)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual([], self.events(instance))

    def test_unknown_task_state_is_cleared_with_a_fault(self):
        instance = self.active_instance()
        instance.task_state = task_states.IMAGE_SNAPSHOT
        instance.save()
        self.reconcile(instance)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertIn('image_snapshot', self.faults(instance)[0].message)


class TestReportForeignDomains(fixtures.ComputeTestCase):

    def test_foreign_domains_are_left_alone(self):
        mine = self.active_instance()
        theirs = self.active_instance()
        theirs.host = 'compute2'
        theirs.save()
        deleted = self.active_instance()
        deleted.destroy()
        host_init.report_foreign_domains(self.compute, self.context,
                                         [self.reload(mine)])
        self.assertEqual(sorted([mine.uuid, theirs.uuid, deleted.uuid]),
                         sorted(self.driver.list_instance_uuids()))
        for instance in (theirs, deleted):
            self.assertIn('disk', self.files(instance))
