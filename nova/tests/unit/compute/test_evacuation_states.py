"""The evacuation state table: every step, allowed and refused, on a real
database (SQLite here; the same tests run on PostgreSQL in
nova/tests/integration/test_db_postgresql.py)."""

import ast
import itertools
import os

from nova.compute import evacuation_states as es
from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests import base
from nova.tests.unit.conductor import db_fixtures as dbf

ACTORS = (es.API, es.CONDUCTOR, es.TARGET, es.SOURCE, es.OPERATOR)


class TransitionTests:
    """Needs ``self.ctx`` on a migrated database."""

    def migration(self, status, instance=None):
        instance = instance or dbf.make_instance(self.ctx, 'a')
        return objects.Migration(
            self.ctx, instance_uuid=instance.uuid, source_compute='a',
            dest_compute='b', migration_type=migration_obj.EVACUATION,
            status=status).create()

    def status_of(self, migration):
        return objects.Migration.get_by_id(self.ctx, migration.id).status

    def test_every_step_of_the_table_and_only_those(self):
        statuses = migration_obj.EVACUATION_STATUSES
        for frm, to, by in itertools.product(statuses, statuses, ACTORS):
            migration = self.migration(frm)
            allowed = by in es.TRANSITIONS.get((frm, to), ())
            anyone_from_elsewhere = es.predecessors(to, by)
            if allowed:
                es.advance(migration, to, by)
                self.assertEqual(to, self.status_of(migration),
                                 (frm, to, by))
            elif anyone_from_elsewhere:
                # A step the table has for ``by``, but not from here:
                # the compare-and-swap refuses it.
                self.assertRaises(exception.UnexpectedMigrationStatusError,
                                  es.advance, migration, to, by)
                self.assertEqual(frm, self.status_of(migration),
                                 (frm, to, by))
                self.assertEqual(frm, migration.status)
            else:
                self.assertRaises(exception.InvalidMigrationTransition,
                                  es.advance, migration, to, by)
                self.assertEqual(frm, self.status_of(migration),
                                 (frm, to, by))

    def test_narrowing_the_expected_status(self):
        migration = self.migration(es.ACCEPTED)
        self.assertRaises(exception.UnexpectedMigrationStatusError,
                          es.advance, migration, es.FAILED, es.TARGET,
                          expected=es.PRE_MIGRATING)
        self.assertRaises(exception.InvalidMigrationTransition,
                          es.advance, migration, es.FAILED, es.API,
                          expected=es.PRE_MIGRATING)
        self.assertEqual(es.ACCEPTED, self.status_of(migration))

    def test_the_claim_writes_the_target_with_the_step(self):
        migration = self.migration(es.ACCEPTED)
        es.advance(migration, es.PRE_MIGRATING, es.TARGET,
                   dest_compute='c', dest_node='c-node')
        fresh = objects.Migration.get_by_id(self.ctx, migration.id)
        self.assertEqual((es.PRE_MIGRATING, 'c', 'c-node'),
                         (fresh.status, fresh.dest_compute, fresh.dest_node))

    def test_the_last_step_moves_both_rows_or_neither(self):
        instance = dbf.make_instance(self.ctx, 'a',
                                     task_state='rebuild_spawning')
        migration = self.migration(es.PRE_MIGRATING, instance)
        instance.host = 'b'
        instance.task_state = None
        instance.save(expected_task_state=['rebuild_spawning'],
                      expected_host=['a'],
                      and_migration=es.step_for_final_save(migration))
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual(('b', None), (row.host, row.task_state))
        self.assertEqual(es.DONE, self.status_of(migration))

    def test_a_failed_migration_keeps_the_instance_where_it_was(self):
        instance = dbf.make_instance(self.ctx, 'a',
                                     task_state='rebuild_spawning')
        migration = self.migration(es.FAILED, instance)
        instance.host = 'b'
        self.assertRaises(exception.UnexpectedMigrationStatusError,
                          instance.save,
                          expected_task_state=['rebuild_spawning'],
                          expected_host=['a'],
                          and_migration=es.step_for_final_save(migration))
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual(('a', 'rebuild_spawning'),
                         (row.host, row.task_state))
        self.assertEqual((es.FAILED, es.FAILED),
                         (self.status_of(migration), migration.status))

    def test_an_instance_that_moved_on_keeps_the_migration(self):
        instance = dbf.make_instance(self.ctx, 'a', task_state=None)
        migration = self.migration(es.PRE_MIGRATING, instance)
        instance.host = 'b'
        self.assertRaises(exception.UnexpectedTaskStateError,
                          instance.save,
                          expected_task_state=['rebuild_spawning'],
                          expected_host=['a'],
                          and_migration=es.step_for_final_save(migration))
        self.assertEqual(es.PRE_MIGRATING, self.status_of(migration))

    def test_end_evacuation_leaves_an_instance_it_lost_alone(self):
        # reset-state ended the migration; the instance is in another
        # evacuation now: ending the first must not clear its task.
        instance = dbf.make_instance(self.ctx, 'a',
                                     task_state='rebuild_spawning')
        stale = self.migration(es.FAILED, instance)
        self.assertFalse(es.end_evacuation(
            self.ctx, instance, stale, exception.InjectedFailure(step='x'),
            'b', es.TARGET, vm_state='error'))
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual(('active', 'rebuild_spawning'),
                         (row.vm_state, row.task_state))
        self.assertIsNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid))

    def test_end_evacuation_ends_one_it_owns(self):
        instance = dbf.make_instance(self.ctx, 'a',
                                     task_state='rebuild_spawning')
        migration = self.migration(es.PRE_MIGRATING, instance)
        self.assertTrue(es.end_evacuation(
            self.ctx, instance, migration,
            exception.InjectedFailure(step='spawn'), 'b', es.TARGET,
            vm_state='error'))
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual(('a', 'error', None),
                         (row.host, row.vm_state, row.task_state))
        self.assertEqual(es.FAILED, self.status_of(migration))
        self.assertIn('spawn', objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid).message)


class TestTransitionsSQLite(TransitionTests, base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()


class TestOnlyTheTableChangesStatuses(base.TestCase):
    """No code but evacuation_states.py assigns a migration's status."""

    def test_no_status_assignment_elsewhere(self):
        top = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.dirname(os.path.abspath(__file__)))))
        offenders = []
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != 'tests']
            for name in files:
                path = os.path.join(root, name)
                if not name.endswith('.py') or path == es.__file__:
                    continue
                with open(path) as f:
                    tree = ast.parse(f.read(), path)
                for node in ast.walk(tree):
                    targets = (node.targets if isinstance(node, ast.Assign)
                               else [node.target]
                               if isinstance(node, (ast.AugAssign,
                                                    ast.AnnAssign))
                               else [])
                    for target in targets:
                        if (isinstance(target, ast.Attribute)
                                and target.attr == 'status'
                                and 'migration' in ast.unparse(
                                    target.value).lower()):
                            offenders.append('%s:%d' % (
                                os.path.relpath(path, top), node.lineno))
        self.assertEqual([], offenders)
