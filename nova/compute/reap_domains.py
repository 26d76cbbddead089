"""The orphan reaper's orphan domains.

A domain on this host of an instance that is deleted, or that the
database places on another host after its newest migration, an evacuation
*to this host*, failed, is powered off and undefined
(``evacuation.stop_stale_guest``: at once, never with a clean shutdown
first), never its disks. Never a domain the database has never heard of
(it may be an operator's own guest), never one whose instance has an
operation in progress; the instance's lock is taken only if free, and the
verdict is read again under it. Other orphans are reported and kept
(``nova-manage host audit`` / ``cleanup`` decide about them).

Example::

    reap_domains.reap(context, host, driver, instance_locks, report)
"""

from oslo_log import log as logging

from nova.compute import evacuation
from nova.compute import reap_evacuated
from nova.compute.reap_report import DOMAIN
from nova.compute.reap_report import ERROR
from nova.compute.reap_report import EVACUATED
from nova.compute.reap_report import KEEP
from nova.compute.reap_report import STOP
from nova import crashpoint
from nova import exception
from nova import objects
from nova.objects import migration as migration_obj

LOG = logging.getLogger(__name__)


def _in_progress(context, instance) -> str | None:
    """Why an operation on ``instance`` may be running, on any host; None
    if none."""
    for migration in objects.Migration.get_by_filters(
            context, instance_uuid=instance.uuid,
            status=list(migration_obj.IN_PROGRESS)):
        return reap_evacuated.describe_migration(migration)
    if not instance.deleted and instance.task_state is not None:
        return 'task %s in progress' % instance.task_state
    return None


def _domain_verdict(context, host, uuid):
    """(STOP or KEEP, why, instance); None when the instance is this
    host's own."""
    instance = objects.Instance.find(context, uuid)
    if instance is None:
        # NOTE: a domain the database has never heard of may be an
        # operator's own guest on this hypervisor: never touched.
        return KEEP, 'instance not in the database: not known to be ours', \
            None
    if not instance.deleted and instance.host == host:
        return None
    busy = _in_progress(context, instance)
    if busy is not None:
        return KEEP, busy, instance
    if instance.deleted:
        return STOP, 'instance deleted', instance
    if instance.host is None:
        return KEEP, 'instance placed on no host', instance
    migrations = objects.Migration.get_by_filters(context,
                                                  instance_uuid=uuid)
    newest = migrations[-1] if migrations else None
    if (newest is not None
            and newest.migration_type == migration_obj.EVACUATION
            and newest.dest_compute == host
            and newest.status == migration_obj.FAILED):
        return STOP, ('instance lives on %s; its evacuation %s to this host '
                      'failed' % (instance.host, newest.uuid)), instance
    return KEEP, ('instance lives on %s and %s: not the reaper\'s to remove '
                  '(see nova-manage host audit)'
                  % (instance.host, 'no migration explains it'
                     if newest is None else 'its newest migration is %s '
                     '%s -> %s, %s' % (newest.migration_type,
                                       newest.source_compute,
                                       newest.dest_compute,
                                       newest.status))), instance


def reap(context, host, driver, instance_locks, report):
    own = {i.uuid for i in objects.Instance.get_by_host(context, host)}
    # Reported once: an evacuation away from here is part a's.
    own.update(f.instance_uuid for f in report.findings
               if f.kind == EVACUATED)
    for uuid in sorted(driver.list_instance_uuids()):
        if uuid in own:
            continue
        try:
            _reap_domain(context, host, driver, instance_locks, uuid, report)
        except Exception as e:
            LOG.exception('Reaper: could not stop orphan domain',
                          instance_uuid=uuid)
            report.add(DOMAIN, uuid, uuid, ERROR, exception.message_of(e))


def _reap_domain(context, host, driver, instance_locks, uuid, report):
    verdict = _domain_verdict(context, host, uuid)
    if verdict is None:
        return
    if verdict[0] != STOP:
        report.add(DOMAIN, uuid, uuid, KEEP, verdict[1])
        return
    with instance_locks.lock_if_free(uuid) as held:
        if not held:
            report.add(DOMAIN, uuid, uuid, KEEP,
                       'an operation on the instance holds its lock')
            return
        # Decided again under the lock: an operation may have begun or
        # ended since.
        verdict = _domain_verdict(context, host, uuid)
        if verdict is None:
            return
        action, why, instance = verdict
        if action != STOP:
            report.add(DOMAIN, uuid, uuid, KEEP, why)
            return
        if not report.dry_run:
            evacuation.stop_stale_guest(context, driver, instance)
            crashpoint.reached('reaper.during_reap')
        report.add(DOMAIN, uuid, uuid, STOP,
                   '%s: powered off and undefined, its disks kept' % why)
