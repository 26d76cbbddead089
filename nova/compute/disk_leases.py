"""Disk leases: what keeps two hosts from running one disk, and whom to
fence when a start is refused (doc/source/cleanup.rst, "Fencing").

On shared storage, an evacuation away from a host that is partitioned
rather than dead (its nova-compute silent, its guests running) would start
a second QEMU on the same disks. libvirt's lock manager prevents it: with
``lock_manager = "lockd"`` each host's virtlockd takes a lease on every
disk a domain uses, and a second domain on a leased disk is refused
(``exception.DiskLeaseHeld``, raised by the libvirt driver). This module:

* records, when the compute service starts, which leases its host's
  libvirt takes (``driver.get_disk_leases()``, read from libvirt's
  configuration and checked against the mounts: leases that cannot reach
  another host count as none) in its service row (``disk_leases``:
  ``lockd``, ``sanlock``, ``none``; ``disk_leases_reason``: why
  configured leases count as none, or are unknown), and warns in the log
  when the host shares its instance storage with another compute host
  (the same storage identity) while either of them takes none; again
  whenever the storage it records changes (a late mount, which may move
  the disks onto another mount: the leases are read again then). ``GET
  /os-disk-leases`` shows the same (``status_of``, ``describe``);
* names the host holding a refused disk (``naming_holder``): libvirt
  only knows that the disk is locked, not by whom (a lease on NFS carries
  no host), but the database knows who ran the instance: the host the
  instance is recorded on when this is another one (an evacuation: its
  source), else the source of the instance's newest evacuation, else the
  one other host sharing this storage.

``status_of`` gives the same as a value (``LeaseStatus``), for ``GET
/os-disk-leases``: the project's own resource, since ``GET /os-services``
answers exactly the Compute API's fields.

Example (the compute manager)::

    reporter = disk_leases.LeaseReporter(host, driver)
    reporter.record_at_start(context)
    ...
    raise disk_leases.naming_holder(context, host, instance, exc)
"""

import dataclasses

from oslo_log import log as logging

from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova.objects import service as service_obj

LOG = logging.getLogger(__name__)

COMPUTE_BINARY = service_obj.COMPUTE_BINARY
PROTECTED = ('lockd', 'sanlock')
NONE = 'none'
# Shown for a row that records no answer but a reason why (NULL).
UNKNOWN = 'unknown'


def protected(value) -> bool:
    """Whether a recorded ``disk_leases`` value means leased disks."""
    return value in PROTECTED


def sharing_peers(service, services) -> list:
    """The other compute services of ``services`` that record the same
    storage identity as ``service``."""
    identity = service.storage_identity
    if not identity:
        return []
    return [s for s in services
            if s.binary == COMPUTE_BINARY and s.host != service.host
            and s.storage_identity == identity]


def unprotected_sharing(service, services) -> list:
    """The hosts sharing storage with ``service`` where one of the two
    takes no disk lease (unknown counts as none)."""
    peers = sharing_peers(service, services)
    if not protected(service.disk_leases):
        return [p.host for p in peers]
    return [p.host for p in peers if not protected(p.disk_leases)]


def recorded(service) -> str | None:
    """A service row's ``disk_leases`` in words, with the reason recorded
    for it: ``lockd``, ``none``, ``none: <why>``, ``unknown: <why>``;
    None when not reported."""
    reason = service.disk_leases_reason
    if service.disk_leases is None and not reason:
        return None
    value = service.disk_leases or UNKNOWN
    return '%s: %s' % (value, reason) if reason else value


def describe(service, services) -> str | None:
    """The disk leases of a compute service in one sentence (``summary``
    in ``GET /os-disk-leases``, ``nova service-list``): what its libvirt
    takes (and why it counts as none, when libvirt is configured with
    leases that cannot reach other hosts), and a warning when it shares
    storage with a host where either takes none; None when not
    reported."""
    if service.binary != COMPUTE_BINARY:
        return None
    shown = recorded(service)
    if shown is None:
        return None
    exposed = unprotected_sharing(service, services)
    if not exposed:
        return shown
    if not protected(service.disk_leases):
        # After a reason, which is a sentence of its own, a new clause.
        joint = '; it' if service.disk_leases_reason else ':'
        return ('%s%s shares storage with %s without disk leases; fence it '
                'before evacuating' % (shown, joint, ', '.join(exposed)))
    return ('%s, but %s sharing its storage take%s no disk leases; fence '
            'before evacuating' % (shown, ', '.join(exposed),
                                   's' if len(exposed) == 1 else ''))


@dataclasses.dataclass(frozen=True)
class LeaseStatus:
    """What one compute service records about its disk leases, and what
    follows for evacuating its host."""
    host: str
    service_uuid: str
    # lockd, sanlock, none; None when unknown or not reported.
    disk_leases: str | None
    # Why configured leases count as none, or are unknown.
    reason: str | None
    storage_identity: str | None
    # The hosts sharing this storage where one side takes no lease.
    unprotected_sharing: list[str]
    # ``describe``'s sentence: the leases, the reason, the warning.
    summary: str | None

    @property
    def fence_before_evacuating(self) -> bool:
        """Whether nothing keeps a second QEMU off this host's disks on
        shared storage, so it must be fenced before it is evacuated."""
        return bool(self.unprotected_sharing)


