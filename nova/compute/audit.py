"""Orphaned artefacts on one compute host: list them, remove the safe ones.

doc/source/cleanup.rst, "Invariants", invariant 3: no domain, VIF or
instance directory exists on a host for an instance that the database does
not place on that host, once the operation that created it has ended.
``audit`` lists such orphans; ``cleanup`` removes those that are safe to
remove (``nova-manage host audit`` / ``host cleanup``). It runs on the host
itself: it needs that host's hypervisor (the virt driver) and its
``instances_path``.

Each instance with artefacts here that the database does not place here is
classified:

* ``deleted``: the instance is deleted;
* ``elsewhere``: it lives on another host (with the newest migration of
  the instance, if any, e.g. an evacuation that explains it);
* ``unplaced``: it exists but is on no host yet;
* ``unknown``: the database has no such instance.

What may go (doc/source/cleanup.rst, "Auditing a host": when in doubt,
keep the disks and report the leftover):

* nothing at all while an operation on the instance is in progress (a
  migration ``accepted`` or ``pre-migrating``, or a task state set);
* otherwise its domain and VIFs, since they hold no data, unless the
  database has never heard of the instance (it may be an operator's own
  guest on this hypervisor: reported, kept);
* its directory (the disks) only when the instance is deleted, or lives
  on another host whose storage is known not to be shared with this one
  (both storage identities known and different) and the directory's
  ownership stamp names this host on this storage. Storage shared with
  the owner is reported ``shared, keep``; an unknown instance's or
  unplaced instance's disks, or disks whose sharing or owner cannot be
  told, are kept. "Removed" means moved to quarantine
  (``<instances_path>/_quarantine``, purged after ``quarantine_max_age``):
  the audit's verdict rests on inference, so a wrong one must cost disk
  space, never data. No directory at all goes while this host's storage
  has a problem (``storage_report.storage_problem``: a required mount
  missing, a recorded marker gone): what is seen then is not the storage
  the database's evidence is about.

Entries of ``instances_path`` that are not instance directories (``_base``,
``locks``, ``_journal``, ``_quarantine``, the storage identity marker,
anything whose name is not a canonical UUID, symlinks) are never touched;
the unexpected ones are reported. Quarantined directories and spawn
journals no process runs are listed too (``QUARANTINED``, ``JOURNAL``).

Example::

    report = audit.audit(ctx, settings, driver)
    print(audit.format_table(report))
    result = audit.cleanup(ctx, settings, driver, report)
"""

import dataclasses
import os

from oslo_log import log as logging

from nova.compute import disk_ownership
from nova.compute import shared_storage
from nova import exception
from nova.model import actions
from nova.model import network as network_model
from nova import objects
from nova.objects import migration as migration_obj
from nova.virt import instancedir

LOG = logging.getLogger(__name__)

# Why the database does not place the instance on this host.
DELETED = 'deleted'
ELSEWHERE = 'elsewhere'
UNPLACED = 'unplaced'
UNKNOWN = 'unknown'
NOT_INSTANCE = 'not an instance'

# Kinds of artefact.
DOMAIN = 'domain'
VIF = 'vif'
DIRECTORY = 'directory'
ENTRY = 'entry'
QUARANTINED = 'quarantined'
JOURNAL = 'journal'

REMOVE = actions.REMOVE
KEEP = actions.KEEP

# Layout entries of instances_path that are expected and never reported.
_LAYOUT = instancedir.LAYOUT


@dataclasses.dataclass(frozen=True)
class Orphan:
    """One artefact on this host that the database does not place here."""
    kind: str                   # DOMAIN, VIF, DIRECTORY or ENTRY
    name: str                   # domain UUID, port id or path
    instance_uuid: str | None
    status: str                 # DELETED, ELSEWHERE, ... NOT_INSTANCE
    owner: str | None           # the host the database places it on
    migration: str | None       # newest migration of the instance
    action: str                 # REMOVE or KEEP
    reason: str                 # why that action


@dataclasses.dataclass
class AuditReport:
    host: str
    instances_path: str
    storage_identity: str | None
    orphans: list[Orphan] = dataclasses.field(default_factory=list)
    # Why this host's storage cannot be judged now (no directory goes).
    storage_problem: str | None = None

    @property
    def removable(self) -> list[Orphan]:
        return [o for o in self.orphans if o.action == REMOVE]

    @property
    def kept(self) -> list[Orphan]:
        return [o for o in self.orphans if o.action == KEEP]


