"""Paths under ``instances_path``, and the only code that deletes there.

Layout (Nova's)::

    <instances_path>/
        .nova-storage-identity   this storage's identity (a UUID,
                                 storage_identity.py)
        _base/<sha1 of image id> the image cache (imagecache.py)
        locks/                   lock files of the image cache
        _journal/                open spawn attempts (journal.py)
        _quarantine/<uuid>-<UTC time>
                                 instance directories moved aside instead
                                 of deleted, purged by age
        <instance uuid>/         one directory per instance:
            disk, disk.eph0, disk.swap, kernel, ramdisk,
            disk.info, libvirt.xml, console.log,
            .nova-owner          who wrote it (ownership.py)

Every path that is removed is built from a validated, canonical UUID and
checked, after resolving symlinks, to be that instance's own directory
directly under ``instances_path`` (``InvalidInstancePath`` otherwise).

Deleting is for what an operation knows to be its own: a delete of the
instance, or what a failed spawn attempt itself created. Where the decision
rests on inference (a leftover, a source's copy after an evacuation, an
audit's orphan), the directory is moved aside with ``quarantine`` instead:
a rename on the same file system, purged by age (``purge_quarantine``), so
a wrong decision costs disk space, never data.

Example::

    idir = InstanceDir(settings.instances_path, instance.uuid)
    idir.file(DISK)          # '<instances_path>/<uuid>/disk'
    idir.remove()            # the whole directory, or refuses
    idir.quarantine('leftover of an earlier attempt')
"""

import dataclasses
import datetime
import errno
import json
import os
import re
import shutil
import stat
import uuid as uuid_lib

from oslo_log import log as logging
from oslo_utils import timeutils

from nova import exception
from nova import fileio

LOG = logging.getLogger(__name__)

DISK = 'disk'
EPHEMERAL0 = 'disk.eph0'
SWAP = 'disk.swap'
KERNEL = 'kernel'
RAMDISK = 'ramdisk'
DISK_INFO = 'disk.info'
LIBVIRT_XML = 'libvirt.xml'
CONSOLE_LOG = 'console.log'

OWNER_STAMP = '.nova-owner'

BASE_DIR = '_base'
LOCKS_DIR = 'locks'
JOURNAL_DIR = '_journal'
QUARANTINE_DIR = '_quarantine'
STORAGE_IDENTITY_FILE = '.nova-storage-identity'
# Entries of instances_path that are not instance directories.
LAYOUT = (BASE_DIR, LOCKS_DIR, JOURNAL_DIR, QUARANTINE_DIR,
          STORAGE_IDENTITY_FILE)
# What a quarantined directory is named: <uuid>-<UTC time>.
_QUARANTINE_TIME = '%Y%m%dT%H%M%S%fZ'
_QUARANTINED = re.compile(
    r'^(?P<uuid>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
    r'[0-9a-f]{12})-(?P<at>\d{8}T\d{12}Z)$')
QUARANTINE_REASON = '.nova-quarantine'


def validated_uuid(value) -> str:
    """``value`` if it is a canonical UUID string; ``InvalidUUID`` if not.

    Canonical (lower case, with hyphens) so that one instance has exactly
    one directory name.
    """
    try:
        canonical = str(uuid_lib.UUID(value))
    except (TypeError, ValueError, AttributeError):
        raise exception.InvalidUUID(uuid=value)
    if canonical != value:
        raise exception.InvalidUUID(uuid=value)
    return canonical


