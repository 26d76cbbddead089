"""Pending deletes: what a delete could not remove because its host was down.

A delete whose host's compute service is down is done in the database only
(``compute/api.py``, Nova's "local delete"): the row is deleted with its
``host`` still naming that host, and the host keeps the domain, the VIFs
and the instance directory. Nothing else removes them: ``init_host`` and
the reaper's orphan part deal with instances the database places on the
host, and power off a deleted instance's domain without touching its disks.
Nova removes such leftovers periodically (its pending deletes); so does
this module, for the compute host it runs on:

* a **candidate** is an instance directory under ``instances_path`` or a
  domain of this host whose instance is deleted and whose last host is
  this host. An instance the database never heard of, or that was on
  another host, is not this module's (the reaper's other parts and
  ``nova-manage host audit`` report those);
* an instance with an evacuation in progress (``accepted``,
  ``pre-migrating``), or whose lock an operation holds, waits for a later
  run; the verdict is read again under the instance's lock, taken only if
  free;
* otherwise the delete is finished as it would have been with the host
  up: ``driver.destroy(..., destroy_disks=True)`` (the domain, the VIFs,
  then the directory through ``instancedir``, which removes it only when
  its ownership stamp names this host on this storage, or it has none,
  and moves it to quarantine otherwise). Deleting disks for a delete is
  the first of the three cases allowed to (doc/source/cleanup.rst, "Who
  may delete disks").

It runs as a part of the orphan reaper (``reaper.reap``, periodic and
``nova-manage host reap``) and once at ``init_host``, never while the
storage has a problem (``storage_report.storage_problem``: then the caller
does not call it).

Example::

    for outcome in pending_deletes.finish(ctx, host, driver, locks,
                                          candidates, dry_run=False):
        print(outcome.uuid, outcome.action, outcome.reason)
"""

import dataclasses

from oslo_log import log as logging

from nova import exception
from nova.model import actions
from nova import objects
from nova.objects import migration as migration_obj

LOG = logging.getLogger(__name__)


# What became of one pending delete (the reaper's report uses the same
# words, nova.model.actions).
DELETE = 'delete'
KEEP = actions.KEEP
ERROR = actions.ERROR


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What became of one deleted instance's leftovers on this host."""
    uuid: str
    action: str             # DELETE (in a dry run: would), KEEP, ERROR
    reason: str


def _pending(context, host: str, uuid: str):
    """None when the leftovers of ``uuid`` here are no pending delete;
    else (the instance, None) when it may be finished now, or (None, why
    it waits)."""
    instance = objects.Instance.find(context, uuid)
    if instance is None or not instance.deleted or instance.host != host:
        return None
    for migration in objects.Migration.get_by_filters(
            context, instance_uuid=uuid,
            status=list(migration_obj.IN_PROGRESS)):
        return None, ('deleted, but its %s %s -> %s is %s'
                      % (migration.migration_type, migration.source_compute,
                         migration.dest_compute, migration.status))
    return instance, None


def finish(context, host: str, driver, instance_locks, candidates,
           dry_run: bool = False) -> list[Outcome]:
    """Finish the pending deletes among ``candidates`` (instance UUIDs
    with a directory or a domain on ``host``); one ``Outcome`` per pending
    delete found. One failure (an ``ERROR`` outcome, logged) does not
    stop the others."""
    outcomes = []
    for uuid in sorted(set(candidates)):
        try:
            outcome = _finish_one(context, host, driver, instance_locks,
                                  uuid, dry_run)
        except Exception as e:
            LOG.exception('Could not finish a pending delete',
                          instance_uuid=uuid)
            outcome = Outcome(uuid, ERROR, exception.message_of(e))
        if outcome is not None:
            outcomes.append(outcome)
    return outcomes


def _finish_one(context, host, driver, instance_locks, uuid, dry_run):
    found = _pending(context, host, uuid)
    if found is None:
        return None
    if found[0] is None:
        return Outcome(uuid, KEEP, found[1])
    with instance_locks.lock_if_free(uuid) as held:
        if not held:
            return Outcome(uuid, KEEP, 'deleted, but an operation on it '
                                       'holds its lock')
        # Read again under the lock: a migration may have begun.
        found = _pending(context, host, uuid)
        if found is None:
            return None
        instance, why = found
        if instance is None:
            return Outcome(uuid, KEEP, why)
        if not dry_run:
            LOG.info('Finishing the delete of an instance deleted while %s '
                     'was down: its domain, VIFs and files here', host,
                     instance=instance)
            driver.destroy(context, instance, instance.network_info,
                           destroy_disks=True)
        return Outcome(uuid, DELETE,
                       'deleted while %s was down: its domain, VIFs and '
                       'directory removed (a directory another host '
                       'stamped goes to quarantine instead)' % host)