@dataclasses.dataclass
class CleanupResult:
    removed: list[Orphan] = dataclasses.field(default_factory=list)
    kept: list[Orphan] = dataclasses.field(default_factory=list)
    errors: list[tuple[Orphan, str]] = dataclasses.field(
        default_factory=list)


@dataclasses.dataclass(frozen=True)
class _Verdict:
    """What the database says about one instance's artefacts here."""
    status: str
    owner: str | None
    migration: str | None
    guest_action: str
    guest_reason: str
    # An operation on the instance is in progress: nothing of it goes.
    busy: str | None = None


# -- what the database says -------------------------------------------------


def _describe(migration) -> str:
    return '%s %s -> %s: %s' % (migration.migration_type,
                                migration.source_compute,
                                migration.dest_compute, migration.status)


_UNPLACED_WORDS = {UNPLACED: 'instance placed on no host',
                   UNKNOWN: 'instance not in the database'}


def classify(context, host: str, uuid: str) -> _Verdict | None:
    """The verdict on instance ``uuid``'s guest here; None when the
    database places the instance here (not an orphan). Its directory is
    decided by ``disk_ownership.on_orphan`` (``_directory_verdict``)."""
    instance = objects.Instance.find(context, uuid)
    if instance is not None and not instance.deleted \
            and instance.host == host:
        return None
    migrations = objects.Migration.get_by_filters(context,
                                                  instance_uuid=uuid)
    active = [m for m in migrations
              if m.status in migration_obj.IN_PROGRESS]
    newest = (active or migrations)[-1] if (active or migrations) else None
    described = _describe(newest) if newest is not None else None

    if instance is None:
        status, owner = UNKNOWN, None
    elif instance.deleted:
        status, owner = DELETED, instance.host
    elif instance.host is None:
        status, owner = UNPLACED, None
    else:
        status, owner = ELSEWHERE, instance.host

    busy = None
    if active:
        busy = '%s in progress' % _describe(active[-1])
    elif instance is not None and not instance.deleted \
            and instance.task_state is not None:
        busy = 'task %s in progress' % instance.task_state
    if busy:
        return _Verdict(status, owner, described, KEEP, busy, busy)

    guest_reason = {DELETED: 'instance deleted',
                    ELSEWHERE: 'instance lives on %s' % owner,
                    UNPLACED: _UNPLACED_WORDS[UNPLACED],
                    UNKNOWN: _UNPLACED_WORDS[UNKNOWN]}[status]
    guest_action = REMOVE
    if status == UNKNOWN:
        # NOTE: a domain the database has never heard of may be an
        # operator's own guest on this hypervisor, not a leftover of ours:
        # report it, never destroy it.
        guest_action = KEEP
        guest_reason += ': not known to be ours, kept'
    return _Verdict(status, owner, described, guest_action, guest_reason)


def _directory_verdict(context, host, driver, live, uuid,
                       verdict) -> tuple[str, str]:
    """(action, reason) for the instance directory of an orphan: the one
    decision every workflow asks (``disk_ownership.on_orphan``)."""
    if verdict.busy:
        return KEEP, verdict.busy
    facts = disk_ownership.read_directory(
        context, host, driver, objects.Instance(context, uuid=uuid))
    owner = verdict.owner if verdict.status == ELSEWHERE else None
    decided = disk_ownership.on_orphan(
        facts, live, host=host, deleted=verdict.status == DELETED,
        owner=owner,
        owner_identity=(shared_storage.recorded_identity(context, owner)
                        if owner else None),
        unplaced=_UNPLACED_WORDS.get(verdict.status))
    return decided.action, decided.reason


# -- what is on the host ----------------------------------------------------

def _scan_instances_path(instances_path):
    """({uuid: directory path}, [unexpected entries])."""
    directories, unexpected = {}, []
    try:
        entries = list(os.scandir(instances_path))
    except FileNotFoundError:
        return directories, unexpected
    for entry in sorted(entries, key=lambda e: e.name):
        if entry.name in _LAYOUT or entry.name.startswith(
                instancedir.STORAGE_IDENTITY_FILE + '.'):
            continue
        try:
            uuid = instancedir.validated_uuid(entry.name)
        except exception.InvalidUUID:
            unexpected.append((entry.path, 'not an instance directory'))
            continue
        if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
            unexpected.append((entry.path, 'named like an instance but not '
                                           'a directory'))
            continue
        directories[uuid] = entry.path
    return directories, unexpected


