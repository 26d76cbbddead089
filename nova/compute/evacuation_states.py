"""The one table of an evacuation's statuses, and the only code that
changes them.

An evacuation is a ``Migration`` row of type ``evacuation``. Its status
moves only along this table, each step a single compare-and-swap from the
statuses the table allows before it, taken only by the party the table
names::

    accepted ──(target claims)──> pre-migrating ──(target)──> done
        │                              │                        │
        └──(api, conductor, target,    └──(target, operator,    └──(source
            operator)──> failed             crash recovery)──>     cleaned
                                            failed                 up)──>
                                                                  completed

* ``api``: the compute API, which creates the row ``accepted`` and fails
  it when it cannot hand it over;
* ``conductor``: which chooses a target, and fails an evacuation that
  reached none;
* ``target``: the host that claims it, spawns, and ends it ``done`` or
  ``failed`` (also at its restart, for one its previous process left);
* ``source``: the returning source, once it has removed its copy;
* ``operator``: ``reset-state``, which ends any evacuation in progress.

``advance(migration, to, by)`` is the step. ``end_evacuation`` is how
every path that ends an evacuation early does it: a fault, the migration
``failed``, the instance's ``rebuilding`` task cleared (each by
compare-and-swap: whoever changed one meanwhile owns it). The final step
of a successful evacuation, the instance row moving to the target, goes
in the same transaction as ``pre-migrating -> done``
(``objects.Instance.save(..., and_migration=...)``): a stale attempt whose
migration was failed meanwhile cannot move the instance.
"""

from oslo_log import log as logging

from nova.compute import actions
from nova.compute import task_states
from nova import exception
from nova.objects import migration as migration_obj

LOG = logging.getLogger(__name__)

API = 'api'
CONDUCTOR = 'conductor'
TARGET = 'target'
SOURCE = 'source'
OPERATOR = 'operator'

ACCEPTED = migration_obj.ACCEPTED
PRE_MIGRATING = migration_obj.PRE_MIGRATING
DONE = migration_obj.DONE
FAILED = migration_obj.FAILED
COMPLETED = migration_obj.COMPLETED

# (from, to): who may take the step.
TRANSITIONS = {
    (ACCEPTED, PRE_MIGRATING): frozenset((TARGET,)),
    (ACCEPTED, FAILED): frozenset((API, CONDUCTOR, TARGET, OPERATOR)),
    (PRE_MIGRATING, DONE): frozenset((TARGET,)),
    (PRE_MIGRATING, FAILED): frozenset((TARGET, OPERATOR)),
    (DONE, COMPLETED): frozenset((SOURCE,)),
}


def predecessors(to: str, by: str) -> list[str]:
    """The statuses from which ``by`` may move an evacuation to ``to``."""
    return sorted(frm for (frm, dest), actors in TRANSITIONS.items()
                  if dest == to and by in actors)


def _check(migration, to, by, expected):
    allowed = predecessors(to, by)
    if not allowed:
        raise exception.InvalidMigrationTransition(
            migration_id=migration.uuid, to=to, by=by,
            reason='the table has no such step')
    if migration.migration_type not in (None, migration_obj.EVACUATION):
        raise exception.InvalidMigrationTransition(
            migration_id=migration.uuid, to=to, by=by,
            reason='not an evacuation')
    if expected is None:
        return allowed
    expected = [expected] if isinstance(expected, str) else list(expected)
    wrong = sorted(set(expected) - set(allowed))
    if wrong:
        raise exception.InvalidMigrationTransition(
            migration_id=migration.uuid, to=to, by=by,
            reason='not from %s' % ', '.join(wrong))
    return expected


def advance(migration, to: str, by: str, expected=None, **changes) -> None:
    """Move ``migration`` to ``to`` as ``by``, by compare-and-swap from the
    statuses the table allows (narrowed to ``expected`` if given), with
    ``changes`` to other fields in the same ``UPDATE``.

    ``InvalidMigrationTransition`` for a step the table does not have for
    ``by``; ``UnexpectedMigrationStatusError`` when the row is not in an
    allowed status any more (someone else moved it: it is theirs).
    """
    expected = _check(migration, to, by, expected)
    for name, value in changes.items():
        setattr(migration, name, value)
    migration.status = to
    try:
        migration.save(expected_status=expected)
    except exception.UnexpectedMigrationStatusError:
        migration.refresh()
        raise
    LOG.info('Evacuation %(m)s is %(to)s (%(by)s)',
             {'m': migration.uuid, 'to': to, 'by': by},
             instance_uuid=migration.instance_uuid)


def step_for_final_save(migration, by=TARGET):
    """(``migration`` set to ``done``, the statuses it must have been in):
    for ``objects.Instance.save(and_migration=...)``, which writes both in
    one transaction."""
    expected = _check(migration, DONE, by, None)
    migration.status = DONE
    return migration, expected


def end_evacuation(context, instance, migration, exc, host, by,
                   vm_state=None, task_states_expected=(
                       task_states.REBUILDING,
                       task_states.REBUILD_SPAWNING)) -> bool:
    """End an evacuation early: a fault saying why (``exc``, recorded as
    seen on ``host``), the migration ``failed``, the instance's task
    cleared and its vm_state set to ``vm_state`` (None: unchanged).

    Each write is a compare-and-swap. A migration someone else ended or
    moved meanwhile (reset-state, a crash recovery) is theirs, and so is
    the instance then: it may already be in another evacuation, whose
    task this must not clear; so nothing more is written, only logged.
    True if the migration was failed here. Never raises for a lost race.
    """
    if migration is not None:
        try:
            advance(migration, FAILED, by)
        except exception.UnexpectedMigrationStatusError:
            LOG.warning('Evacuation %s was already %s: it and the instance '
                        'are someone else\'s now; not failing it, not '
                        'touching the instance (this attempt ended with: '
                        '%s)', migration.uuid, migration.status,
                        exception.message_of(exc) if exc else 'no error',
                        instance=instance)
            return False
    if instance is None or getattr(instance, 'deleted', False):
        return migration is not None
    if exc is not None:
        actions.record_fault(context, instance, exc, host)
    if vm_state is not None:
        instance.vm_state = vm_state
    instance.task_state = None
    try:
        instance.save(expected_task_state=list(task_states_expected))
    except exception.NovaException as e:
        LOG.warning('Not clearing the task of the instance: %s',
                    exception.message_of(e), instance=instance)
        try:
            instance.refresh()
        except exception.InstanceNotFound:
            pass
    return migration is not None
