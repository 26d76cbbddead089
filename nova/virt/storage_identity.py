"""The identity of the storage behind ``instances_path``: read, never made
on the fly.

A marker file at the root of ``instances_path`` holds a UUID. Two hosts
that mount the same directory read the same marker; separate directories
have different markers. Whether two hosts share storage is decided by
comparing these identities (``nova/compute/shared_storage.py``).

The marker is evidence only if it was made when the storage was set up:
a marker written by whoever happens to find none would make an empty
mount point (NFS not mounted yet) look like a storage of its own, and a
later comparison would call the real, shared storage "not shared". So
reading never creates. ``create`` is for setting a host up
(``nova-manage host init-storage``, or a compute service's very first
start on an empty ``instances_path``).

A missing, unreadable or malformed marker, or one that is a symlink, gives
no identity (``StorageStatus.identity`` None) and says why; decisions that
would delete then keep the data. A host configured with
``instances_path_must_be_mounted`` whose ``instances_path`` is not a mount
point is *unavailable*: it must not write into the bare mount point.

The marker can say so itself (``nova-manage host init-storage
--mount-point``): a second line ``mount-point`` means "this storage is
mounted at instances_path". Such a marker read where instances_path is not
a mount point makes the storage unavailable too. While the mount is
missing that marker is hidden under it, so the compute service also
records the flag with the identity (``services.storage_must_be_mounted``,
``nova/compute/storage_report.py``). A marker of one line (a UUID), as
earlier releases wrote, still reads, as not flagged.

Example::

    status = storage_identity.read('/var/lib/nova/instances',
                                   must_be_mounted=True)
    if status.unavailable_reason:
        refuse(status.unavailable_reason)
    status.identity            # a UUID string, or None (status.unknown_reason)
    status.must_be_mounted     # the marker says instances_path is a mount
    status.mounted             # instances_path is a mount point now
"""

import dataclasses
import errno
import os
import stat

from oslo_log import log as logging
from oslo_utils import uuidutils

from nova import exception
from nova import fileio
from nova.virt import instancedir
from nova.virt import mounts

LOG = logging.getLogger(__name__)

MARKER = instancedir.STORAGE_IDENTITY_FILE
# The marker's optional second line: the storage is mounted at
# instances_path, so instances_path must be a mount point.
MOUNT_POINT_FLAG = 'mount-point'
# A marker holds a UUID, maybe the flag, and newlines; anything longer is
# not ours.
_MAX_MARKER_BYTES = 128
MOUNTINFO = mounts.MOUNTINFO


@dataclasses.dataclass(frozen=True)
class StorageStatus:
    """What this host's ``instances_path`` says about itself, right now."""
    instances_path: str
    identity: str | None
    # Why ``identity`` is None (missing, malformed, a symlink ...).
    unknown_reason: str | None = None
    # Why nothing may be written there (a required mount is missing).
    unavailable_reason: str | None = None
    # The marker says the storage is mounted at instances_path.
    must_be_mounted: bool = False
    # Whether instances_path is a mount point now (None: cannot tell).
    mounted: bool | None = None

    def describe(self) -> str:
        if self.unavailable_reason:
            return self.unavailable_reason
        if self.identity:
            return 'storage identity %s' % self.identity
        return self.unknown_reason or 'no storage identity'


def marker_path(instances_path: str) -> str:
    return os.path.join(instances_path, MARKER)


