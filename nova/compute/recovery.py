"""What a restart does with the spawn attempts its previous process left
open: every spawn is journaled on disk (``nova/virt/journal.py``), and an
attempt is complete only once its result is recorded in the database.

Run by ``init_host`` first, before the instances are reconciled and before
interrupted evacuations are ended, so that each of those sees a host on
which no dead attempt has anything left. For each open journal of this
host:

* the attempt's result is recorded (a build whose instance is no longer
  building, a rebuild whose task ended, an evacuation whose instance row
  moved here): the attempt landed; its journal is completed, nothing is
  removed;
* otherwise (including an instance deleted or gone from the database):
  the attempt is undone from its journal: its domain and VIFs destroyed,
  exactly the files it created removed and the ones it rewrote put back,
  the directory it created removed once empty. Nothing partial stays to
  be booted later by a hard reboot or a retried evacuation.

A journal that cannot be read is reported and kept; nothing of it is
undone (never guess what a journal might have said).

The instance's state is the business of the workflows that follow
(``host_init`` puts an interrupted build in ERROR with a fault,
``evacuation.fail_interrupted_evacuations`` ends an interrupted
evacuation).
"""

import dataclasses

from oslo_log import log as logging

from nova.model import task_states as ts
from nova.model import vm_states as vs
from nova import exception
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


def _landed(context, host, instance, attempt) -> bool:
    """Whether the database records the attempt's result on ``host``."""
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
        uuid = spawn_journal.idir.uuid
        attempt = spawn_journal.attempt
        instance = objects.Instance.find(context, uuid)
        try:
            if _landed(context, compute.host, instance, attempt):
                LOG.info('%s attempt %s had landed before the restart; '
                         'keeping what it made', attempt.operation,
                         attempt.id, instance_uuid=uuid)
                compute.driver.complete_attempt(instance, attempt)
                report.completed.append(uuid)
                continue
            LOG.warning('%s attempt %s was cut short by a restart; undoing '
                        'what it created', attempt.operation, attempt.id,
                        instance_uuid=uuid)
            if instance is None:
                instance = objects.Instance(context, uuid=uuid,
                                            network_info=[])
            compute.driver.undo_attempt(context, instance, attempt)
            report.undone.append(uuid)
        except Exception as e:
            LOG.exception('Could not recover attempt %s', attempt.id,
                          instance_uuid=uuid)
            report.errors[uuid] = exception.message_of(e)
    return report