class InstanceDir:
    """The directory of one instance on one host's storage."""

    def __init__(self, instances_path: str, instance_uuid: str):
        self.uuid = validated_uuid(instance_uuid)
        self.instances_path = os.path.abspath(instances_path)
        self.path = os.path.join(self.instances_path, self.uuid)

    def __repr__(self):
        return '<InstanceDir %s>' % self.path

    def file(self, name: str) -> str:
        if not name or os.sep in name or name in ('.', '..'):
            raise exception.InvalidInstancePath(
                path=name, instances_path=self.instances_path)
        return os.path.join(self.path, name)

    def exists(self) -> bool:
        return os.path.isdir(self.path)

    def check_inside(self) -> None:
        """Refuse a directory that resolves anywhere but to itself.

        It is one entry of ``instances_path`` named by a validated UUID,
        so it resolves to itself (wherever ``instances_path`` is mounted
        or linked from) exactly when that entry is no symbolic link: one
        ``lstat``, instead of resolving both paths component by component
        (a third of the cost of a failed spawn's cleanup on a fast host,
        which checks before each file it removes).
        """
        if os.path.islink(self.path):
            raise exception.InvalidInstancePath(
                path=self.path, instances_path=self.instances_path)

    def create(self) -> bool:
        """Make the directory; True if this call created it."""
        os.makedirs(self.instances_path, exist_ok=True)
        try:
            os.mkdir(self.path)
        except FileExistsError:
            self.check_inside()
            return False
        return True

    def remove(self) -> bool:
        """Remove the whole directory; False if it was not there."""
        if not os.path.lexists(self.path):
            return False
        self.check_inside()
        LOG.info('Removing instance directory %s', self.path,
                 instance_uuid=self.uuid)
        shutil.rmtree(self.path)
        return True

    def remove_if_empty(self) -> bool:
        """Remove the directory if it holds nothing; whether it did."""
        self.check_inside()
        try:
            os.rmdir(self.path)
        except OSError as e:
            if e.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
                return False
            raise
        return True

    def remove_file(self, name: str) -> bool:
        """Remove one entry of the directory; False if it was not there.

        A symlink is removed as a link; what it points to is untouched.
        """
        path = self.file(name)
        if not os.path.lexists(path):
            return False
        self.check_inside()
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
        return True

    def quarantine(self, reason: str,
                   now: datetime.datetime | None = None) -> str | None:
        """Move the whole directory aside, into
        ``<instances_path>/_quarantine/<uuid>-<UTC time>``; its new path,
        or None if it was not there.

        One rename on the same file system: the directory is either where
        it was or in quarantine, whole, whatever instant the process dies.
        A rename that cannot be done (another file system) raises
        ``QuarantineUnusable`` and changes nothing.
        """
        if not os.path.lexists(self.path):
            return None
        self.check_inside()
        root = _quarantine_root(self.instances_path, create=True)
        now = now or timeutils.utcnow(with_timezone=True)
        dest = os.path.join(root, '%s-%s' % (
            self.uuid, now.strftime(_QUARANTINE_TIME)))
        size = tree_size(self.path)
        try:
            os.rename(self.path, dest)
        except OSError as e:
            raise exception.QuarantineUnusable(
                path=root, reason='cannot move %s there: %s'
                                  % (self.path, e.strerror or e))
        fileio.fsync_dir(root)
        fileio.fsync_dir(self.instances_path)
        try:
            fileio.write_atomically(os.path.join(dest, QUARANTINE_REASON),
                                    json.dumps({'reason': reason,
                                                'from': self.path,
                                                'at': now.isoformat()}))
        except OSError:
            LOG.exception('Could not record why %s was quarantined', dest)
        LOG.warning('Moved instance directory %(path)s (%(size)d bytes) to '
                    '%(dest)s instead of deleting it: %(reason)s. Purged '
                    'after quarantine_max_age; "mv" it back to recover it.',
                    {'path': self.path, 'size': size, 'dest': dest,
                     'reason': reason}, instance_uuid=self.uuid)
        return dest


def base_dir(instances_path: str) -> str:
    return os.path.join(instances_path, BASE_DIR)


def locks_dir(instances_path: str) -> str:
    return os.path.join(instances_path, LOCKS_DIR)


def quarantine_dir(instances_path: str) -> str:
    return os.path.join(instances_path, QUARANTINE_DIR)


