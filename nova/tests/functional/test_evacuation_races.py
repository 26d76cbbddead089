"""An evacuation that an operator gave up on must not win later.

The evacuation to b is slow (its network-vif-plugged event is withheld).
The operator runs reset-state (the migration m1 ``failed``, the task
cleared) and evacuates to c instead. Whatever b's stale attempt does
afterwards, the instance ends on c, m1 stays ``failed``, m2 is ``done``,
and b keeps nothing: at most one host runs a domain of the instance.
"""

import sqlalchemy as sa

from nova.compute import rebuild
from nova import context as nova_context
from nova.db import api as db_api
from nova import exception
from nova.model import external_event
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.functional import evacuate_harness as harness

EVENT = 'network-vif-plugged'


class RaceTestCase(harness.EvacuateTestCase):

    def withhold_events(self, name):
        self.hosts[name].sim.virtapi.deliver = False

    def release_events(self, name, instance):
        virtapi = self.hosts[name].sim.virtapi
        for event_name, tag in list(virtapi.waited_for):
            virtapi.events.deliver(external_event.InstanceExternalEvent(
                instance.uuid, event_name, tag,
                external_event.STATUS_COMPLETED))

    def waiting_on(self, name, instance):
        """Until ``name``'s spawn of ``instance`` waits for its event."""
        host = self.hosts[name]
        self.wait_for(lambda: host.has_domain(instance)
                      and host.sim.virtapi.waited_for,
                      '%s to wait for %s' % (name, EVENT))

    def running_on(self, instance):
        return [name for name, host in sorted(self.hosts.items())
                if not host.service._stopped.is_set()
                and host.running(instance)]

    def request(self):
        """The context of a new API request: its own request id, so that
        each request's action records the events of its own attempt."""
        return nova_context.get_admin_context()

    def attempt_ended(self, name, instance):
        """Whether ``name``'s evacuation attempt of ``instance`` ended: its
        action event has a result (written once its end was recorded)."""
        return any(event.host == name and event.result is not None
                   and event.event == rebuild.EVENT
                   for action in objects.InstanceAction.get_by_instance_uuid(
                       self.ctx, instance.uuid)
                   for event in action.events)


class TestResetStateRace(RaceTestCase):
    HOST_SETTINGS = {'b': {'vif_plugging_timeout': 60}}

    def test_a_stale_attempt_that_finishes_after_the_new_claim_never_wins(
            self):
        # The order: b's old attempt finishes once c claimed m2,
        # with the instance ``rebuilding`` again for c. b's attempt must
        # neither move the instance nor end the evacuation that is c's
        # (before the fix it put the instance in ERROR with b's fault,
        # and c's claim of the task then failed, m2 with it).
        instance = self.boot('a')
        self.kill('a')
        self.withhold_events('b')
        m1 = self.api.evacuate(self.request(), self.fresh(instance),
                               host='b')
        self.waiting_on('b', instance)

        self.api.reset_state(self.request(), self.fresh(instance), 'active')
        self.assertEqual(migration_obj.FAILED, self.fresh(m1).status)
        held = self.hold_after_claim('c')
        m2 = self.api.evacuate(self.request(), self.fresh(instance),
                               host='c')
        self.wait_held(held, 'c')
        self.assertEqual(migration_obj.PRE_MIGRATING, self.fresh(m2).status)

        # b's attempt now gets its event and finishes: it must lose, and
        # leave the instance as c's evacuation has it.
        self.release_events('b', instance)
        self.wait_for(lambda: self.attempt_ended('b', instance),
                      'b\'s stale attempt to end')
        self.assertNoTrace(self.hosts['b'], instance)
        row = self.fresh(instance)
        self.assertEqual(('a', 'active', 'rebuilding'),
                         (row.host, row.vm_state, row.task_state))
        self.assertIsNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid))

        held.release()
        m2 = self.wait_for_evacuation(m2)
        self.assertLandedOn('c', instance, m2)
        self.assertEqual(migration_obj.FAILED, self.fresh(m1).status)
        self.assertIsNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid))
        self.assertEqual(['c'], self.running_on(instance))

    def test_a_stale_attempt_that_finishes_first_never_wins(self):
        instance = self.boot('a')
        self.kill('a')
        self.withhold_events('b')
        m1 = self.api.evacuate(self.ctx, self.fresh(instance), host='b')
        self.waiting_on('b', instance)
        self.api.reset_state(self.ctx, self.fresh(instance), 'active')
        # c is slow too: b's stale attempt finishes while c spawns.
        self.withhold_events('c')
        m2 = self.api.evacuate(self.ctx, self.fresh(instance), host='c')
        self.waiting_on('c', instance)
        self.release_events('b', instance)
        self.wait_for(lambda: not self.hosts['b'].has_domain(instance),
                      'b to remove what its stale attempt made')
        self.assertEqual('a', self.fresh(instance).host)
        self.release_events('c', instance)
        m2 = self.wait_for_evacuation(m2)
        self.assertLandedOn('c', instance, m2)
        self.assertEqual(migration_obj.FAILED, self.fresh(m1).status)
        self.assertNoTrace(self.hosts['b'], instance)
        self.assertEqual(['c'], self.running_on(instance))


