"""What a restart does with the attempts its previous process left
unfinished: every spawn is journaled on disk (``nova/virt/journal.py``),
and every attempt's claim and result are recorded in the database
(``nova/objects/attempt.py``), which alone says whether it landed.

Run by ``init_host`` first, before the instances are reconciled and before
interrupted evacuations are ended, so that each of those sees a host on
which no dead attempt has anything left. For each open journal of this
host, the database is asked about its attempt:

* ``landed``: its result is recorded (whatever the instance's states are
  now: a stop queued while the host was down, a reset-state, a failed
  evacuation since); its journal is completed, nothing is removed;
* not landed (including an instance deleted or gone from the database):
  the attempt is undone from its journal: its guest powered off at once
  and removed with the VIFs the journal recorded, exactly the files it
  created removed and the ones it rewrote put back, the directory it
  created removed once empty. Nothing partial stays to be booted later by
  a hard reboot or a retried evacuation. When a later attempt of the
  instance was claimed since on storage this host may share, the files
  are that attempt's to decide: only this attempt's ``.part-`` files go;
* no row (a journal written before attempts were recorded): decided as
  it was then, from the instance's states (``_landed_before_tokens``).

Every attempt this host claimed and never ended (with a journal or not:
one may have died before its spawn began) is then recorded ``failed``,
and the instance's token cleared if it still names it.

A journal that cannot be read is reported and kept; nothing of it is
undone (never guess what a journal might have said).

The instance's state is the business of the workflows that follow
(``host_init`` puts an interrupted build in ERROR with a fault,
``evacuation.fail_interrupted_evacuations`` ends an interrupted
evacuation).
"""

import dataclasses

from oslo_log import log as logging

from nova.compute import attempts
from nova.compute import disk_ownership
from nova.compute import shared_storage
from nova import exception
from nova.model import task_states as ts
from nova.model import vm_states as vs
from nova import objects
from nova.objects import migration as migration_obj
from nova.virt import journal

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class RecoveryReport:
    undone: list[str] = dataclasses.field(default_factory=list)
    completed: list[str] = dataclasses.field(default_factory=list)
    unreadable: list[str] = dataclasses.field(default_factory=list)
    errors: dict[str, str] = dataclasses.field(default_factory=dict)


def _landed_before_tokens(context, host, instance, attempt) -> bool:
    """Whether the database records the result on ``host`` of an attempt
    that has no row (journaled before attempts were recorded), as it was
    decided then: from the instance's states."""
    if instance is None or instance.deleted or instance.host != host:
        return False
    if attempt.operation == journal.BUILD:
        return (instance.vm_state not in (vs.BUILDING, vs.ERROR)
                and instance.task_state is None)
    if attempt.operation == journal.REBUILD:
        return (instance.task_state not in (ts.REBUILDING,
                                            ts.REBUILD_SPAWNING)
                and instance.vm_state != vs.ERROR)
    # An evacuation moved the row here in its last step but one: it
    # landed, whatever the migration says yet (fail_interrupted_
    # evacuations marks it done).
    try:
        migration = objects.Migration.get_by_uuid(context,
                                                  attempt.migration)
    except (exception.MigrationNotFound, exception.InvalidInput):
        return True
    return migration.status in (migration_obj.PRE_MIGRATING,
                                migration_obj.DONE, migration_obj.COMPLETED)


def _taken_over(context, compute, row) -> str | None:
    """Why the files of dead attempt ``row`` may be another attempt's now:
    a later attempt of the instance on this host, or on a host whose
    storage is not known to differ from this one's; None otherwise."""
    later = objects.InstanceAttempt.claimed_after(context, row)
    if not later:
        return None
    own = disk_ownership.live_storage(context, compute.host,
                                      compute.driver).identity
    for other in later:
        theirs = (shared_storage.recorded_identity(context, other.host)
                  if other.host else None)
        if other.host == compute.host or not own or not theirs \
                or theirs == own:
            return ('%s attempt %s on %s claimed the instance since, on '
                    'storage this host may share: the directory is that '
                    'attempt\'s to decide'
                    % (other.operation, other.uuid, other.host))
    return None


def _recover(compute, context, spawn_journal, report) -> None:
    uuid = spawn_journal.idir.uuid
    attempt = spawn_journal.attempt
    instance = objects.Instance.find(context, uuid)
    row = objects.InstanceAttempt.get_by_uuid(context, attempt.id)
    if row is None:
        landed = _landed_before_tokens(context, compute.host, instance,
                                       attempt)
    else:
        landed = row.landed
    if landed:
        LOG.info('%s attempt %s had landed before the restart; keeping '
                 'what it made', attempt.operation, attempt.id,
                 instance_uuid=uuid)
        compute.driver.complete_attempt(instance, attempt)
        report.completed.append(uuid)
        return
    keep_files = _taken_over(context, compute, row) if row else None
    LOG.warning('%s attempt %s was cut short by a restart; undoing what it '
                'created%s', attempt.operation, attempt.id,
                ' (its guest; %s)' % keep_files if keep_files else '',
                instance_uuid=uuid)
    if instance is None:
        instance = objects.Instance(context, uuid=uuid, network_info=[])
    compute.driver.undo_attempt(context, instance, attempt,
                                keep_files=keep_files)
    report.undone.append(uuid)


def recover_interrupted_attempts(compute, context) -> RecoveryReport:
    """Complete or undo every attempt a restart of ``compute.host`` cut
    short; never raises for one attempt."""
    report = RecoveryReport()
    journals, unreadable = compute.driver.interrupted_attempts()
    for bad in unreadable:
        LOG.error('Spawn journal %s cannot be read (%s); kept, nothing of '
                  'it undone: look at it and at its instance directory',
                  bad.path, bad.reason)
        report.unreadable.append(bad.path)
    for spawn_journal in journals:
        try:
            _recover(compute, context, spawn_journal, report)
        except Exception as e:
            uuid = spawn_journal.idir.uuid
            LOG.exception('Could not recover attempt %s',
                          spawn_journal.attempt.id, instance_uuid=uuid)
            report.errors[uuid] = exception.message_of(e)
    # No attempt of a dead process may keep a token: each stops being
    # the instance's (whether it had a journal or died before one).
    try:
        dead = objects.InstanceAttempt.claimed_by_host(context,
                                                       compute.host)
    except Exception:
        LOG.exception('Could not list the attempts of %s', compute.host)
        dead = []
    for row in dead:
        if row.uuid:
            attempts.mark_failed(context, row.uuid)
    return report
