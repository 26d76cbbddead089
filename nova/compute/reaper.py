"""The orphan reaper: what nothing else removes while the services run.

Without it a crashed target's leftover guest (possibly running) is only
reported, the ``.part-`` files of an interrupted image fetch stay forever,
and base images are never aged out (doc/source/cleanup.rst, "The orphan
reaper"). ``reap`` runs on one compute host, for that host only: as the
compute manager's periodic task (``reap_orphans_interval``), and as
``nova-manage host reap [--yes]``. Each run, in this order:

a. **Evacuations away from this host that are done** (the instance's
   newest evacuation from here, ``Migration.newest_evacuations``): the
   normal source-side cleanup, for each instance on its own under its
   lock (``evacuation.clean_up_evacuated``: the stale domain powered off
   at once and undefined, the local copy quarantined only when its
   ownership stamp and the storage evidence allow, the migration marked
   ``completed``). This is what makes a host that comes back without a
   restart stop what it no longer owns: until it does, two guests of the
   instance run (on private storage with the same MACs and ports, on
   shared storage without leases on the same disks). Only an operation
   that involves *this host's copy* holds an instance back, until a
   later run: a migration in progress (``accepted``, ``pre-migrating``)
   from or to this host or whose target is not chosen yet, the
   instance's lock here held, a task while the database places the
   instance here. A task on its new host (a user's stop there) does not:
   it never touches this copy. One instance held back or failing never
   keeps another's stale guest running.
e. **Pending deletes** (``pending_deletes.py``), before part b: the
   domain, VIFs and directory of an instance deleted while this host was
   down (deleted, its last host this one) go as a delete would have
   removed them (``destroy(..., destroy_disks=True)``); only while the
   storage has no problem (below), no evacuation of it is in progress and
   its lock is free.
b. **Orphan domains**: a domain on this host of an instance that is
   deleted, or that the database places on another host after its newest
   migration, an evacuation *to this host*, failed, is powered off and
   undefined (``evacuation.stop_stale_guest``: at once, never with a
   clean shutdown first), never its disks. Never a domain the database
   has never heard of (it may be an operator's own guest), never one
   whose instance has an operation in progress; the instance's lock is
   taken only if free, and the verdict is read again under it. Other
   orphans are reported and kept (``nova-manage host audit`` /
   ``cleanup`` decide about them).
c. **Stale temporary files**: ``<name>.part-<attempt id>`` in instance
   directories whose attempt has no journal of any host on this storage
   (``<instances_path>/_journal``) and does not run in this driver;
   ``_base/<hash>.part-<uuid>`` of a fetch, removed under the image's lock
   taken without waiting (no fetch of any host sharing the storage runs
   then); a journal's own temporary ``_journal/*.journal-<uuid>``. Each
   only when last modified before this process started *and* at least
   ``STALE_MIN_AGE`` seconds ago: the work of a running process (this one
   or another host's, with some clock skew) is never taken for a dead
   one. ``reap_at_start`` runs this part and part e alone, once at
   ``init_host``.
d. **Unused base images** (``[image_cache] remove_unused_base_images``): a
   file of ``_base`` that no disk of any instance directory under
   ``instances_path`` (quarantined ones included) has as its qcow2 backing
   file, last used more than ``remove_unused_original_minimum_age_seconds``
   ago, removed under the image's lock with its age read again there
   (every fetch touches the base it returns, so one a spawn in progress
   uses is young). Backing files are read with ``qemu-img info -f qcow2``
   only for the disks ``disk.info`` records as qcow2, never probed, and
   only while some base image is old enough to go (the scan stops once
   each is known to be in use). A directory whose disks cannot all be
   told (``disk.info`` missing or corrupt, a disk it does not list, a
   qcow2 ``qemu-img`` cannot read) keeps every base image in that run.

Parts c and d change nothing while the storage has a problem
(``storage_report.storage_problem``: a required mount missing, or the
marker of a host that recorded one gone); part d needs a known storage
identity too. One failure does not stop the rest: it is logged and
reported (``ERROR``). With ``dry_run`` nothing changes; the report says
what would be done (``reap_orphans_dry_run`` for the periodic task).

Example::

    report = reaper.reap(ctx, settings, driver, manager.instance_locks)
    print(audit.format_table(report.findings, reaper.COLUMNS))
"""