def status_of(service, services) -> LeaseStatus:
    """``service``'s disk leases among ``services`` (every service, to
    find those sharing its storage)."""
    return LeaseStatus(
        host=service.host, service_uuid=service.uuid,
        disk_leases=service.disk_leases,
        reason=service.disk_leases_reason,
        storage_identity=service.storage_identity or None,
        unprotected_sharing=unprotected_sharing(service, services),
        summary=describe(service, services))


def _compute_services(context):
    return objects.Service.get_all(context, binary=COMPUTE_BINARY)


class LeaseReporter:
    """Records one compute host's disk leases and warns about sharing
    storage without them."""

    def __init__(self, host: str, driver):
        self.host = host
        self.driver = driver
        self.leases = None
        self._checked_identity = None

    def record_at_start(self, context):
        """Read the host's leases, record them in its service row, log
        them, warn when storage is shared without leases. The leases
        (None: the driver cannot tell)."""
        try:
            row = objects.Service.get_by_host_and_binary(
                context, self.host, COMPUTE_BINARY)
        except exception.ServiceNotFound:
            self.leases = self.driver.get_disk_leases()
            return self.leases
        self._read_into(row, force_log=True)
        row.save()
        self.check_sharing(context, row)
        return self.leases

    def update(self, context, row):
        """At a heartbeat: when the storage identity ``row`` records
        changed since the last check, read the leases again (a late mount
        moves the disks onto another mount, which decides where leases
        reach) into ``row`` and check the sharing again (the service
        writes the row)."""
        if row.storage_identity != self._checked_identity:
            self._read_into(row)
            self.check_sharing(context, row)

    def _read_into(self, row, force_log=False):
        """Read the leases into ``row`` (in memory); log them when asked
        or when the answer changed."""
        before = (row.disk_leases, row.disk_leases_reason)
        self.leases = self.driver.get_disk_leases()
        if self.leases is None:
            now = (None, None)
        else:
            now = (self.leases.manager, self.leases.reason)
        if self.leases is not None and (force_log or now != before):
            # Unprotected and unknown warn: nothing keeps a second host
            # off this host's disks.
            log = LOG.info if self.leases.protected else LOG.warning
            log('Disk leases on %(host)s: %(detail)s',
                {'host': self.host, 'detail': self.leases.detail})
        if now != before:
            row.disk_leases, row.disk_leases_reason = now

    def check_sharing(self, context, row):
        """Warn (once per storage identity) when this host shares storage
        with hosts where one side takes no lease; their names."""
        self._checked_identity = row.storage_identity
        if not row.storage_identity:
            return []
        services = [s for s in _compute_services(context)
                    if s.host != self.host] + [row]
        exposed = unprotected_sharing(row, services)
        if exposed:
            if protected(row.disk_leases):
                who = 'they take no disk leases'
            elif row.disk_leases_reason:
                who = ('this host takes no disk leases (%s)'
                       % row.disk_leases_reason)
            else:
                who = 'this host takes no disk leases'
            LOG.warning(
                'Host %(host)s shares its instance storage (identity '
                '%(identity)s) with %(peers)s, and %(who)s: nothing keeps '
                'an evacuation from starting a second QEMU on the disks of '
                'a guest that still runs on a partitioned host. Enable '
                'libvirt\'s lock manager (lock_manager = "lockd", its '
                'leases on the shared storage) on every host sharing the '
                'storage, or fence every host before evacuating it '
                '(doc/source/cleanup.rst, "Fencing")',
                {'host': self.host, 'identity': row.storage_identity,
                 'peers': ', '.join(exposed), 'who': who})
        return exposed


def holder_of(context, host: str, instance) -> str | None:
    """The host most likely to run ``instance``'s disks, seen from
    ``host`` whose start of it was refused; None when nothing says."""
    if instance.host and instance.host != host:
        return instance.host
    try:
        migrations = objects.Migration.get_by_filters(
            context, instance_uuid=instance.uuid,
            migration_type=migration_obj.EVACUATION)
    except Exception:
        LOG.debug('Could not read the migrations', instance=instance)
        migrations = []
    for migration in reversed(migrations):      # newest first
        if migration.source_compute and migration.source_compute != host:
            return migration.source_compute
    try:
        row = objects.Service.get_by_host_and_binary(context, host,
                                                     COMPUTE_BINARY)
        peers = sharing_peers(row, _compute_services(context))
    except exception.NovaException:
        return None
    if len(peers) == 1:
        return peers[0].host
    if peers:
        return ('the host that runs it (one of %s, which share this '
                'storage)' % ', '.join(p.host for p in peers))
    return None


def naming_holder(context, host: str, instance,
                  exc: exception.DiskLeaseHeld) -> exception.DiskLeaseHeld:
    """``exc`` naming the host that holds the disk when it did not and
    the database can tell (else ``exc`` itself)."""
    if exc.holder_known:
        return exc
    try:
        holder = holder_of(context, host, instance)
    except Exception:
        LOG.exception('Could not tell which host holds the disk',
                      instance=instance)
        holder = None
    return exc if holder is None else exc.naming(holder)
