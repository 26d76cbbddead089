"""The source side of evacuation: what a host does with instances that were
evacuated away while it was down (doc/source/cleanup.rst, "After an
evacuation, on the source host").

Run by ``ComputeManager.init_host`` before the host reconciles its own
instances, so that nothing evacuated away is started again here (no split
brain), for every instance at once (``destroy_evacuated_instances``); and
by the orphan reaper of a host that came back without a restart, one
instance at a time under its lock (``clean_up_evacuated``,
reap_evacuated.py: the reaper's part a). Each instance is dealt with on
its own, by its newest evacuation whose source is this host
(``Migration.newest_evacuations``), so one that must wait or fails never keeps
another's stale guest running:

* ``done``: power the local domain off at once (no clean shutdown:
  ``stop_stale_guest``), undefine it, unplug its VIFs; move the local copy
  of the instance directory aside (quarantine, purged by age) only when the
  evidence says storage is *not* shared with the new owner *and* the
  directory's ownership stamp names this host on this storage
  (``disk_ownership.on_source``: on shared storage the new owner has
  re-stamped it, so it is never touched); keep it otherwise; mark the
  migration ``completed``. Whatever the new owner does with the instance
  meanwhile (a task in progress there) does not matter: it never touches
  this host's copy;
* ``accepted`` / ``pre-migrating`` (still in progress): do not start the
  instance, delete nothing;
* ``failed``: the instance is still this host's own; nothing to do here;
* ``completed``: cleaned up already.

Domains on this host for instances the database places elsewhere (or
nowhere) with no evacuation to explain them are *orphans*: reported, never
started, never deleted (when unsure, keep the disks).

On the *target* side, ``fail_interrupted_evacuations`` ends evacuations to
this host that a restart cut short (``pre-migrating``: only this host's
previous process could have been running them). What the dead attempt
created was undone from its journal already (``recovery.py``); here any
guest left is destroyed (never a disk), the ports are bound back to the
source, the migration becomes ``failed`` and the instance ERROR on its
source with a fault, so a new evacuation can start.

Usage::

    report = evacuation.destroy_evacuated_instances(ctx, host, driver)
    for instance in own_instances:
        if instance.uuid in report.do_not_touch:
            continue
        ...

    # one instance, with nothing of this host working on it:
    evacuation.clean_up_evacuated(ctx, host, driver, instance, migration,
                                  report)
"""

import dataclasses

from oslo_log import log as logging

from nova.compute import disk_ownership
from nova.compute import evacuation_states
from nova.compute import port_bindings
from nova.compute import shared_storage
from nova import crashpoint
from nova import exception
from nova.model import power_state
from nova.model import vm_states
from nova import objects
from nova.objects import migration as migration_obj

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class EvacuationCleanup:
    """What ``destroy_evacuated_instances`` found and did, by instance."""
    completed: list[str] = dataclasses.field(default_factory=list)
    # Instance directories moved to quarantine, and kept (with why).
    quarantined: list[str] = dataclasses.field(default_factory=list)
    kept: dict[str, str] = dataclasses.field(default_factory=dict)
    in_progress: list[str] = dataclasses.field(default_factory=list)
    failed: list[str] = dataclasses.field(default_factory=list)
    orphans: list[str] = dataclasses.field(default_factory=list)
    errors: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def do_not_touch(self) -> set[str]:
        """Instances the host's own reconciliation must leave alone."""
        return (set(self.completed) | set(self.in_progress)
                | set(self.orphans) | set(self.errors))


def source_verdict(context, host, driver, instance, migration):
    """(owner, evidence, verdict): what ``host``, the source of a done
    evacuation of ``instance``, does with its copy of the directory
    (``disk_ownership.on_source``), from the evidence as it is now."""
    owner = instance.host or migration.dest_compute
    live = disk_ownership.live_storage(context, host, driver)
    evidence = shared_storage.StorageEvidence(
        source_host=host, target_host=owner,
        source_identity=live.identity,
        target_identity=shared_storage.recorded_identity(context, owner))
    facts = disk_ownership.read_directory(context, host, driver, instance)
    return owner, evidence, disk_ownership.on_source(
        facts, live, host=host, shared=evidence.shared, owner=owner)


def stop_stale_guest(context, driver, instance):
    """Power off and undefine this host's domain of an instance that is
    not this host's any more, keeping its disks.

    Powered off at once, never shut down cleanly first: the guest OS of a
    copy that lost its instance must not write another byte, since on
    shared storage without leases another host may run these very disks
    (doc/source/cleanup.rst, "Fencing"). ``driver.destroy`` then finds it
    off and removes the definition and the VIFs.
    """
    driver.stop_guest_now(instance)
    driver.destroy(context, instance, instance.network_info,
                   destroy_disks=False)


def _clean_up_done(context, host, driver, instance, migration, report):
    owner, evidence, verdict = source_verdict(context, host, driver,
                                              instance, migration)
    stop_stale_guest(context, driver, instance)
    crashpoint.reached('source.during_cleanup')
    exists = driver.instance_dir_exists(instance)
    LOG.info('Instance was evacuated to %(owner)s; removed its guest here '
             '(%(ev)s); its directory: %(verdict)s',
             {'owner': owner, 'ev': evidence.describe(),
              'verdict': verdict.reason}, instance=instance)
    if verdict.action == disk_ownership.QUARANTINE:
        driver.quarantine_instance_files(instance, verdict.reason)
        report.quarantined.append(instance.uuid)
    elif exists:
        report.kept[instance.uuid] = verdict.reason
    evacuation_states.advance(migration, evacuation_states.COMPLETED,
                              evacuation_states.SOURCE)
    report.completed.append(instance.uuid)


