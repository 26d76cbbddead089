import os

from nova.compute import delete
from nova import exception
from nova.model import task_states
from nova.model import vm_states
from nova.tests.fixtures import compute as fixtures


class TestDelete(fixtures.ComputeTestCase):

    def test_delete_removes_the_guest_its_files_and_the_row(self):
        instance = self.active_instance()
        delete.terminate(self.runner, self.compute, self.context, instance)
        row = self.reload(instance)
        self.assertTrue(row.deleted)
        self.assertEqual(vm_states.DELETED, row.vm_state)
        self.assertFalse(os.path.exists(os.path.join(
            self.settings.instances_path, instance.uuid)))
        self.assertEqual([], self.driver.list_instance_uuids())

    def test_delete_claimed_by_the_api_from_another_task(self):
        instance = self.active_instance()
        instance.task_state = task_states.DELETING
        instance.save()
        delete.terminate(self.runner, self.compute, self.context, instance)
        self.assertTrue(self.reload(instance).deleted)

    def test_failed_delete_keeps_the_row_and_files(self):
        instance = self.active_instance()
        before = self.files(instance)
        self.driver.fail_at('destroy')
        self.assertRaises(exception.InjectedFailure, delete.terminate,
                          self.runner, self.compute, self.context, instance)
        row = self.reload(instance)
        self.assertFalse(row.deleted)
        self.assertEqual((vm_states.ERROR, None),
                         (row.vm_state, row.task_state))
        self.assertEqual(before, self.files(instance))

    def test_delete_wakes_a_build_waiting_for_vif_events(self):
        instance = self.active_instance()
        waiter = self.virtapi.events.prepare(
            instance.uuid, [('network-vif-plugged', fixtures.PORT)])
        delete.terminate(self.runner, self.compute, self.context, instance)
        self.assertTrue(waiter.done.is_set())
