"""The orphan reaper's first part: evacuations away from this host that
are done.

For each instance whose newest evacuation from this host is done
(``Migration.newest_evacuations``), on its own under its lock, the normal
source-side cleanup (``evacuation.clean_up_evacuated``: the stale domain
powered off at once and undefined, the local copy quarantined only when
its ownership stamp and the storage evidence allow, the migration marked
``completed``). Until then two guests of the instance run. Only an
operation that involves *this host's copy* holds an instance back, until a
later run: a migration in progress from or to this host or whose target is
not chosen yet, the instance's lock here held, a task while the database
places the instance here. A task on its new host never touches this copy.

Example::

    reap_evacuated.reap(context, host, driver, instance_locks, report)
"""

from oslo_log import log as logging

from nova.compute import disk_ownership
from nova.compute import evacuation
from nova.compute.reap_report import CLEAN
from nova.compute.reap_report import ERROR
from nova.compute.reap_report import EVACUATED
from nova.compute.reap_report import KEEP
from nova import exception
from nova import objects
from nova.objects import migration as migration_obj

LOG = logging.getLogger(__name__)


def describe_migration(migration) -> str:
    return '%s %s -> %s is %s' % (
        migration.migration_type, migration.source_compute,
        migration.dest_compute, migration.status)


def _on_this_copy(context, host, instance) -> str | None:
    """Why an operation may be working on ``host``'s copy of ``instance``
    now; None if none (part a; its lock is the caller's to try).

    Only what involves this host counts: a migration in progress from or
    to it, or whose target is not chosen yet (it may be this host), and a
    task while the database places the instance here. A task on the
    instance's new host (a user's stop there) never touches this copy:
    waiting for it would keep a second guest of the instance running here
    for as long as it lasts.
    """
    for migration in objects.Migration.get_by_filters(
            context, instance_uuid=instance.uuid,
            status=list(migration_obj.IN_PROGRESS)):
        if migration.dest_compute is None or host in (
                migration.source_compute, migration.dest_compute):
            return describe_migration(migration)
    if (instance.host == host and not instance.deleted
            and instance.task_state is not None):
        return 'task %s in progress on this host' % instance.task_state
    return None


def _evacuated_verdict(context, host, uuid):
    """(CLEAN or KEEP, why, instance, migration): whether this host's copy
    of ``uuid`` gets the source-side cleanup now, by the instance's newest
    evacuation from this host."""
    migration = objects.Migration.newest_evacuations(
        context, host, instance_uuid=uuid).get(uuid)
    if migration is None or migration.status != migration_obj.DONE:
        return KEEP, ('its newest evacuation from here is %s now'
                      % (migration.status if migration else 'gone')), \
            None, migration
    instance = objects.Instance.find(context, uuid)
    if instance is None:
        return KEEP, ('evacuation %s is done but the database has no such '
                      'instance; left alone' % migration.uuid), None, \
            migration
    busy = _on_this_copy(context, host, instance)
    if busy is not None:
        return KEEP, busy, instance, migration
    if instance.host == host:
        return KEEP, ('evacuation %s is done but the database still places '
                      'it here; left alone' % migration.uuid), instance, \
            migration
    why = 'evacuated to %s (migration %s)' % (
        instance.host or migration.dest_compute, migration.uuid)
    if not instance.deleted and instance.task_state is not None:
        why += ('; its task %s there does not involve this host\'s copy'
                % instance.task_state)
    return CLEAN, why, instance, migration


def reap(context, host, driver, instance_locks, report):
    for uuid in objects.Migration.newest_evacuations(
            context, host, status=migration_obj.DONE):
        try:
            _reap_evacuation(context, host, driver, instance_locks, uuid,
                             report)
        except Exception as e:
            LOG.exception('Reaper: could not clean up after an evacuation',
                          instance_uuid=uuid)
            report.add(EVACUATED, uuid, uuid, ERROR,
                       exception.message_of(e))


def _reap_evacuation(context, host, driver, instance_locks, uuid, report):
    """The source-side cleanup of one instance, on its own: another one
    that must wait never keeps this one's stale guest running."""
    action, why, _instance, _migration = _evacuated_verdict(context, host,
                                                            uuid)
    if action != CLEAN:
        report.add(EVACUATED, uuid, uuid, KEEP, why)
        return
    with instance_locks.lock_if_free(uuid) as held:
        if not held:
            report.add(EVACUATED, uuid, uuid, KEEP,
                       'an operation on the instance holds its lock')
            return
        # Decided again under the lock: an operation may have begun or
        # ended since.
        action, why, instance, migration = _evacuated_verdict(
            context, host, uuid)
        if action != CLEAN:
            report.add(EVACUATED, uuid, uuid, KEEP, why)
            return
        if report.dry_run:
            report.add(EVACUATED, uuid, uuid, CLEAN, _would_clean(
                context, host, driver, instance, migration, why))
            return
        result = evacuation.EvacuationCleanup()
        evacuation.clean_up_evacuated(context, host, driver, instance,
                                      migration, result)
    if uuid in result.errors:
        report.add(EVACUATED, uuid, uuid, ERROR, result.errors[uuid])
    elif uuid in result.completed:
        if uuid in result.quarantined:
            disks = 'its directory moved to quarantine'
        else:
            disks = 'its directory: %s' % result.kept.get(uuid, 'none here')
        report.add(EVACUATED, uuid, uuid, CLEAN,
                   '%s: its domain here powered off and undefined, the '
                   'migration completed; %s' % (why, disks))


def _would_clean(context, host, driver, instance, migration, why):
    """What the source-side cleanup would do (a dry run), in words."""
    _owner, _evidence, verdict = evacuation.source_verdict(
        context, host, driver, instance, migration)
    return ('%s: its domain here would be powered off and undefined; its '
            'directory: %s%s'
            % (why, verdict.reason,
               ' (to quarantine)'
               if verdict.action == disk_ownership.QUARANTINE else ''))
