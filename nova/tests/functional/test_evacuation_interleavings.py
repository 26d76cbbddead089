"""Random interleavings of two evacuation attempts, reset-state and
delete (bounded, and drawn from a numbered random generator, so a failure
is reproducible by its round number).

For each round an instance of the dead host ``a`` goes through a random
sequence of: evacuate to ``b``, evacuate to ``c`` (both targets hold their
spawns until released), reset-state, delete, and the release of either
target. Then everything is released and left to settle, and the invariants
must hold: no evacuation in progress; at most one ``done``, and the
instance on its target if there is one, else still on ``a``; no host but
the instance's own runs a domain of it (none for a deleted instance); no
spawn journal left open.
"""

import random

from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.functional import test_evacuation_races as races
from nova.virt import journal

ROUNDS = range(8)
STEPS = ('evacuate_b', 'evacuate_c', 'reset_state', 'delete', 'release_b',
         'release_c')


class InterleavingsTestCase(races.RaceTestCase):
    HOST_SETTINGS = {'b': {'vif_plugging_timeout': 60},
                     'c': {'vif_plugging_timeout': 60}}

    def test_random_interleavings_keep_the_invariants(self):
        instances = {n: self.boot('a') for n in ROUNDS}
        self.kill('a')
        for name in ('b', 'c'):
            self.withhold_events(name)
        for n, instance in instances.items():
            plan = random.Random(n).choices(STEPS, k=5)
            with self.subTest(round=n, plan=plan):
                for step in plan:
                    self.take(step, instance)
                self.settle(instance)
                self.assertInvariants(instance, plan)

    # -- steps ---------------------------------------------------------------

    def take(self, step, instance):
        row = self.fresh(instance)
        if step.startswith('release_'):
            self.release_events(step[-1], instance)
            return
        if row.deleted:
            return                  # the API answers 404 from now on
        if step == 'reset_state':
            self.api.reset_state(self.ctx, row, 'active')
        elif step == 'delete':
            try:
                self.api.delete(self.ctx, row)
            except exception.InstanceInvalidState:
                pass
        else:
            self.request(step[-1], row)

    def request(self, target, row):
        host = self.hosts[target]
        waited = len(host.sim.virtapi.waited_for)
        try:
            migration = self.api.evacuate(self.ctx, row, host=target)
        except (exception.Conflict, exception.Invalid,
                exception.NovaException):
            return                  # refused at once: nothing started
        # Until the target holds its spawn, or ended the attempt.
        self.wait_for(
            lambda: (self.fresh(migration).status in (
                migration_obj.DONE, migration_obj.FAILED)
                or len(host.sim.virtapi.waited_for) > waited),
            'the evacuation to %s to start' % target)

    def settle(self, instance):
        def settled():
            for name in ('b', 'c'):
                self.release_events(name, instance)
            in_progress = objects.Migration.get_by_filters(
                self.ctx, instance_uuid=instance.uuid,
                status=list(migration_obj.IN_PROGRESS))
            row = self.fresh(instance)
            journals = [j for name in ('b', 'c') for j in journal.find(
                self.instances_path(name))[0]
                if j.idir.uuid == instance.uuid]
            return (not in_progress and not journals
                    and (row.deleted or row.task_state is None))
        self.wait_for(settled, 'instance %s to settle' % instance.uuid)

    # -- invariants ----------------------------------------------------------

    def assertInvariants(self, instance, plan):
        row = self.fresh(instance)
        migrations = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)
        statuses = [m.status for m in migrations]
        self.assertFalse(set(statuses) & set(migration_obj.IN_PROGRESS),
                         statuses)
        done = [m for m in migrations if m.status == migration_obj.DONE]
        self.assertLessEqual(len(done), 1, statuses)
        running = self.running_on(instance)
        if row.deleted:
            self.assertEqual([], running)
            return
        if done:
            self.assertEqual(done[0].dest_compute, row.host)
            if row.vm_state == 'active':
                self.assertEqual([row.host], running)
        else:
            self.assertEqual('a', row.host)
        self.assertLessEqual(set(running), {row.host})
        for name in ('b', 'c'):
            if name != row.host:
                self.assertFalse(self.hosts[name].has_domain(instance),
                                 'a domain of it left on %s' % name)


class SharedStorageInterleavingsTestCase(InterleavingsTestCase):
    SHARED = ('a', 'b', 'c')