import dataclasses
import os
import re
import time

from oslo_log import log as logging

from nova.compute import disk_ownership
from nova.compute import evacuation
from nova.compute import locks
from nova.compute import pending_deletes
from nova.compute import shared_storage
from nova.compute import storage_report
from nova.conf import CONF
from nova import crashpoint
from nova import exception
from nova.image import qemu_img
from nova import objects
from nova.objects import migration as migration_obj
from nova.virt import instancedir
from nova.virt import journal
from nova.virt.libvirt import imagebackend
from nova.virt.libvirt import imagecache

LOG = logging.getLogger(__name__)

# When this process started: the module is imported when a service or
# nova-manage starts (the manager imports it).
PROCESS_STARTED = time.time()
# A temporary file modified less than this long ago is never stale: a
# write in progress on another host sharing the storage (whose clock may
# be off by some seconds) is not this process's to judge.
STALE_MIN_AGE = 3600

# Kinds of finding.
EVACUATED = 'evacuated'
PENDING_DELETE = 'pending-delete'
DOMAIN = 'domain'
PART = 'part'
BASE_PART = 'base-part'
JOURNAL_TEMP = 'journal-temp'
BASE = 'base'
STORAGE = 'storage'

# What was done (or, in a dry run, would be).
STOP = 'stop'           # a domain powered off and undefined
REMOVE = 'remove'       # a file removed
CLEAN = 'clean'         # the source-side cleanup of an evacuation
DELETE = pending_deletes.DELETE     # a delete finished: guest and disks
KEEP = pending_deletes.KEEP
ERROR = pending_deletes.ERROR
_ACTED = (STOP, REMOVE, CLEAN, DELETE)

_UUID = r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
_PART = re.compile(r'^(?P<name>.+)\.part-(?P<id>%s)$' % _UUID)
_JOURNAL = re.compile(r'^(?P<uuid>%s)\.(?P<attempt>%s)\.json$'
                      % (_UUID, _UUID))
_JOURNAL_TEMP = re.compile(r'^.+\.journal-%s$' % _UUID)
_DISKS = (instancedir.DISK, instancedir.EPHEMERAL0, instancedir.SWAP)
# Not a directory of ours, and never readable by nova (mkfs makes it).
_FILE_SYSTEM_DIRS = ('lost+found',)


@dataclasses.dataclass(frozen=True)
class Finding:
    """One thing the reaper looked at, and what it did with it."""
    kind: str
    name: str                   # a domain UUID or a path
    instance_uuid: str | None
    action: str                 # STOP, REMOVE, CLEAN, KEEP or ERROR
    reason: str


@dataclasses.dataclass
class ReapReport:
    host: str
    instances_path: str
    dry_run: bool
    findings: list[Finding] = dataclasses.field(default_factory=list)

    def add(self, kind, name, instance_uuid, action, reason):
        finding = Finding(kind, name, instance_uuid, action, reason)
        self.findings.append(finding)
        if action == ERROR:
            LOG.error('Reaper: %(kind)s %(name)s: %(reason)s',
                      dataclasses.asdict(finding),
                      instance_uuid=instance_uuid)
        elif action != KEEP:
            # Stopping a guest deserves attention; removing a leftover
            # file is routine.
            log = LOG.info if action == REMOVE else LOG.warning
            log('Reaper: %(dry)s%(action)s %(kind)s %(name)s: %(reason)s',
                dict(dataclasses.asdict(finding),
                     dry='dry run, would ' if self.dry_run else ''),
                instance_uuid=instance_uuid)
        else:
            LOG.debug('Reaper: keep %(kind)s %(name)s: %(reason)s',
                      dataclasses.asdict(finding),
                      instance_uuid=instance_uuid)
        return finding

    @property
    def acted(self) -> list[Finding]:
        return [f for f in self.findings if f.action in _ACTED]

    @property
    def kept(self) -> list[Finding]:
        return [f for f in self.findings if f.action == KEEP]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.action == ERROR]


