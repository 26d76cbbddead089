"""Whether two compute hosts share their instance storage, from evidence.

"Shared" means the source's and the target's ``instances_path`` are the
same directory. The evidence is the storage identity each compute service
records in its service row: a UUID the virt driver keeps in a marker file at
the root of ``instances_path`` (``driver.get_storage_identity()``). Two hosts
that mount the same directory read the same marker, so their identities are
equal; separate directories have different markers. The other host's
identity comes from its service row, as its last heartbeat recorded it
(``storage_report.py`` writes it from the marker read live, at start and
with every heartbeat), so the comparison works while that host is down;
this host's own comes from its driver, read live at the moment of the
decision (``identity_of`` that reading; ``disk_ownership.live_storage``
reads it). A marker is never created on the fly, so a
missing one means *unknown*, and unknown never leads to a deletion. A host
whose live identity differs from the one it recorded (its storage was
remounted since its last heartbeat) refuses decisions that may delete
until its next heartbeat records what it reads.

The identities are half the evidence: a directory's ownership stamp says
who wrote it on which storage, and a deletion needs both to agree
(``disk_ownership.py``).

An instance directory existing on the target is never evidence: a leftover
of an earlier failed evacuation would otherwise pass for shared storage
(the evacuation-leftovers bug, doc/source/cleanup.rst, "Background").

Usage on the target of an evacuation::

    evidence = shared_storage.gather(ctx, source_host=instance.host,
                                     target_host=self.host,
                                     target_identity=driver_identity)
    on_shared = shared_storage.decide(evidence, requested=on_shared_storage)

where ``driver_identity = disk_ownership.live_storage(ctx, self.host,
driver).identity``.
"""

import dataclasses

from oslo_log import log as logging

from nova import exception
from nova.objects import service as service_obj

LOG = logging.getLogger(__name__)

COMPUTE_BINARY = service_obj.COMPUTE_BINARY


@dataclasses.dataclass(frozen=True)
class StorageEvidence:
    """What is known about the storage of a source and a target host."""
    source_host: str
    target_host: str
    source_identity: str | None
    target_identity: str | None

    @property
    def known(self) -> bool:
        return bool(self.source_identity) and bool(self.target_identity)

    @property
    def shared(self) -> bool | None:
        """True or False from the evidence; None when it is missing."""
        if not self.known:
            return None
        return self.source_identity == self.target_identity

    def describe(self) -> str:
        def _ident(value):
            return value if value else 'no storage identity recorded'
        verdict = {True: 'shared', False: 'not shared',
                   None: 'unknown'}[self.shared]
        return ('source host %s has %s, target host %s has %s: storage is '
                '%s' % (self.source_host, _ident(self.source_identity),
                        self.target_host, _ident(self.target_identity),
                        verdict))


recorded_storage = service_obj.recorded_storage


def recorded_identity(context, host: str) -> str | None:
    """The storage identity ``host``'s compute service recorded, if any."""
    return recorded_storage(context, host)[0]


def identity_of(host: str, status, recorded: str | None,
                must_be_mounted: bool) -> str | None:
    """This host's storage identity from evidence already read: the
    storage's ``status`` now and what the host recorded
    (``recorded_storage``); None when unknown.

    ``StorageEvidenceStale`` when it differs from what the host recorded:
    other hosts may have compared against the recorded one, so no
    decision that may delete rests on either until they agree again.
    None too when the host recorded its storage as a mount point and
    ``instances_path`` is not one now: the marker read is then a copy,
    not the storage it names (``storage_report.storage_problem``).
    """
    if status.identity and recorded and status.identity != recorded:
        raise exception.StorageEvidenceStale(
            host=host, live=status.identity, path=status.instances_path,
            recorded=recorded)
    if status.identity and must_be_mounted and not status.mounted:
        LOG.warning('Host %(host)s recorded storage identity %(id)s as '
                    'mounted at %(path)s, which is not a mount point now; '
                    'its storage identity is unknown', {
                        'host': host, 'id': recorded,
                        'path': status.instances_path})
        return None
    return status.identity


def gather(context, source_host: str, target_host: str,
           target_identity: str | None) -> StorageEvidence:
    """Collect the evidence for an evacuation from source to target."""
    return StorageEvidence(
        source_host=source_host, target_host=target_host,
        source_identity=recorded_identity(context, source_host),
        target_identity=target_identity)


def decide(evidence: StorageEvidence, requested: bool | None,
           instance_dir: str | None = None) -> bool:
    """Whether storage is shared, checking the operator's claim if any.

    ``requested`` None means "detect": the evidence must then be complete,
    or ``InvalidSharedStorage`` asks the operator to say. An explicit value
    that contradicts complete evidence is refused with
    ``InvalidSharedStorage`` naming what was found.

    An explicit value with incomplete evidence is taken at its word
    (logged) only while the target holds no directory of the instance
    (``instance_dir``: its path when it exists there, else None). Then
    anything a failed attempt leaves was made by that attempt. With a
    directory there, a leftover of an earlier attempt cannot be told from
    the instance's own disks on shared storage; since a wrong "not shared"
    would delete those (doc/source/cleanup.rst, "Auditing a host": when
    in doubt, keep the disks), it is refused.
    """
    found = evidence.shared
    if requested is None:
        if found is None:
            raise exception.InvalidSharedStorage(
                reason='Cannot tell whether storage is shared (%s); pass '
                       'on_shared_storage explicitly.' % evidence.describe())
        return found
    requested = bool(requested)
    if found is None:
        if instance_dir is not None:
            raise exception.InvalidSharedStorage(
                reason='Cannot take on_shared_storage=%s on trust: %s, and '
                       'an instance directory exists at %s on target host '
                       '%s, so a leftover of an earlier attempt cannot be '
                       'told from the instance\'s shared disks; refusing '
                       'rather than risk its only disks.'
                       % (requested, _missing(evidence), instance_dir,
                          evidence.target_host))
        LOG.warning('Taking on_shared_storage=%(req)s on trust: %(ev)s',
                    {'req': requested, 'ev': evidence.describe()})
        return requested
    if requested != found:
        raise exception.InvalidSharedStorage(
            reason='on_shared_storage=%s contradicts the evidence: %s.'
                   % (requested, evidence.describe()))
    return found


def _missing(evidence: StorageEvidence) -> str:
    """Which hosts recorded no storage identity, in words."""
    sides = (('source', evidence.source_host, evidence.source_identity),
             ('target', evidence.target_host, evidence.target_identity))
    return ' and '.join('%s host %s has no storage identity recorded'
                        % (role, host) for role, host, ident in sides
                        if not ident)
