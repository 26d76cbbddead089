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
every path that ends an evacuation early does it (the API's refusal, the
conductor's, the target's refusal and failure, crash recovery and
reset-state): a fault, the migration ``failed``, the instance's
``rebuilding`` task cleared (each by compare-and-swap: whoever changed one
meanwhile owns it). For reset-state (``migration=ALL_IN_PROGRESS``) the
instance's write and the failing of every evacuation in progress are one
transaction, so an evacuation requested after the reset read them is
never failed by it.

Two steps are written in the transaction of an instance write
(``objects.Instance.save(..., and_migration=...)``), each carrying the
attempt's token (``attempts.py``) too:

* the target's claim, ``accepted -> pre-migrating``
  (``step_for_claim``), in the write that makes its attempt the
  instance's token: from then on every side effect of the attempt checks
  that token, and reset-state (which clears it) or a newer claim stops it
  where it stands;
* the final step, the instance row moving to the target, together with
  ``pre-migrating -> done`` (``step_for_final_save``), expecting the
  token: a stale attempt whose migration was failed meanwhile cannot move
  the instance.

The one place that ends an evacuation without ``end_evacuation`` is the
source marking a ``done`` one ``completed``: that is not an early end.
"""

from oslo_log import log as logging

from nova.compute import actions
from nova import exception
from nova.model import task_states
from nova.objects import migration as migration_obj

LOG = logging.getLogger(__name__)

# system_metadata key: the vm_state an instance had before an evacuation
# failed and left it in ERROR on its source; the next evacuation brings it
# back in that state (a stopped instance is not started by the retry), and
# the source's power sync restores it when the guest runs there after all
# (``power_sync``: a partition, not a failure).
OLD_VM_STATE = 'old_vm_state'

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
    if 'status' in changes:
        # The status moves only by ``to``, which the table checks.
        raise exception.InvalidMigrationTransition(
            migration_id=migration.uuid, to=to, by=by,
            reason='the status is not one of the other changes')
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


def _step(migration, to, by):
    """(``migration`` set to ``to``, the statuses it must have been in):
    one pair of ``objects.Instance.save(and_migration=...)``, which writes
    it in the instance's transaction."""
    expected = _check(migration, to, by, None)
    migration.status = to
    return migration, expected


def step_for_final_save(migration, by=TARGET):
    """The final step, ``pre-migrating -> done``, for
    ``objects.Instance.save(and_migration=...)``, which writes it in the
    transaction that moves the instance."""
    return _step(migration, DONE, by)


def step_for_claim(migration, dest_compute: str, dest_node: str | None):
    """The target's claim, ``accepted -> pre-migrating`` with where it
    goes, for ``objects.Instance.save(and_migration=...)``: written in
    the transaction that gives the attempt its token."""
    migration.dest_compute = dest_compute
    migration.dest_node = dest_node
    return _step(migration, PRE_MIGRATING, TARGET)


# ``end_evacuation``'s ``migration`` for reset-state: every evacuation of
# the instance still in progress, found before the transaction and failed
# in it together with the instance's write.
ALL_IN_PROGRESS = object()
# How often reset-state reads again when an evacuation moved on between
# its read and its write (each retry means someone else wrote meanwhile;
# a handful can only happen under a storm of requests, answered 409).
_RETRIES = 5


def end_evacuation(context, instance, migration, exc, host, by,
                   vm_state=None, task_states_expected=(
                       task_states.REBUILDING,
                       task_states.REBUILD_SPAWNING), token=None) -> bool:
    """End an evacuation early: a fault saying why (``exc``, recorded as
    seen on ``host``; none when ``exc`` is None), the migration ``failed``,
    the instance's task cleared and its vm_state set to ``vm_state``
    (None: unchanged). ``token`` (``attempts.Claim``): the target's
    attempt, recorded ``failed`` with the instance's write, which then
    expects it (an attempt that lost its token writes nothing there).

    Each write is a compare-and-swap. A migration someone else ended or
    moved meanwhile (reset-state, a crash recovery) is theirs, and so is
    the instance then: it may already be in another evacuation, whose
    task this must not clear; so nothing more is written, only logged.
    True if the migration was failed here. Never raises for a lost race.

    ``migration=ALL_IN_PROGRESS`` (reset-state): see ``_end_all``.
    """
    if migration is ALL_IN_PROGRESS:
        return _end_all(context, instance, exc, host, by, vm_state)
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
    failing = token.failing(instance) if token is not None else {}
    try:
        instance.save(expected_task_state=list(task_states_expected),
                      **failing)
    except exception.NovaException as e:
        LOG.warning('Not clearing the task of the instance: %s',
                    exception.message_of(e), instance=instance)
        try:
            instance.refresh()
        except exception.InstanceNotFound:
            pass
    return migration is not None


def _end_all(context, instance, exc, host, by, vm_state) -> bool:
    """The instance's task cleared (whatever it was: ``by`` overrides it),
    its attempt token with it, and every evacuation of it in progress
    ``failed``, in one transaction.

    The task state and the migrations are read first, then written by
    compare-and-swap on what was read: an evacuation requested after the
    read changed the task (the API takes the instance before it creates
    the migration), and a migration that moved on changed its status;
    either makes the transaction write nothing, and it is read again. So
    no migration created after the reset read is failed by it, and no
    evacuation is left in progress with its task cleared. True if any
    evacuation was ended.
    """
    for _ in range(_RETRIES):
        instance.refresh()
        seen_task = instance.task_state
        ending = migration_obj.Migration.get_by_filters(
            context, instance_uuid=instance.uuid,
            migration_type=migration_obj.EVACUATION,
            status=list(migration_obj.IN_PROGRESS))
        was = [m.status for m in ending]
        if vm_state is not None:
            instance.vm_state = vm_state
        instance.task_state = None
        # No attempt may act on the instance after the reset: whatever
        # runs stops at its next side effect (attempts.py).
        instance.attempt_id = None
        try:
            instance.save(expected_task_state=[seen_task],
                          and_migration=[_step(m, FAILED, by)
                                         for m in ending])
        except (exception.UnexpectedTaskStateError,
                exception.UnexpectedMigrationStatusError) as e:
            LOG.info('The instance or an evacuation of it changed while '
                     'ending its evacuations (%s); reading again',
                     exception.message_of(e), instance=instance)
            lost = e
            continue
        for migration, old in zip(ending, was):
            LOG.warning('Evacuation %(m)s ended by %(by)s (was %(old)s)',
                        {'m': migration.uuid, 'by': by, 'old': old},
                        instance=instance)
        if exc is not None:
            actions.record_fault(context, instance, exc, host)
        return bool(ending)
    raise lost
