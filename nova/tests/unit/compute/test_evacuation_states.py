"""The evacuation state table: every step, allowed and refused, on a real
database (SQLite here; the same tests run on PostgreSQL in
nova/tests/integration/test_db_postgresql.py)."""

import ast
import itertools
import os

from nova.compute import attempts
from nova.compute import evacuation_states as es
from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf

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

    def test_the_claim_and_the_token_are_one_transaction(self):
        # The target's claim moves the migration to pre-migrating and
        # gives its attempt the token together, or neither: a migration
        # failed meanwhile (reset-state) leaves the instance as it was.
        instance = dbf.make_instance(self.ctx, 'a', task_state='rebuilding')
        stale = self.migration(es.FAILED, instance)
        token = attempts.Claim.new(self.ctx, instance, 'b', 'evacuation',
                                   stale.uuid)
        self.assertRaises(exception.UnexpectedMigrationStatusError,
                          instance.save, expected_task_state=['rebuilding'],
                          and_migration=es.step_for_claim(stale, 'b', 'b'),
                          **token.take(instance))
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertIsNone(row.attempt_id)
        self.assertIsNone(objects.InstanceAttempt.get_by_uuid(
            self.ctx, token.id))
        accepted = self.migration(es.ACCEPTED, instance)
        token = attempts.Claim.new(self.ctx, instance, 'b', 'evacuation',
                                   accepted.uuid)
        instance.save(expected_task_state=['rebuilding'],
                      and_migration=es.step_for_claim(accepted, 'b', 'b'),
                      **token.take(instance))
        self.assertEqual((es.PRE_MIGRATING, 'b'),
                         (self.status_of(accepted), objects.Migration
                          .get_by_id(self.ctx, accepted.id).dest_compute))
        self.assertEqual(token.id, objects.Instance.get_by_uuid(
            self.ctx, instance.uuid).attempt_id)

    def test_several_migrations_move_with_the_instance_or_none_does(self):
        instance = dbf.make_instance(self.ctx, 'a', task_state='rebuilding')
        first = self.migration(es.ACCEPTED, instance)
        done = self.migration(es.DONE, instance)
        instance.task_state = None
        self.assertRaises(
            exception.UnexpectedMigrationStatusError, instance.save,
            expected_task_state=['rebuilding'],
            and_migration=[es._step(first, es.FAILED, es.OPERATOR),
                           (done, [es.ACCEPTED, es.PRE_MIGRATING])])
        self.assertEqual('rebuilding', objects.Instance.get_by_uuid(
            self.ctx, instance.uuid).task_state)
        # The first one's write was rolled back, in the database and in
        # the object.
        self.assertEqual((es.ACCEPTED, es.ACCEPTED),
                         (self.status_of(first), first.status))

    def test_reset_state_ends_every_evacuation_in_progress_at_once(self):
        instance = dbf.make_instance(self.ctx, 'a', vm_state='error',
                                     task_state='rebuild_spawning')
        accepted = self.migration(es.ACCEPTED, instance)
        claimed = self.migration(es.PRE_MIGRATING, instance)
        failed = self.migration(es.FAILED, instance)
        self.assertTrue(es.end_evacuation(
            self.ctx, instance, es.ALL_IN_PROGRESS, None, None, es.OPERATOR,
            vm_state='active'))
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual(('a', 'active', None),
                         (row.host, row.vm_state, row.task_state))
        self.assertEqual([es.FAILED] * 3, [self.status_of(m) for m in (
            accepted, claimed, failed)])
        self.assertIsNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid))
        # Nothing in progress: the instance only.
        instance.task_state = 'rebuilding'
        instance.save()
        self.assertFalse(es.end_evacuation(
            self.ctx, instance, es.ALL_IN_PROGRESS, None, None, es.OPERATOR,
            vm_state='error'))
        self.assertEqual(('error', None), (instance.vm_state,
                                           instance.task_state))


class TestTransitionsSQLite(TransitionTests, base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()


# ``.status`` assignments on objects that are provably not migrations:
# (path under nova/, the line as written). Each is checked by its text, so
# an edit of the line makes this test look at it again.
NOT_MIGRATIONS = {
    # A network port (objects.Port), whose status is the agent's report.
    ('network/api.py', 'port.status = network_obj.DOWN'),
    ('network/agent.py', 'port.status = new_status'),
    # The HTTP status of a WSGI response.
    ('api/openstack/wsgi.py', 'self.status = status'),
    # An attempt's row (objects.InstanceAttempt): landed or failed.
    ('compute/attempts.py', 'self.row.status = attempt_obj.LANDED'),
    ('compute/attempts.py', 'self.row.status = attempt_obj.FAILED'),
    ('objects/attempt.py', 'self.status = status'),
    # A host-evacuate run (host_evacuation.HostEvacuation): taken, then ended.
    ('objects/host_evacuation.py', 'self.status = RUNNING'),
    ('objects/host_evacuation.py', 'self.status = status'),
}


def status_writes(tree):
    """The nodes of ``tree`` that set an attribute named ``status``:
    assignments (plain, augmented, annotated, unpacked) and ``setattr``
    (or ``object.__setattr__``) with the literal name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call):
            func = node.func
            name = (func.id if isinstance(func, ast.Name) else
                    func.attr if isinstance(func, ast.Attribute) else None)
            if (name in ('setattr', '__setattr__') and node.args
                    and any(isinstance(a, ast.Constant)
                            and a.value == 'status' for a in node.args)):
                yield node
            continue
        else:
            continue
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and part.attr == 'status':
                    yield node


class TestOnlyTheTableChangesStatuses(base.TestCase):
    """No code but evacuation_states.py changes a migration's status."""

    def offenders(self, top):
        found = []
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != 'tests']
            for name in files:
                path = os.path.join(root, name)
                if not name.endswith('.py') or path == es.__file__:
                    continue
                with open(path) as f:
                    source = f.read()
                lines = source.splitlines()
                relpath = os.path.relpath(path, top)
                for node in status_writes(ast.parse(source, path)):
                    text = lines[node.lineno - 1].strip()
                    if (relpath, text) not in NOT_MIGRATIONS:
                        found.append('%s:%d: %s' % (relpath, node.lineno,
                                                    text))
        return found

    def test_no_status_assignment_elsewhere(self):
        top = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.dirname(os.path.abspath(__file__)))))
        self.assertEqual([], self.offenders(top))

    def test_every_way_of_writing_it_is_found(self):
        # Whatever the object is called: only the allowlist exempts one.
        tree = os.path.join(self.tmp, 'nova')
        os.makedirs(tree)
        with open(os.path.join(tree, 'writer.py'), 'w') as f:
            f.write('m.status = "done"\n'
                    'self.mig.status = "done"\n'
                    'row.status += "x"\n'
                    'row.status: str = "failed"\n'
                    'a, m.status = 1, "done"\n'
                    'setattr(m, "status", "done")\n'
                    'object.__setattr__(m, "status", "done")\n'
                    'm.state = "fine"\n'
                    'setattr(m, "other", "fine")\n')
        self.assertEqual([1, 2, 3, 4, 5, 6, 7], [
            int(o.split(':')[1]) for o in self.offenders(tree)])