COLUMNS = (('KIND', 'kind'), ('INSTANCE', 'instance_uuid'),
           ('NAME', 'name'), ('ACTION', 'action'), ('REASON', 'reason'))


def stale_before(now: float | None = None) -> float:
    """The time a temporary file must be older than to be stale."""
    now = time.time() if now is None else now
    return min(PROCESS_STARTED, now - STALE_MIN_AGE)


def _step(report, kind, func, *args):
    try:
        func(*args)
    except Exception as e:
        LOG.exception('Reaper: %s step failed', kind)
        report.add(kind, '-', None, ERROR, exception.message_of(e))


def reap(context, settings, driver, instance_locks=None,
         dry_run: bool = False) -> ReapReport:
    """One run of the reaper on ``settings.host`` (see the module
    docstring); ``driver`` is that host's connected virt driver and
    ``instance_locks`` its manager's (``locks.InstanceLocks``; a new one
    outside the compute service). Never raises for one thing."""
    report = ReapReport(settings.host, settings.instances_path, dry_run)
    instance_locks = instance_locks or locks.InstanceLocks()
    _step(report, EVACUATED, _reap_evacuated, context, settings.host,
          driver, instance_locks, report)
    status = _usable_storage(context, settings, driver, report)
    scan = _Scan(settings.instances_path)
    if status is not None:
        _step(report, PENDING_DELETE, _reap_pending_deletes, context,
              settings.host, driver, instance_locks, scan, report)
    _step(report, DOMAIN, _reap_domains, context, settings.host, driver,
          instance_locks, report)
    if status is not None:
        _step(report, PART, _reap_stale_files, settings, driver, scan,
              report)
        if CONF.image_cache.remove_unused_base_images:
            if status.identity is None:
                report.add(STORAGE, settings.instances_path, None, KEEP,
                           '%s: no base image aged out'
                           % status.describe())
            else:
                _step(report, BASE, _reap_unused_bases, settings, scan,
                      report)
    _log_summary(report)
    return report


def reap_at_start(context, settings, driver, instance_locks,
                  dry_run: bool = False) -> ReapReport:
    """Parts e and c alone: the pending deletes, then the stale ``.part-``
    and journal temporary files (``init_host`` runs it once, after the
    interrupted attempts were recovered)."""
    report = ReapReport(settings.host, settings.instances_path, dry_run)
    if _usable_storage(context, settings, driver, report) is not None:
        scan = _Scan(settings.instances_path)
        _step(report, PENDING_DELETE, _reap_pending_deletes, context,
              settings.host, driver, instance_locks, scan, report)
        _step(report, PART, _reap_stale_files, settings, driver, scan,
              report)
    _log_summary(report)
    return report


def _usable_storage(context, settings, driver, report):
    """The storage status, or None (reported) when nothing may be
    removed there."""
    status = driver.get_storage_status()
    problem = storage_report.storage_problem(
        status, *shared_storage.recorded_storage(context, settings.host))
    if problem:
        report.add(STORAGE, settings.instances_path, None, KEEP,
                   '%s: no file removed' % problem)
        return None
    return status


def _log_summary(report):
    LOG.info('Reaper on %(host)s%(dry)s: %(acted)d acted on, %(kept)d '
             'kept, %(errors)d failed',
             {'host': report.host,
              'dry': ' (dry run)' if report.dry_run else '',
              'acted': len(report.acted), 'kept': len(report.kept),
              'errors': len(report.errors)})


# -- a. evacuations away from this host that are done ---------------------