def remove_layout_file(instances_path: str, directory: str,
                       name: str) -> bool:
    """Remove the regular file ``name`` directly in ``directory`` (the
    image cache ``_base`` or the journals' ``_journal``) of
    ``instances_path``; False if it was not there.

    For the leftovers and unused base images the drivers' housekeeping
    removes (``nova/virt/stale_files.py``,
    ``nova/virt/libvirt/cache_cleanup.py``). Refused
    (``InvalidInstancePath``): any other directory, a name that is not
    one entry of it, a directory that is a symlink or resolves anywhere but
    into ``instances_path``, and an
    entry that is not a regular file (a symlink, a directory).
    """
    instances_path = os.path.abspath(instances_path)
    parent = os.path.join(instances_path, directory)

    def refuse(path):
        return exception.InvalidInstancePath(path=path,
                                             instances_path=instances_path)

    if directory not in (BASE_DIR, JOURNAL_DIR):
        raise refuse(parent)
    if not name or os.sep in name or name in ('.', '..'):
        raise refuse(os.path.join(parent, str(name)))
    # One entry of instances_path: it resolves into it unless it is a
    # link (InstanceDir.check_inside).
    if os.path.islink(parent):
        raise refuse(parent)
    path = os.path.join(parent, name)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(mode):
        raise refuse(path)
    os.unlink(path)
    return True


def tree_size(path: str) -> int:
    """Bytes used by the files under ``path`` (symlinks not followed)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


# -- quarantine ------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Quarantined:
    """One directory in ``<instances_path>/_quarantine``."""
    path: str
    instance_uuid: str
    quarantined_at: datetime.datetime
    size: int
    reason: str | None

    def age(self, now: datetime.datetime) -> float:
        return (now - self.quarantined_at).total_seconds()


def _quarantine_root(instances_path: str, create: bool) -> str:
    """The quarantine directory, refused if it is not a plain directory
    of ``instances_path`` itself."""
    root = quarantine_dir(os.path.abspath(instances_path))
    if create:
        os.makedirs(root, exist_ok=True)
    if os.path.islink(root) or (os.path.lexists(root)
                                and not os.path.isdir(root)):
        raise exception.QuarantineUnusable(
            path=root, reason='not a directory of instances_path')
    real = os.path.realpath(root)
    if os.path.dirname(real) != os.path.realpath(instances_path):
        raise exception.QuarantineUnusable(
            path=root, reason='it resolves outside instances_path')
    return root


def list_quarantine(instances_path: str
                    ) -> tuple[list[Quarantined], list[str]]:
    """(quarantined directories, other entries found there).

    ``QuarantineUnusable`` when the quarantine directory cannot be read:
    nothing can be judged then.
    """
    root = _quarantine_root(instances_path, create=False)
    try:
        names = sorted(os.listdir(root))
    except FileNotFoundError:
        return [], []
    except OSError as e:
        raise exception.QuarantineUnusable(path=root,
                                           reason=e.strerror or str(e))
    found, other = [], []
    for name in names:
        path = os.path.join(root, name)
        match = _QUARANTINED.match(name)
        if not match or os.path.islink(path) or not os.path.isdir(path):
            other.append(path)
            continue
        at = datetime.datetime.strptime(
            match.group('at'), _QUARANTINE_TIME).replace(
                tzinfo=datetime.timezone.utc)
        reason = None
        try:
            with open(os.path.join(path, QUARANTINE_REASON)) as f:
                reason = json.load(f).get('reason')
        except (OSError, ValueError, AttributeError):
            pass
        found.append(Quarantined(path, match.group('uuid'), at,
                                 tree_size(path), reason))
    return found, other


def purge_quarantine(instances_path: str, older_than: float,
                     now: datetime.datetime | None = None,
                     dry_run: bool = False) -> list[Quarantined]:
    """Delete quarantined directories older than ``older_than`` seconds;
    the ones deleted (or that would be, with ``dry_run``). Entries not
    named as this module names them are never touched."""
    if older_than is None or older_than < 0:
        raise exception.InvalidInput(
            reason='older_than must be a number of seconds >= 0, not %r'
                   % (older_than,))
    now = now or timeutils.utcnow(with_timezone=True)
    found, _other = list_quarantine(instances_path)
    purged = []
    for entry in found:
        if entry.age(now) < older_than:
            continue
        if not dry_run:
            LOG.info('Purging %(path)s (instance %(uuid)s, quarantined '
                     '%(age)d s ago, %(size)d bytes: %(reason)s)',
                     {'path': entry.path, 'uuid': entry.instance_uuid,
                      'age': entry.age(now), 'size': entry.size,
                      'reason': entry.reason or 'no reason recorded'})
            shutil.rmtree(entry.path)
        purged.append(entry)
    return purged
