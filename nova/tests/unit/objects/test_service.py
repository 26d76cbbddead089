"""Service records, heartbeats and liveness."""

import datetime
import threading

from nova import context
from nova import exception
from nova import objects
from nova.objects import base as obj_base
from nova.tests import base

DOWN_TIME = 60


class ServiceTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()

    def _create(self, host='h1', binary='nova-compute', **values):
        return objects.Service(self.ctx, host=host, binary=binary,
                               topic='compute', **values).create()

    def test_create_and_get(self):
        service = self._create(storage_identity='marker-1')
        found = objects.Service.get_by_host_and_binary(self.ctx, 'h1',
                                                       'nova-compute')
        self.assertEqual(service.to_dict(), found.to_dict())
        self.assertEqual(service.to_dict(), objects.Service.get_by_id(
            self.ctx, service.id).to_dict())
        self.assertEqual((0, False, False),
                         (found.report_count, found.disabled,
                          found.forced_down))
        self.assertRaises(exception.ServiceNotFound,
                          objects.Service.get_by_host_and_binary, self.ctx,
                          'h2', 'nova-compute')
        self.assertRaises(exception.ServiceNotFound,
                          objects.Service.get_by_id, self.ctx, 999)

    def test_one_per_host_and_binary(self):
        self._create()
        self.assertRaises(exception.ServiceTopicExists, self._create)

    def test_get_all(self):
        self._create('h2')
        self._create('h1')
        self._create('h1', 'nova-conductor')
        computes = objects.Service.get_all(self.ctx, binary='nova-compute')
        self.assertEqual(['h1', 'h2'], [s.host for s in computes])
        self.assertEqual(3, len(objects.Service.get_all(self.ctx)))

    def test_save(self):
        service = self._create()
        service.disabled = True
        service.disabled_reason = 'maintenance'
        service.save()
        found = objects.Service.get_by_id(self.ctx, service.id)
        self.assertEqual((True, 'maintenance'),
                         (found.disabled, found.disabled_reason))

    def test_heartbeat_counts_and_marks_up(self):
        service = self._create()
        self.assertFalse(service.is_up(DOWN_TIME))
        service.heartbeat()
        service.heartbeat()
        found = objects.Service.get_by_id(self.ctx, service.id)
        self.assertEqual(2, found.report_count)
        self.assertEqual(2, service.report_count)
        self.assertEqual(found.last_seen_up, service.last_seen_up)
        self.assertTrue(found.is_up(DOWN_TIME))

    def test_concurrent_heartbeats_never_lose_a_count(self):
        service = self._create()
        copies = [objects.Service.get_by_id(self.ctx, service.id)
                  for _ in range(4)]

        def beat(copy):
            for _ in range(10):
                copy.heartbeat()

        threads = [threading.Thread(target=beat, args=(c,)) for c in copies]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(40, objects.Service.get_by_id(
            self.ctx, service.id).report_count)

    def test_old_heartbeat_is_down(self):
        old = obj_base.utcnow() - datetime.timedelta(seconds=2 * DOWN_TIME)
        service = self._create(last_seen_up=old)
        self.assertFalse(service.is_up(DOWN_TIME))
        self.assertTrue(service.is_up(3 * DOWN_TIME))

    def test_forced_down_is_down_whatever_the_heartbeat(self):
        service = self._create()
        service.heartbeat()
        service.forced_down = True
        service.save()
        found = objects.Service.get_by_id(self.ctx, service.id)
        self.assertFalse(found.is_up(DOWN_TIME))

    def test_heartbeat_of_a_deleted_row(self):
        service = objects.Service(self.ctx, host='h1', binary='b')
        service.id = 12345
        self.assertRaises(exception.ServiceNotFound, service.heartbeat)

    def test_states_are_the_columns_a_choice_reads(self):
        old = obj_base.utcnow() - datetime.timedelta(seconds=2 * DOWN_TIME)
        self._create('h2', storage_identity='shared-1')
        self._create('h1', last_seen_up=old, disabled=True)
        self._create('h3', forced_down=True).heartbeat()
        self._create('h4').heartbeat()
        self._create('api1', binary='nova-api')
        states = objects.Service.states(self.ctx, 'nova-compute')
        services = objects.Service.get_all(self.ctx, binary='nova-compute')
        self.assertEqual(['h1', 'h2', 'h3', 'h4'], [s.host for s in states])
        for state, service in zip(states, services):
            self.assertEqual(
                [getattr(service, name) for name in state._fields],
                list(state))
            self.assertEqual(service.is_up(DOWN_TIME),
                             state.is_up(DOWN_TIME))
        self.assertEqual([False, False, False, True],
                         [s.is_up(DOWN_TIME) for s in states])
        self.assertTrue(states[0].is_up(3 * DOWN_TIME))
        self.assertEqual((True, 'shared-1'),
                         (states[0].disabled, states[1].storage_identity))
        self.assertEqual(datetime.timezone.utc, states[0].last_seen_up.tzinfo)

    def test_a_state_is_up_as_of_the_time_it_is_given(self):
        # A choice reads the clock once for every host.
        self._create('h1').heartbeat()
        (state,) = objects.Service.states(self.ctx, 'nova-compute')
        seen = state.last_seen_up
        later = datetime.timedelta(seconds=DOWN_TIME + 1)
        self.assertTrue(state.is_up(DOWN_TIME, now=seen))
        self.assertFalse(state.is_up(DOWN_TIME, now=seen + later))
        self.assertTrue(state.is_up(DOWN_TIME))