def _describe(migration) -> str:
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
            return _describe(migration)
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


def _reap_evacuated(context, host, driver, instance_locks, report):
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


# -- e. pending deletes ----------------------------------------------------

def _reap_pending_deletes(context, host, driver, instance_locks, scan,
                          report):
    own = {i.uuid for i in objects.Instance.get_by_host(context, host)}
    candidates = (set(scan.instance_dirs) | set(
        driver.list_instance_uuids())) - own
    for outcome in pending_deletes.finish(context, host, driver,
                                          instance_locks, candidates,
                                          dry_run=report.dry_run):
        report.add(PENDING_DELETE, outcome.uuid, outcome.uuid,
                   outcome.action, outcome.reason)


# -- b. orphan domains -----------------------------------------------------

def _in_progress(context, instance) -> str | None:
    """Why an operation on ``instance`` may be running, on any host; None
    if none."""
    for migration in objects.Migration.get_by_filters(
            context, instance_uuid=instance.uuid,
            status=list(migration_obj.IN_PROGRESS)):
        return _describe(migration)
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


def _reap_domains(context, host, driver, instance_locks, report):
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


# -- what instances_path holds --------------------------------------------

class _Scan:
    """One look at ``instances_path``: the instance directories and their
    entries, and the other directories there."""

    def __init__(self, instances_path):
        self.instances_path = instances_path
        self.instance_dirs = {}         # uuid: path
        self.other_dirs = []            # may hold disks we cannot name
        self._names = {}
        try:
            entries = sorted(os.scandir(instances_path),
                             key=lambda e: e.name)
        except FileNotFoundError:
            entries = []
        for entry in entries:
            if entry.name in instancedir.LAYOUT or \
                    entry.name in _FILE_SYSTEM_DIRS:
                continue
            try:
                uuid = instancedir.validated_uuid(entry.name)
            except exception.InvalidUUID:
                uuid = None
            if uuid is not None and entry.is_dir(follow_symlinks=False):
                self.instance_dirs[uuid] = entry.path
            elif entry.is_dir():            # symlinks to directories too
                self.other_dirs.append(entry.path)

    def names(self, path) -> list[str]:
        """The entries of a directory (read once); [] once it is gone."""
        if path not in self._names:
            try:
                self._names[path] = sorted(os.listdir(path))
            except FileNotFoundError:
                self._names[path] = []
        return self._names[path]


# -- c. stale temporary files ---------------------------------------------

def _journals(instances_path):
    """(attempt ids with a journal, journal temporary files, why no
    ``.part-`` file of an instance directory can be judged or None)."""
    path = journal.journal_dir(instances_path)
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except FileNotFoundError:
        return set(), [], None
    except OSError as e:
        return set(), [], 'cannot read %s: %s' % (path, e.strerror or e)
    attempts, temps, unknown = set(), [], None
    for entry in entries:
        match = _JOURNAL.match(entry.name)
        if match:
            # Open, complete or unreadable: its attempt is not dead for
            # sure until its host's recovery has dealt with it.
            attempts.add(match.group('attempt'))
        elif _JOURNAL_TEMP.match(entry.name):
            temps.append(entry)
        elif entry.name.endswith('.json'):
            unknown = ('%s is not named as journals are: which attempt it '
                       'is about cannot be told' % entry.path)
    return attempts, temps, unknown


def _mtime(path) -> float | None:
    try:
        return os.lstat(path).st_mtime
    except FileNotFoundError:
        return None


def _young(mtime, cutoff):
    return ('modified %d s ago, after this process started or less than '
            '%d s ago' % (max(0, time.time() - mtime), STALE_MIN_AGE)
            if mtime >= cutoff else None)


