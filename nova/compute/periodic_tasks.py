"""The compute manager's periodic tasks, and how often they run.

The manager marks its methods with ``nova.periodic.periodic_task``; the
service (``nova.service.Service``) finds them with ``periodic.tasks_of``
and runs each on its own thread. The work lives here:

* ``update_available_resource``: ``nova.compute.resources``.
* ``purge_quarantine``: delete quarantined instance directories older than
  ``quarantine_max_age`` (``nova/virt/instancedir.py``).
* ``sync_power_states``: for every instance the database places on this
  host with no task in progress, record the power state the hypervisor
  reports. It records and logs, nothing more (Nova's semantics, minus its
  automatic stop): an ACTIVE instance whose guest is found shut off or
  crashed is reported, not stopped; a STOPPED instance whose guest runs is
  reported, not stopped; an instance whose domain is missing gets
  ``power_state`` NOSTATE and a log line. Nothing is started, stopped or
  deleted. One vm_state is changed: an instance left in ERROR here by an
  evacuation that failed while its guest ran on here (this host was cut
  off, not dead) is ACTIVE again (``power_sync.active_again``).

Each instance is synced under its lock, after reading it again: an
operation that ended between the listing and the lock has recorded its own
power state, which a value read before it must not overwrite.
"""

import dataclasses

from oslo_log import log as logging

from nova.compute import power_sync
from nova.conf import CONF
from nova import exception
from nova.model import power_state
from nova.model import vm_states
from nova import objects
from nova.virt import instancedir

LOG = logging.getLogger(__name__)

# States whose instance has no guest on purpose: a build not yet claimed
# by this host, an offloaded shelved instance.
_NO_GUEST_EXPECTED = frozenset((vm_states.BUILDING,
                                vm_states.SHELVED_OFFLOADED))
_OFF = frozenset((power_state.SHUTDOWN, power_state.CRASHED))


def interval(option_name: str):
    """A ``periodic_task`` spacing read from ``[DEFAULT] option_name``
    when the service starts: 0 means ``periodic_interval``, a negative
    value disables the task (Nova's convention)."""
    def spacing(manager):
        value = getattr(CONF, option_name)
        return CONF.periodic_interval if value == 0 else value
    return spacing


@dataclasses.dataclass
class PowerSyncReport:
    """What one run did, by instance UUID."""
    recorded: list = dataclasses.field(default_factory=list)
    missing: list = dataclasses.field(default_factory=list)
    mismatched: list = dataclasses.field(default_factory=list)
    skipped: list = dataclasses.field(default_factory=list)
    failed: list = dataclasses.field(default_factory=list)


def sync_power_states(compute, instance_locks, context) -> PowerSyncReport:
    """One run of the power state sync (see the module docstring).

    ``compute``: ``operation.ComputeHost``; ``instance_locks``: the
    manager's ``locks.InstanceLocks``. One instance's failure is logged
    and never stops the others.
    """
    report = PowerSyncReport()
    for instance in objects.Instance.get_by_host(context, compute.host):
        if (instance.task_state is not None
                or instance.vm_state in _NO_GUEST_EXPECTED):
            # NOTE: checked before taking the lock too, so that a long
            # operation (a build waiting for its VIFs) does not hold up
            # the whole run.
            report.skipped.append(instance.uuid)
            continue
        try:
            _sync_one(compute, instance_locks, instance, report)
        except Exception:
            LOG.exception('Could not sync the power state',
                          instance=instance)
            report.failed.append(instance.uuid)
    LOG.debug('Power state sync on %(host)s: %(recorded)d recorded, '
              '%(missing)d missing, %(skipped)d skipped',
              {'host': compute.host, 'recorded': len(report.recorded),
               'missing': len(report.missing),
               'skipped': len(report.skipped)})
    return report


def _sync_one(compute, instance_locks, instance, report):
    with instance_locks.lock(instance.uuid):
        try:
            instance.refresh()
        except exception.InstanceNotFound:
            report.skipped.append(instance.uuid)
            return
        if (instance.deleted or instance.host != compute.host
                or instance.task_state is not None
                or instance.vm_state in _NO_GUEST_EXPECTED):
            report.skipped.append(instance.uuid)
            return
        try:
            current = compute.driver.get_info(instance).state
        except exception.InstanceNotFound:
            current = power_state.NOSTATE
            report.missing.append(instance.uuid)
            _log_missing(instance)
        if power_sync.runs_after_failed_evacuation(instance, current):
            # The only vm_state this task ever changes: see power_sync.
            if power_sync.active_again(instance, current) is not None:
                report.recorded.append(instance.uuid)
            return
        if current != instance.power_state:
            instance.power_state = current
            try:
                instance.save(expected_task_state=[None])
            except (exception.UnexpectedTaskStateError,
                    exception.InstanceNotFound):
                # Only the API (which does not take this lock) gets here:
                # an operation was requested meanwhile; it records the
                # power state when it ends.
                report.skipped.append(instance.uuid)
                return
            report.recorded.append(instance.uuid)
        if _report_mismatch(instance, current):
            report.mismatched.append(instance.uuid)


def _log_missing(instance):
    message = ('The hypervisor has no domain for this instance, which the '
               'database places on this host (vm_state %s); power state '
               'recorded as NOSTATE')
    if instance.vm_state == vm_states.ERROR:
        # A failed build or evacuation leaves no guest by design.
        LOG.info(message, instance.vm_state, instance=instance)
    else:
        LOG.warning(message, instance.vm_state, instance=instance)


def _report_mismatch(instance, current) -> bool:
    if instance.vm_state == vm_states.ACTIVE and current in _OFF:
        LOG.warning('Guest is %s although the instance is active; not '
                    'stopping it (start or stop it to make them agree)',
                    power_state.STATE_MAP.get(current), instance=instance)
        return True
    if (instance.vm_state == vm_states.STOPPED
            and current == power_state.RUNNING):
        LOG.warning('Guest is running although the instance is stopped; '
                    'not stopping it', instance=instance)
        return True
    return False


def purge_quarantine(compute) -> list:
    """Delete this host's quarantined directories past their age; the
    ones deleted. An unusable quarantine directory is logged, and
    nothing is deleted."""
    try:
        return instancedir.purge_quarantine(compute.settings.instances_path,
                                            CONF.quarantine_max_age)
    except exception.QuarantineUnusable as e:
        LOG.error('Not purging the quarantine: %s', e.format_message())
        return []