def _ports(instance) -> set[str]:
    return {vif.id for vif in (instance.network_info or ())}


def _plugged_ports(context, host, driver, candidates):
    """{instance uuid: plugged port ids} and the plugged ports no instance
    could be found for."""
    plugged = driver.plugged_vifs_by_instance()
    everything = set().union(*plugged.values())
    if not everything:
        return {}, set()
    own_ports = set()
    candidates = set(candidates)
    for instance in objects.Instance.get_all(context, include_deleted=True):
        if instance.host == host and not instance.deleted:
            own_ports |= _ports(instance)
        elif _ports(instance) & everything:
            candidates.add(instance.uuid)
    by_instance = {}
    for uuid in sorted(candidates):
        ports = plugged.get(uuid)
        if ports:
            by_instance[uuid] = set(ports)
    attributed = own_ports.union(*by_instance.values())
    return by_instance, everything - attributed


def audit(context, settings, driver) -> AuditReport:
    """List the orphans on the host ``settings.host`` whose driver
    (connected: ``init_host`` done) is ``driver``. Changes nothing."""
    host, path = settings.host, settings.instances_path
    live = disk_ownership.live_storage(context, host, driver)
    if live.problem:
        LOG.warning('Host %(host)s: %(problem)s; no instance directory is '
                    'removed', {'host': host, 'problem': live.problem})
    report = AuditReport(host=host, instances_path=path,
                         storage_identity=live.identity,
                         storage_problem=live.problem)
    domains = set(driver.list_instance_uuids())
    directories, unexpected = _scan_instances_path(path)
    ports, stray_ports = _plugged_ports(context, host, driver,
                                        domains | set(directories))
    for uuid in sorted(domains | set(directories) | set(ports)):
        verdict = classify(context, host, uuid)
        if verdict is None:
            continue

        def add(kind, name, action, reason, uuid=uuid, verdict=verdict):
            report.orphans.append(Orphan(
                kind, name, uuid, verdict.status, verdict.owner,
                verdict.migration, action, reason))

        if uuid in domains:
            add(DOMAIN, uuid, verdict.guest_action, verdict.guest_reason)
        for port in sorted(ports.get(uuid, ())):
            add(VIF, port, verdict.guest_action, verdict.guest_reason)
        if uuid in directories:
            add(DIRECTORY, directories[uuid], *_directory_verdict(
                context, host, driver, live, uuid, verdict))
    for port in sorted(stray_ports):
        report.orphans.append(Orphan(
            VIF, port, None, UNKNOWN, None, None, KEEP,
            'plugged port of no instance the database knows'))
    for entry, why in unexpected:
        report.orphans.append(Orphan(ENTRY, entry, None, NOT_INSTANCE,
                                     None, None, KEEP, why))
    _add_quarantine_and_journals(report, driver, path)
    for orphan in report.orphans:
        LOG.info('Orphan %(kind)s %(name)s (%(status)s): %(action)s, '
                 '%(reason)s', dataclasses.asdict(orphan),
                 instance_uuid=orphan.instance_uuid)
    return report


def _add_quarantine_and_journals(report, driver, path):
    """What the quarantine holds, and the spawn journals no process of
    this host runs: listed, kept (the purge and a restart deal with
    them)."""
    try:
        quarantined, other = instancedir.list_quarantine(path)
    except exception.QuarantineUnusable as e:
        quarantined, other = [], []
        report.orphans.append(Orphan(
            QUARANTINED, instancedir.quarantine_dir(path), None,
            NOT_INSTANCE, None, None, KEEP, e.format_message()))
    for entry in quarantined:
        report.orphans.append(Orphan(
            QUARANTINED, entry.path, entry.instance_uuid, 'quarantined',
            None, None, KEEP, '%d bytes since %s: %s' % (
                entry.size, entry.quarantined_at.isoformat(),
                entry.reason or 'no reason recorded')))
    for entry in other:
        report.orphans.append(Orphan(
            ENTRY, entry, None, NOT_INSTANCE, None, None, KEEP,
            'in the quarantine but not named as quarantined directories '
            'are'))
    journals, unreadable = driver.interrupted_attempts()
    for spawn_journal in journals:
        report.orphans.append(Orphan(
            JOURNAL, spawn_journal.path, spawn_journal.idir.uuid,
            'open', None, spawn_journal.attempt.migration, KEEP,
            'open %s attempt: in progress, or cut short by a crash (the '
            'next start of nova-compute undoes it then)'
            % spawn_journal.attempt.operation))
    for bad in unreadable:
        report.orphans.append(Orphan(JOURNAL, bad.path, None, NOT_INSTANCE,
                                     None, None, KEEP, bad.reason))