def _reap_stale_files(settings, driver, scan, report):
    path = settings.instances_path
    cutoff = stale_before()
    attempts, temps, unknown = _journals(path)
    # Copied under the GIL; a spawn starting meanwhile makes only files
    # younger than the cutoff.
    for _ in range(3):
        try:
            live = frozenset(driver._live_attempts)
            break
        except RuntimeError:            # the set changed during the copy
            continue
    else:
        live = None
    for uuid, dir_path in scan.instance_dirs.items():
        for name in scan.names(dir_path):
            match = _PART.match(name)
            if match is None:
                continue
            try:
                _reap_part(path, uuid, dir_path, name, match.group('id'),
                           attempts, live, unknown, cutoff, report)
            except Exception as e:
                LOG.exception('Reaper: could not remove %s', name,
                              instance_uuid=uuid)
                report.add(PART, os.path.join(dir_path, name), uuid, ERROR,
                           exception.message_of(e))
    for entry in temps:
        try:
            _reap_journal_temp(path, entry, cutoff, report)
        except Exception as e:
            report.add(JOURNAL_TEMP, entry.path, None, ERROR,
                       exception.message_of(e))
    _reap_fetch_leftovers(path, cutoff, report)


def _reap_part(instances_path, uuid, dir_path, name, attempt, attempts,
               live, unknown, cutoff, report):
    full = os.path.join(dir_path, name)
    mtime = _mtime(full)
    if mtime is None:
        return
    if not os.path.isfile(full) or os.path.islink(full):
        why = 'not a regular file'
    elif live is None:
        why = 'the attempts this process runs could not be read'
    elif attempt in live:
        why = 'attempt %s runs in this process' % attempt
    elif attempt in attempts:
        why = 'attempt %s has a journal in %s' % (
            attempt, journal.journal_dir(instances_path))
    elif unknown:
        why = unknown
    else:
        why = _young(mtime, cutoff)
    if why is not None:
        report.add(PART, full, uuid, KEEP, why)
        return
    if not report.dry_run:
        if not instancedir.InstanceDir(instances_path, uuid).remove_file(
                name):
            return
    report.add(PART, full, uuid, REMOVE,
               'attempt %s has no journal and runs nowhere; left by a dead '
               'process' % attempt)


def _reap_journal_temp(instances_path, entry, cutoff, report):
    mtime = _mtime(entry.path)
    if mtime is None:
        return
    why = (_young(mtime, cutoff) if entry.is_file(follow_symlinks=False)
           else 'not a regular file')
    if why is not None:
        report.add(JOURNAL_TEMP, entry.path, None, KEEP, why)
        return
    if not report.dry_run and not instancedir.remove_layout_file(
            instances_path, instancedir.JOURNAL_DIR, entry.name):
        return
    report.add(JOURNAL_TEMP, entry.path, None, REMOVE,
               'temporary file of a journal write that never finished')


def _reap_fetch_leftovers(instances_path, cutoff, report):
    cache = imagecache.ImageCache(instances_path)
    entries, _other = cache.entries()
    for entry in entries:
        if not entry.part:
            continue
        try:
            why = _young(entry.mtime, cutoff)
            if why is None:
                removed, why = cache.remove_if_older(
                    entry.name, cutoff, dry_run=report.dry_run)
                if removed:
                    report.add(BASE_PART, entry.path, None, REMOVE,
                               'temporary file of an image fetch that '
                               'died (no fetch holds the image\'s lock); '
                               + why)
                    continue
            report.add(BASE_PART, entry.path, None, KEEP, why)
        except Exception as e:
            LOG.exception('Reaper: could not remove %s', entry.path)
            report.add(BASE_PART, entry.path, None, ERROR,
                       exception.message_of(e))


# -- d. unused base images -------------------------------------------------

class _Unknown(Exception):
    """What a directory's disks use cannot be told."""