def _handle(context, host, driver, instance, migration, report):
    uuid = migration.instance_uuid
    status = migration.status
    if status in migration_obj.IN_PROGRESS:
        LOG.warning('Evacuation %(mig)s to %(dest)s is still %(status)s; '
                    'not starting the instance and deleting nothing',
                    {'mig': migration.uuid, 'dest': migration.dest_compute,
                     'status': status}, instance_uuid=uuid)
        report.in_progress.append(uuid)
    elif status == migration_obj.FAILED:
        LOG.info('Evacuation %s failed; the instance is still this '
                 'host\'s own', migration.uuid, instance_uuid=uuid)
        report.failed.append(uuid)
    elif status == migration_obj.DONE:
        if instance is None or instance.host == host:
            # A done evacuation that did not move the instance cannot
            # happen by design; trust the instance row, delete nothing.
            LOG.error('Evacuation %s is done but the database still '
                      'places the instance here; leaving it alone',
                      migration.uuid, instance_uuid=uuid)
            report.errors[uuid] = 'done evacuation did not move instance'
            return
        _clean_up_done(context, host, driver, instance, migration, report)
    # ``completed``: this host cleaned up already; nothing to do.


def clean_up_evacuated(context, host: str, driver, instance, migration,
                       report: EvacuationCleanup) -> None:
    """The source-side cleanup of one instance, by its newest evacuation
    from ``host`` (``migration``; ``instance`` is its row, None when the
    database has none): see the module docstring. What it found and did
    goes into ``report``.

    The caller makes sure nothing works on this host's copy of the
    instance meanwhile: ``init_host`` calls it before the service takes
    any request, the reaper under the instance's lock once no operation
    involves this host (reap_evacuated.py). Each instance is cleaned up
    on its own, so one that waits or fails never keeps another's stale
    guest running. Never raises: a failure is logged, the instance left
    as it is and reported in ``errors`` (the next start or reaper run
    tries again).
    """
    uuid = migration.instance_uuid
    try:
        _handle(context, host, driver, instance, migration, report)
    except Exception as e:
        LOG.exception('Cleaning up after evacuation %s failed',
                      migration.uuid, instance_uuid=uuid)
        report.errors[uuid] = str(e) or type(e).__name__


def destroy_evacuated_instances(context, host: str, driver
                                ) -> EvacuationCleanup:
    """Clean up after evacuations from ``host`` and report the orphans.

    ``driver`` is this host's virt driver. Never raises for one instance:
    a failure is logged and the instance is left alone (reported in
    ``errors``), so one bad instance does not keep the host from starting.
    """
    report = EvacuationCleanup()
    newest = objects.Migration.newest_evacuations(context, host)
    for uuid, migration in newest.items():
        clean_up_evacuated(context, host, driver,
                           objects.Instance.find(context, uuid), migration,
                           report)

    # A domain of an instance whose evacuation was cleaned up already is
    # explained by nothing any more: the cleanup removed it.
    explained = {uuid for uuid, migration in newest.items()
                 if migration.status != migration_obj.COMPLETED}
    for uuid in driver.list_instance_uuids():
        if uuid in explained:
            continue
        instance = objects.Instance.find(context, uuid)
        if instance is not None and instance.host == host \
                and not instance.deleted:
            continue
        where = ('not in the database' if instance is None else
                 'deleted' if instance.deleted else
                 'placed on %s' % instance.host)
        LOG.warning('Orphan domain on this host: the instance is %s and no '
                    'evacuation explains it; not starting it and deleting '
                    'nothing (an audit can remove it)', where,
                    instance_uuid=uuid)
        report.orphans.append(uuid)
    return report


def _end_interrupted(context, host, driver, instance, migration,
                     network_api):
    # The instance is not on this host: its row moves here only in the
    # transaction that marks its migration done (rebuild.py,
    # ``_finish_evacuation``), so a migration still ``pre-migrating``
    # means the evacuation never landed, whenever the process died.
    if instance is not None:
        # recovery.py undid what the dead attempt created, from its
        # journal; a guest it may have left (a crash before its journal
        # said so) goes too. Never a disk: nothing here can tell a disk
        # this attempt made from the instance's own on shared storage.
        LOG.warning('Evacuation %s to this host was cut short by a '
                    'restart; removing any guest it left here',
                    migration.uuid, instance=instance)
        # Powered off at once: the guest of an attempt that never landed
        # must not write another byte (stop_stale_guest).
        stop_stale_guest(context, driver, instance)
        port_bindings.rebind_to_owner(network_api, host, context, instance)
    evacuation_states.end_evacuation(
        context, instance, migration, exception.OperationInterrupted(
            operation='evacuate', host=host,
            power_state=power_state.STATE_MAP.get(power_state.NOSTATE)),
        host, evacuation_states.TARGET, vm_state=vm_states.ERROR)


def fail_interrupted_evacuations(context, host: str, driver,
                                 network_api=None) -> list[str]:
    """End the evacuations to ``host`` a restart cut short; their UUIDs.

    Call from ``init_host`` before serving requests, when nothing on this
    host can still be running them.
    """
    ended: list[str] = []
    for migration in objects.Migration.get_by_filters(
            context, dest_compute=host,
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.PRE_MIGRATING):
        uuid = migration.instance_uuid
        try:
            _end_interrupted(context, host, driver,
                             objects.Instance.find(context, uuid), migration,
                             network_api or port_bindings.default_api())
            ended.append(uuid)
        except Exception:
            LOG.exception('Could not end interrupted evacuation %s',
                          migration.uuid, instance_uuid=uuid)
    return ended
