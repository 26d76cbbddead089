"""Whether the disk leases virtlockd takes reach the other hosts, told
from this host's mount table.

A lease of virtlockd is an fcntl() lock: on each disk file itself (no
``file_lockspace_dir``, the "direct" lockspace), or on a file named after
the disk in ``file_lockspace_dir``. A second host is refused only if it
sees that lock, which takes two things libvirt never checks:

1. the locked file is on the storage the hosts share. The disk files are
   (they are under ``instances_path``); a lockspace directory must be on
   the same storage: on the mount that holds ``instances_path`` (inside
   ``instances_path`` itself is fine), or on another mount showing the
   very same tree (same file system, source and root). Anywhere else (the
   host's own ``/var/lib/libvirt``) each host takes its own lease on the
   same disk;
2. the file system passes the lock to the other hosts. NFS mounted with
   ``nolock``, ``local_lock=all`` or ``local_lock=posix`` keeps fcntl()
   locks on the client: every host holds "its" lease on the one file.

The verdict is ``crosses`` False when either is broken (the leases
certainly stay on this host), None when the mount table cannot say
(unreadable, or no mount holds the path), True when nothing in it keeps
the leases on this host. Paths are resolved (``os.path.realpath``) before
they are looked up, as the kernel resolves them for virtlockd.

Example::

    reach = lease_reach.check('/var/lib/nova/instances',
                              lockspace_dir='/var/lib/libvirt/lockd/files')
    reach.crosses      # False
    reach.reason       # 'file_lockspace_dir ... do not cross hosts'
"""

import dataclasses
import os

from nova.virt import mounts

NFS_TYPES = ('nfs', 'nfs4')
# NFS options that keep fcntl() locks on the client (local_lock=flock
# does not: it concerns flock() only, and virtlockd uses fcntl()).
LOCAL_LOCK_OPTIONS = ('nolock', 'local_lock=all', 'local_lock=posix')
# File systems shared over a network: a lockspace on one of them, but off
# the disks' storage, is not verified either; only the words differ.
NETWORK_TYPES = NFS_TYPES + ('cifs', 'smb3', 'ceph', 'fuse.cephfs',
                             'glusterfs', 'fuse.glusterfs', 'lustre', 'gpfs',
                             'beegfs', 'gfs2', 'ocfs2', '9p')


@dataclasses.dataclass(frozen=True)
class Reach:
    """Whether this host's leases reach the hosts sharing its disks."""
    # True: nothing in the mounts keeps them here; False: they stay on
    # this host; None: cannot tell.
    crosses: bool | None
    reason: str


def _same_storage(lockspace_mount: mounts.Mount,
                  instances_mount: mounts.Mount) -> bool:
    """Whether the lockspace directory is on the storage that holds the
    disks."""
    if lockspace_mount.mount_id == instances_mount.mount_id:
        return True
    # Another mount counts only when it shows the very same tree: the
    # same file system (one device: one superblock), from the same source
    # (one export path, one block device) and with the same root (say the
    # export mounted twice, or a bind mount of the whole mount). The
    # lockspace is then where it would be through instances_path's own
    # mount. A different root means a bind mount of a subdirectory, which
    # is how per-host directories of one file system are put on common
    # paths (containers, the hosts of nova/testing): the directory behind
    # the lockspace's path may be another one on every host, so it is not
    # taken as shared. Nor are two NFS mounts of different paths of one
    # export, which may share a device and both show "/" as their root:
    # their sources differ.
    return (lockspace_mount.device == instances_mount.device
            and lockspace_mount.source == instances_mount.source
            and lockspace_mount.root == instances_mount.root)


def _elsewhere(lockspace_mount: mounts.Mount) -> str:
    """What a lockspace off the disks' storage means, in words."""
    if lockspace_mount.fs_type in NETWORK_TYPES:
        # A share of its own may reach other hosts, but nothing here says
        # they are the hosts sharing the disks, or see the same directory.
        return ('nothing shows that the hosts sharing the disks see the '
                'leases taken there')
    return 'leases taken there do not cross hosts'


def _local_lock(mount: mounts.Mount) -> str | None:
    """The option of ``mount`` that keeps fcntl() locks on this host."""
    if mount.fs_type not in NFS_TYPES:
        return None
    for option in LOCAL_LOCK_OPTIONS:
        if mount.has_option(option):
            return option
    return None


def verify(table: list[mounts.Mount], instances_path: str,
           lockspace_dir: str | None = None,
           source: str = mounts.MOUNTINFO) -> Reach:
    """The reach of leases on the disks under ``instances_path`` (in
    ``lockspace_dir`` when set), by the mount table ``table`` (read from
    ``source``, named in the reasons)."""
    instances = os.path.realpath(instances_path)
    instances_mount = mounts.containing(table, instances)
    if instances_mount is None:
        return Reach(None, 'no mount in %s holds instances_path %s: '
                           'whether disk leases cross hosts is unknown'
                     % (source, instances))
    if lockspace_dir:
        lockspace = os.path.realpath(lockspace_dir)
        target = mounts.containing(table, lockspace)
        if target is None:
            return Reach(None, 'no mount in %s holds file_lockspace_dir '
                               '%s: whether disk leases cross hosts is '
                               'unknown' % (source, lockspace))
        if not _same_storage(target, instances_mount):
            return Reach(False, 'file_lockspace_dir %s is on %s, not on '
                                'the storage of instances_path %s, which '
                                'is on %s: %s' % (
                                    lockspace, target.describe(), instances,
                                    instances_mount.describe(),
                                    _elsewhere(target)))
        what = 'file_lockspace_dir %s is' % lockspace
    else:
        target = instances_mount
        what = 'the disk files under instances_path %s are' % instances
    option = _local_lock(target)
    if option:
        return Reach(False, '%s on %s, mounted with %s: the fcntl() locks '
                            'virtlockd takes there stay on this host, so '
                            'leases do not cross hosts'
                     % (what, target.describe(), option))
    return Reach(True, '%s on %s' % (what, target.describe()))


def check(instances_path: str, lockspace_dir: str | None = None,
          mountinfo: str | None = None) -> Reach:
    """``verify`` by the mount table in the file ``mountinfo`` (by
    default this process's, as it is when called); unknown when it cannot
    be read."""
    source = mountinfo or mounts.MOUNTINFO
    try:
        table = mounts.read(source)
    except OSError as e:
        return Reach(None, 'cannot read %s (%s): whether disk leases cross '
                           'hosts is unknown' % (source, e.strerror or e))
    return verify(table, instances_path, lockspace_dir, source)