def _qcow2_disks(scan, dir_path):
    """The qcow2 disks of ``dir_path`` by what its ``disk.info`` records;
    ``_Unknown`` when what its disks are cannot all be told. Reads no
    disk."""
    names = scan.names(dir_path)
    info_path = os.path.join(dir_path, instancedir.DISK_INFO)
    try:
        info = imagebackend.read_disk_info(info_path)
    except exception.InternalError as e:
        raise _Unknown(e.format_message())
    except OSError as e:
        raise _Unknown('cannot read %s: %s' % (info_path, e.strerror or e))
    for name in _DISKS:
        if name in names and name not in info.formats:
            raise _Unknown('%s: disk %s is not listed in disk.info'
                           % (dir_path, name))
    found = []
    for name, fmt in sorted(info.formats.items()):
        if name not in names or fmt == 'raw':
            continue
        if fmt != 'qcow2':
            raise _Unknown('%s: disk.info says %s is %r' % (dir_path, name,
                                                            fmt))
        found.append(os.path.join(dir_path, name))
    return found


def _backing_file(disk):
    """The backing file of a disk ``disk.info`` records as qcow2, read as
    qcow2 (never probed); ``_Unknown`` when qemu-img cannot read it."""
    try:
        return qemu_img.info(disk, expected_format='qcow2').backing_file
    except (exception.NovaException, OSError, ValueError) as e:
        raise _Unknown('%s: %s' % (disk, exception.message_of(e)))


def _disk_dirs(scan):
    """Every directory whose disks may use a base image: the instance
    directories, the quarantined ones, and other directories holding
    something named like a disk; ``_Unknown`` when the quarantine cannot
    be read."""
    dirs = list(scan.instance_dirs.values())
    try:
        quarantined, other = instancedir.list_quarantine(
            scan.instances_path)
    except exception.QuarantineUnusable as e:
        raise _Unknown(e.format_message())
    dirs.extend(entry.path for entry in quarantined)
    for path in [p for p in other if os.path.isdir(p)] + scan.other_dirs:
        names = scan.names(path)
        if instancedir.DISK_INFO in names or set(_DISKS) & set(names):
            dirs.append(path)
    return dirs


def _reap_unused_bases(settings, scan, report):
    cache = imagecache.ImageCache(settings.instances_path)
    min_age = CONF.image_cache.remove_unused_original_minimum_age_seconds
    now = time.time()
    candidates = {}
    for entry in cache.entries()[0]:
        if entry.part:
            continue
        if now - entry.mtime < min_age:
            report.add(BASE, entry.path, None, KEEP,
                       'used %d s ago, less than %d s (remove_unused_'
                       'original_minimum_age_seconds)'
                       % (max(0, now - entry.mtime), min_age))
        else:
            candidates[entry.name] = entry
    if not candidates:
        return
    # First what needs no qemu-img: one directory whose disks cannot be
    # told keeps every candidate, so then no disk is read at all.
    try:
        disks = [disk for dir_path in _disk_dirs(scan)
                 for disk in _qcow2_disks(scan, dir_path)]
    except _Unknown as e:
        _keep_all(candidates, str(e), report)
        return
    unproven = set(candidates)
    for disk in disks:
        if not unproven:
            break
        try:
            backing = _backing_file(disk)
        except _Unknown as e:
            _keep_all({n: candidates[n] for n in unproven}, str(e), report)
            return
        name = os.path.basename(backing or '')
        if name in unproven:
            unproven.discard(name)
            report.add(BASE, candidates[name].path, None, KEEP,
                       'backing file of %s' % disk)
    for name in sorted(unproven):
        entry = candidates[name]
        try:
            removed, why = cache.remove_if_older(name, now - min_age,
                                                 dry_run=report.dry_run)
        except Exception as e:
            LOG.exception('Reaper: could not remove %s', entry.path)
            report.add(BASE, entry.path, None, ERROR,
                       exception.message_of(e))
            continue
        if removed:
            report.add(BASE, entry.path, None, REMOVE,
                       'no instance disk uses it; %s' % why)
        else:
            report.add(BASE, entry.path, None, KEEP, why)


def _keep_all(candidates, why, report):
    for name in sorted(candidates):
        report.add(BASE, candidates[name].path, None, KEEP,
                   'cannot tell whether it is in use: %s' % why)