class TestStaleAttemptNeverSpawns(RaceTestCase):

    def test_a_stale_attempt_held_before_it_spawns_never_spawns(self):
        # b claimed m1 and is held before it takes rebuild_spawning; the
        # operator resets and evacuates to c, held at the same point; b
        # goes on first. Both attempts find the instance ``rebuilding``:
        # only the one whose migration is still pre-migrating may take
        # it and spawn.
        instance = self.boot('a')
        self.kill('a')
        held_b = self.hold_after_claim('b')
        m1 = self.api.evacuate(self.request(), self.fresh(instance),
                               host='b')
        self.wait_held(held_b, 'b')
        self.assertEqual(migration_obj.PRE_MIGRATING, self.fresh(m1).status)

        self.api.reset_state(self.request(), self.fresh(instance), 'active')
        held_c = self.hold_after_claim('c')
        m2 = self.api.evacuate(self.request(), self.fresh(instance),
                               host='c')
        self.wait_held(held_c, 'c')

        held_b.release()
        self.wait_for(lambda: self.attempt_ended('b', instance),
                      'b\'s stale attempt to end')
        # It ended without spawning and left c's evacuation as it was:
        # no task taken, no fault, m2 still c's.
        self.assertNoTrace(self.hosts['b'], instance)
        row = self.fresh(instance)
        self.assertEqual(('a', 'active', 'rebuilding'),
                         (row.host, row.vm_state, row.task_state))
        self.assertEqual(migration_obj.PRE_MIGRATING, self.fresh(m2).status)
        self.assertIsNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid))

        held_c.release()
        m2 = self.wait_for_evacuation(m2)
        self.assertFalse(self.hosts['b'].has_domain(instance))
        self.assertLandedOn('c', instance, m2)
        row = self.fresh(instance)
        self.assertEqual(('c', 'active'), (row.host, row.vm_state))
        self.assertEqual(migration_obj.FAILED, self.fresh(m1).status)
        self.assertEqual(migration_obj.DONE, self.fresh(m2).status)
        self.assertEqual(['c'], self.running_on(instance))


class TestResetStateRaceSharedStorage(RaceTestCase):
    SHARED = ('a', 'b', 'c')
    HOST_SETTINGS = {'b': {'vif_plugging_timeout': 60}}

    def test_no_second_host_boots_the_disk_a_stale_attempt_runs(self):
        instance = self.boot('a')
        path = self.hosts['a'].instance_dir(instance)
        before = sha256_tree(path)
        self.kill('a')
        self.withhold_events('b')
        m1 = self.api.evacuate(self.ctx, self.fresh(instance), host='b')
        self.waiting_on('b', instance)
        self.api.reset_state(self.ctx, self.fresh(instance), 'active')
        self.assertEqual(migration_obj.FAILED, self.fresh(m1).status)

        # c refuses while b's attempt holds the directory: two hosts
        # must never run one disk.
        m2 = self.evacuate(instance, host='c')
        self.assertEqual(migration_obj.FAILED, self.fresh(m2).status)
        self.assertIn('two hosts must never run one disk',
                      self.failure_text(instance))
        self.assertFalse(self.hosts['c'].has_domain(instance))

        # b's attempt finishes and loses: it puts the directory back as
        # it found it, and c can take over from the same disks.
        self.release_events('b', instance)
        self.wait_for(lambda: not self.hosts['b'].has_domain(instance),
                      'b to remove what its stale attempt made')
        self.assertEqual(before['disk'], sha256_tree(path)['disk'])
        m3 = self.evacuate(instance, host='c')
        self.assertLandedOn('c', instance, m3)
        self.assertEqual(before['disk'], sha256_tree(path)['disk'])
        self.assertEqual(['c'], self.running_on(instance))


class TestTheLastStepIsOneTransaction(RaceTestCase):

    def test_a_failing_done_write_moves_nothing(self):
        # A real failure of the database in the last step: a trigger
        # refuses to mark the migration done. Nothing moves, b removes
        # what it made, the instance stays a's, in ERROR.
        instance = self.boot('a')
        self.kill('a')
        with db_api.get_engine().begin() as conn:
            conn.execute(sa.text(
                "CREATE TRIGGER no_done BEFORE UPDATE OF status ON "
                "migrations WHEN NEW.status = 'done' BEGIN "
                "SELECT RAISE(ABORT, 'the disk is full'); END"))
        self.addCleanup(self._drop_trigger)
        migration = self.evacuate(instance, host='b')
        row = self.fresh(instance)
        self.assertEqual(('a', 'error'), (row.host, row.vm_state))
        self.assertEqual(migration_obj.FAILED, self.fresh(migration).status)
        self.assertNoTrace(self.hosts['b'], instance)
        self._drop_trigger()
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)

    def _drop_trigger(self):
        with db_api.get_engine().begin() as conn:
            conn.execute(sa.text('DROP TRIGGER IF EXISTS no_done'))


class TestStaleSaveIsRefused(RaceTestCase):

    def test_the_final_save_checks_the_migration(self):
        # The same check, at the object level: a failed migration cannot
        # be taken along by an instance save.
        instance = self.boot('a')
        migration = objects.Migration(
            self.ctx, instance_uuid=instance.uuid, source_compute='a',
            dest_compute='b', migration_type=migration_obj.EVACUATION,
            status=migration_obj.FAILED).create()
        row = self.fresh(instance)
        row.host = 'b'
        migration.status = migration_obj.DONE
        with self.assertRaises(exception.UnexpectedMigrationStatusError):
            row.save(expected_host=['a'], and_migration=(
                migration, [migration_obj.PRE_MIGRATING]))
        self.assertEqual('a', self.fresh(instance).host)
        self.assertEqual(migration_obj.FAILED, self.fresh(migration).status)
