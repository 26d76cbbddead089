from nova.compute import external_events
from nova.model import external_event
from nova.tests.fixtures import compute as fixtures


class TestExternalEvents(fixtures.ComputeTestCase):

    def test_as_event_accepts_the_rpc_forms(self):
        event = external_events.as_event(
            {'server_uuid': 'u1', 'name': 'network-vif-plugged',
             'tag': 'p1'})
        self.assertEqual(external_event.InstanceExternalEvent(
            'u1', 'network-vif-plugged', 'p1', 'completed'), event)
        same = external_events.as_event(event)
        self.assertIs(event, same)
        self.assertEqual('failed', external_events.as_event(
            {'instance_uuid': 'u1', 'name': 'x', 'status': 'failed'}).status)

    def test_vif_plugged_wakes_the_waiter_and_marks_the_vif(self):
        instance = self.new_instance(
            network_info=self.network_info(active=False))
        waiter = self.virtapi.events.prepare(
            instance.uuid, [('network-vif-plugged', fixtures.PORT)])
        external_events.handle(self.compute, self.context, [instance], [
            {'instance_uuid': instance.uuid, 'name': 'network-vif-plugged',
             'tag': fixtures.PORT}])
        self.assertTrue(waiter.done.is_set())
        self.assertTrue(self.reload(instance).network_info[0].active)

    def test_failed_event_reaches_the_waiter_but_not_the_vif(self):
        instance = self.new_instance(
            network_info=self.network_info(active=False))
        waiter = self.virtapi.events.prepare(
            instance.uuid, [('network-vif-plugged', fixtures.PORT)])
        external_events.handle(self.compute, self.context, [instance], [
            {'instance_uuid': instance.uuid, 'name': 'network-vif-plugged',
             'tag': fixtures.PORT, 'status': 'failed'}])
        self.assertTrue(waiter.done.is_set())
        self.assertFalse(self.reload(instance).network_info[0].active)

    def test_other_events_and_instances_are_ignored(self):
        instance = self.new_instance(
            network_info=self.network_info(active=False))
        external_events.handle(self.compute, self.context, [instance], [
            {'instance_uuid': instance.uuid, 'name': 'network-changed'},
            {'instance_uuid': instance.uuid, 'name': 'volume-extended'},
            {'instance_uuid': 'not-in-request',
             'name': 'network-vif-plugged', 'tag': fixtures.PORT}])
        self.assertFalse(self.reload(instance).network_info[0].active)