def _read_marker(instances_path: str
                 ) -> tuple[str | None, bool, str | None]:
    """(identity, flagged as a mount point, None) or (None, False, why
    not)."""
    path = marker_path(instances_path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, False, 'no storage identity marker at %s' % path
    except OSError as e:
        if e.errno == errno.ELOOP:
            return None, False, ('storage identity marker %s is a symlink; '
                                 'not taken as evidence' % path)
        return None, False, 'storage identity marker %s unreadable: %s' % (
            path, e.strerror or e)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, False, ('storage identity marker %s is not a '
                                 'regular file' % path)
        content = os.read(fd, _MAX_MARKER_BYTES + 1)
    except OSError as e:
        return None, False, 'storage identity marker %s unreadable: %s' % (
            path, e.strerror or e)
    finally:
        os.close(fd)
    text = content.decode('utf-8', 'replace').strip()
    if len(content) > _MAX_MARKER_BYTES:
        return None, False, ('storage identity marker %s holds %d bytes or '
                             'more, not a UUID' % (path, len(content)))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    try:
        identity = instancedir.validated_uuid(lines[0] if lines else '')
    except exception.InvalidUUID:
        return None, False, ('storage identity marker %s holds %r, not a '
                             'UUID' % (path, text[:40]))
    unknown = set(lines[1:]) - {MOUNT_POINT_FLAG}
    if unknown:
        # A flag of a later release, or garbage: either way this release
        # cannot honour it, so the marker is no evidence.
        return None, False, ('storage identity marker %s holds %r after '
                             'its UUID, not a flag this release knows'
                             % (path, sorted(unknown)[0][:40]))
    return identity, MOUNT_POINT_FLAG in lines[1:], None


def _marker_text(identity: str, mount_point: bool) -> str:
    return identity + '\n' + (MOUNT_POINT_FLAG + '\n' if mount_point else '')


def mount_points(mountinfo: str | None = None) -> set[str]:
    """Every mount point this process sees (bind mounts included, which
    ``os.path.ismount`` misses on the same file system). ``mountinfo``:
    the mount table to read, by default ``MOUNTINFO`` as it is when
    called (tests describe their "mounts" in a file of their own)."""
    return {m.mount_point for m in mounts.read(mountinfo or MOUNTINFO)}


def is_mount_point(path: str, mountinfo: str | None = None) -> bool:
    return os.path.realpath(path) in mount_points(mountinfo)


def _mounted(path: str, mountinfo: str | None) -> bool | None:
    try:
        return is_mount_point(path, mountinfo)
    except OSError as e:
        # No mount table (not Linux, /proc not mounted): unknown, which
        # every check below treats as "not mounted".
        LOG.warning('Cannot tell whether %(path)s is a mount point: '
                    '%(err)s', {'path': path, 'err': e})
        return None


def read(instances_path: str, must_be_mounted: bool = False,
         mountinfo: str | None = None) -> StorageStatus:
    """The storage status of ``instances_path`` as it is now; never
    creates or changes anything."""
    instances_path = os.path.abspath(instances_path)
    mounted = _mounted(instances_path, mountinfo)
    if must_be_mounted and not mounted:
        reason = ('instances_path %s is not a mount point '
                  '(instances_path_must_be_mounted is set): its storage '
                  'is not there' % instances_path)
        return StorageStatus(instances_path, None, unknown_reason=reason,
                             unavailable_reason=reason, mounted=mounted)
    identity, flagged, why = _read_marker(instances_path)
    if flagged and not mounted:
        # The flagged marker is visible, yet not on a mount point: a copy
        # of it, or instances_path is below the real mount point. Either
        # way this is not the storage the flag vouches for.
        reason = ('storage identity marker %s (identity %s) says '
                  'instances_path %s is a mount point, and it is not one'
                  % (marker_path(instances_path), identity, instances_path))
        return StorageStatus(instances_path, None, unknown_reason=reason,
                             unavailable_reason=reason,
                             must_be_mounted=True, mounted=mounted)
    return StorageStatus(instances_path, identity, unknown_reason=why,
                         must_be_mounted=flagged, mounted=mounted)


def holds_instance_directories(instances_path: str) -> bool:
    """Whether any entry of ``instances_path`` is named like an instance."""
    try:
        names = os.listdir(instances_path)
    except FileNotFoundError:
        return False
    for name in names:
        try:
            instancedir.validated_uuid(name)
        except exception.InvalidUUID:
            continue
        return True
    return False


def create(instances_path: str, mount_point: bool = False) -> str:
    """Give the storage at ``instances_path`` an identity; the identity.

    Only for setting a host up. ``mount_point``: the marker says the
    storage is mounted at ``instances_path`` (the caller checked that it
    is). A marker already there is kept (its identity returned; see
    ``mark_mount_point`` to flag it); a malformed one is an error, never
    replaced. The marker appears complete and atomically (written under a
    temporary name, flushed, then hard-linked into place, which fails
    rather than overwrites when another host won the race).
    """
    os.makedirs(instances_path, exist_ok=True)
    marker = marker_path(instances_path)
    if not os.path.lexists(marker):
        with fileio.temporary_beside(marker) as tmp:
            with open(tmp, 'x') as f:
                f.write(_marker_text(uuidutils.generate_uuid(), mount_point))
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, marker)
            except FileExistsError:
                pass  # another host or thread created it first
        fileio.fsync_dir(instances_path)
    identity, _flagged, why = _read_marker(instances_path)
    if identity is None:
        raise exception.InvalidStorageIdentity(reason=why)
    return identity


def mark_mount_point(instances_path: str) -> str:
    """Flag the valid marker at ``instances_path`` as the marker of a
    storage mounted there, keeping its identity; the identity.

    The marker is replaced whole by a rename (other hosts reading it
    meanwhile see the old or the new one, both with that identity).
    ``InvalidStorageIdentity`` when there is no valid marker: a flag
    never comes without the identity it is about.
    """
    identity, flagged, why = _read_marker(instances_path)
    if identity is None:
        raise exception.InvalidStorageIdentity(reason=why)
    if not flagged:
        fileio.write_atomically(marker_path(instances_path),
                                _marker_text(identity, True),
                                purpose='part', sync_dir=True)
    return identity


def create_if_new(instances_path: str) -> str | None:
    """At a compute service's first start: an identity for a new, empty
    ``instances_path``; None (and a loud log line) when it already holds
    instance directories, whose storage nobody can vouch for now."""
    status = read(instances_path)
    if status.identity:
        return status.identity
    if holds_instance_directories(instances_path):
        LOG.error('%s has instance directories but %s; not creating an '
                  'identity for storage that may be another host\'s '
                  '(run "nova-manage host init-storage" once you know '
                  'which storage this is)', instances_path,
                  status.unknown_reason)
        return None
    if os.path.lexists(marker_path(instances_path)):
        LOG.error('Not replacing the storage identity marker: %s',
                  status.unknown_reason)
        return None
    identity = create(instances_path)
    LOG.warning('FIRST START on this storage: created storage identity '
                '%(id)s at %(marker)s. If instances_path should be a '
                'shared or remote file system, it was not mounted: stop '
                'the service, remove the marker and mount it.',
                {'id': identity, 'marker': marker_path(instances_path)})
    return identity
