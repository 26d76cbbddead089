"""Paths under ``instances_path``, and the only code that deletes there.

Layout (Nova's)::

    <instances_path>/
        .nova-storage-identity   this storage's identity (a UUID)
        _base/<sha1 of image id> the image cache (imagecache.py)
        locks/                   lock files of the image cache
        <instance uuid>/         one directory per instance:
            disk, disk.eph0, disk.swap, kernel, ramdisk,
            disk.info, libvirt.xml, console.log

Every path that is removed is built from a validated, canonical UUID and
checked, after resolving symlinks, to be that instance's own directory
directly under ``instances_path`` (``InvalidInstancePath`` otherwise).

Example::

    idir = InstanceDir(settings.instances_path, instance.uuid)
    idir.file(DISK)          # '<instances_path>/<uuid>/disk'
    idir.remove()            # the whole directory, or refuses
"""

import os
import shutil
import uuid as uuid_lib

from oslo_log import log as logging
from oslo_utils import fileutils
from oslo_utils import uuidutils

from nova import exception

LOG = logging.getLogger(__name__)

DISK = 'disk'
EPHEMERAL0 = 'disk.eph0'
SWAP = 'disk.swap'
KERNEL = 'kernel'
RAMDISK = 'ramdisk'
DISK_INFO = 'disk.info'
LIBVIRT_XML = 'libvirt.xml'
CONSOLE_LOG = 'console.log'

BASE_DIR = '_base'
LOCKS_DIR = 'locks'
STORAGE_IDENTITY_FILE = '.nova-storage-identity'


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
        """Refuse a directory that resolves anywhere but to itself."""
        real_root = os.path.realpath(self.instances_path)
        real = os.path.realpath(self.path)
        if real != os.path.join(real_root, self.uuid):
            raise exception.InvalidInstancePath(
                path=self.path, instances_path=self.instances_path)

    def create(self) -> bool:
        """Make the directory; True if this call created it."""
        fileutils.ensure_tree(self.instances_path)
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


def write_atomically(path: str, content: str | bytes,
                     purpose: str = 'part') -> None:
    """Replace ``path`` with ``content`` so a reader sees the old file or
    the whole new one, never a part (disk.info, libvirt.xml).

    Written under a name of its own first (``<path>.<purpose>-<uuid>``, so
    a file that is there is never truncated, and a leftover says what
    wrote it), flushed to disk, then renamed over ``path``.
    """
    tmp = '%s.%s-%s' % (path, purpose, uuidutils.generate_uuid())
    mode = 'xb' if isinstance(content, bytes) else 'x'
    try:
        with open(tmp, mode) as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        fileutils.delete_if_exists(tmp)


def base_dir(instances_path: str) -> str:
    return os.path.join(instances_path, BASE_DIR)


def locks_dir(instances_path: str) -> str:
    return os.path.join(instances_path, LOCKS_DIR)


def storage_identity(instances_path: str) -> str:
    """The UUID in the marker file at the root of ``instances_path``.

    The first caller creates it. The marker appears atomically and complete
    (written under a temporary name, then hard-linked into place, which
    fails rather than overwrites if another host won the race), so two
    hosts that mount the same directory always read the same identity.
    """
    fileutils.ensure_tree(instances_path)
    marker = os.path.join(instances_path, STORAGE_IDENTITY_FILE)
    if not os.path.exists(marker):
        tmp = '%s.part-%s' % (marker, uuidutils.generate_uuid())
        try:
            with open(tmp, 'x') as f:
                f.write(uuidutils.generate_uuid() + '\n')
                f.flush()
                os.fsync(f.fileno())
            os.link(tmp, marker)
        except FileExistsError:
            pass  # another host or thread created it first
        finally:
            fileutils.delete_if_exists(tmp)
    with open(marker) as f:
        identity = f.read().strip()
    try:
        return validated_uuid(identity)
    except exception.InvalidUUID:
        raise exception.InvalidSharedStorage(
            reason='storage identity marker %s holds %r, not a UUID'
                   % (marker, identity))