# -- removing what may go ---------------------------------------------------

def _network_info(instance, ports):
    """VIFs to unplug: the instance's own where the database has them,
    bare ones (port id only) for the rest."""
    known = {vif.id: vif for vif in (instance.network_info or ())}
    bare = network_model.Network(id='', label='', bridge='')
    return network_model.NetworkInfo(
        known.get(port) or network_model.VIF(id=port, address='',
                                             network=bare)
        for port in sorted(ports))


def _clean_instance(context, settings, driver, uuid, planned, result):
    live = disk_ownership.live_storage(context, settings.host, driver)
    verdict = classify(context, settings.host, uuid)
    guest = [o for o in planned if o.kind in (DOMAIN, VIF)]
    disks = [o for o in planned if o.kind == DIRECTORY]
    # Decided again now: the database may have changed since the audit.
    if verdict is None or verdict.guest_action != REMOVE:
        result.kept.extend(guest)
        guest = []
    disk_action, disk_reason = (KEEP, '') if verdict is None else \
        _directory_verdict(context, settings.host, driver, live, uuid,
                           verdict)
    if disk_action != REMOVE:
        result.kept.extend(disks)
        disks = []
    if guest:
        instance = objects.Instance.find(context, uuid) or objects.Instance(
            context, uuid=uuid)
        ports = [o.name for o in guest if o.kind == VIF]
        driver.cleanup(context, instance, _network_info(instance, ports),
                       destroy_disks=False, destroy_vifs=True)
        LOG.info('Removed the orphan domain and VIFs (%s)',
                 verdict.guest_reason, instance_uuid=uuid)
        result.removed.extend(guest)
    if disks:
        driver.quarantine_instance_files(
            objects.Instance(context, uuid=uuid),
            'nova-manage host cleanup: %s' % disk_reason)
        result.removed.extend(disks)


def cleanup(context, settings, driver, report: AuditReport
            ) -> CleanupResult:
    """Remove the orphans ``report`` marks REMOVE, deciding each instance
    again first; what changed since is kept. One failure is reported
    and does not stop the others."""
    result = CleanupResult(kept=list(report.kept))
    planned: dict[str | None, list[Orphan]] = {}
    for orphan in report.removable:
        planned.setdefault(orphan.instance_uuid, []).append(orphan)
    for uuid, orphans in planned.items():
        try:
            _clean_instance(context, settings, driver, uuid, orphans, result)
        except Exception as e:
            LOG.exception('Removing orphans failed', instance_uuid=uuid)
            message = str(e) or type(e).__name__
            done = set(map(id, result.removed))
            result.errors.extend((o, message) for o in orphans
                                 if id(o) not in done)
    return result


# -- showing it -------------------------------------------------------------

_COLUMNS = (('KIND', 'kind'), ('INSTANCE', 'instance_uuid'),
            ('NAME', 'name'), ('STATUS', 'status'), ('OWNER', 'owner'),
            ('MIGRATION', 'migration'), ('ACTION', 'action'),
            ('REASON', 'reason'))


def format_table(orphans, columns=_COLUMNS) -> str:
    """A plain text table of orphans, one a line.

    ``columns``: (title, attribute) pairs; the default suits ``Orphan``.
    """
    rows = [[title for title, _ in columns]]
    for orphan in orphans:
        rows.append([str(getattr(orphan, attr) or '-')
                     for _, attr in columns])
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    return '\n'.join('  '.join(cell.ljust(width)
                               for cell, width in zip(row, widths)).rstrip()
                     for row in rows)
