"""The image cache: ``<instances_path>/_base/<sha1 of the image id>``.

Base images are shared by every instance made from them (qcow2 overlays
point at them) and are never removed by instance cleanup.

A fetch holds an external lock per image (``<instances_path>/locks``), so
two spawns on this host, or on two hosts sharing the storage, do not
download the same image at once; it writes to a temporary name
(``<hash>.part-<uuid>``) and renames, so a half-written base file never has
the final name.

Each fetch also touches the base file (its mtime is "last used"), under
the same lock. The driver's housekeeping (``cache_cleanup.py``, which the
orphan reaper runs through ``manage_image_cache``) ages out a
base image no instance disk uses once it is old enough, and removes the
temporary file of a fetch that died: both only while it holds the image's
lock, taken without waiting, and only after reading the file's age again
under it (``remove_if_older``). A spawn that fetched the image a moment
ago has made it young, so a base image a spawn in progress uses is never
removed.

Example::

    cache = ImageCache(settings.instances_path)
    base = cache.fetch(store, image_meta)   # CachedImage(path, format, ...)
    bases, other = cache.entries()          # what _base holds now
    cache.remove_if_older(bases[0].name, time.time() - 86400)
"""

import contextlib
import dataclasses
import datetime
import hashlib
import os
import re

from oslo_concurrency import lockutils
from oslo_log import log as logging

from nova import exception
from nova import fileio
from nova.image import meta as image_meta_mod
from nova.image import qemu_img
from nova.virt import instancedir

LOG = logging.getLogger(__name__)

_CHUNK = 1024 * 1024
_UUID = r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
# What the cache names its files: the base image, and a fetch's temporary.
_BASE_NAME = re.compile(r'^(?P<hash>[0-9a-f]{40})$')
_FETCH_PART = re.compile(r'^(?P<hash>[0-9a-f]{40})\.part-(?P<id>%s)$'
                         % _UUID)


@dataclasses.dataclass(frozen=True)
class CachedImage:
    image_id: str
    path: str
    format: str
    virtual_size: int


def image_hash(image_id: str) -> str:
    return hashlib.sha1(image_id.encode('utf-8')).hexdigest()


def lock_name(hash_: str) -> str:
    """The external lock of one image of the cache."""
    return 'image-cache-' + hash_


@dataclasses.dataclass(frozen=True)
class CacheEntry:
    """A file of ``_base`` named as the cache names its files."""
    name: str
    path: str
    image_hash: str
    mtime: float
    # A fetch's temporary file (``<hash>.part-<uuid>``), not a base image.
    part: bool


def _digest(path: str, algo: str) -> str:
    try:
        digest = hashlib.new(algo)
    except ValueError:
        raise exception.ImageUnacceptable(
            image_id=os.path.basename(path),
            reason='unknown checksum algorithm %r' % algo)
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(_CHUNK), b''):
            digest.update(chunk)
    return digest.hexdigest()


class ImageCache:
    def __init__(self, instances_path: str):
        self.instances_path = instances_path
        self.base_dir = instancedir.base_dir(instances_path)
        self.lock_path = instancedir.locks_dir(instances_path)
        # A base file never changes once it has its final name, so what
        # qemu-img said about it stays true (saves a qemu-img per spawn).
        self._described: dict[str, CachedImage] = {}

    def path_for(self, image_id: str) -> str:
        return os.path.join(self.base_dir, image_hash(image_id))

    def fetch(self, store, meta: image_meta_mod.ImageMeta) -> CachedImage:
        """The cached copy of an image, copied from ``store`` if missing.

        Raises ``ImageNotFound`` when the store lacks the data and
        ``ImageUnacceptable`` when the data is not what the metadata says.
        Nothing is left behind by a failed fetch.
        """
        path = self.path_for(meta.id)
        fetched = None
        with lockutils.lock(lock_name(image_hash(meta.id)),
                            external=True, lock_path=self.lock_path):
            if not os.path.exists(path):
                fetched = self._fetch_locked(store, meta, path)
            # Used now: young again, so the reaper does not age it out
            # while the spawn that asked for it makes its disks.
            os.utime(path)
        if fetched is not None:
            # What the fetch's check read is what the file is: no second
            # qemu-img for it (a fork of the service; on a host that
            # receives its first evacuations, one per image).
            self._described[path] = fetched
            return fetched
        return self._describe(meta, path)

    def _fetch_locked(self, store, meta, path) -> CachedImage:
        os.makedirs(self.base_dir, exist_ok=True)
        with fileio.temporary_beside(path) as tmp:
            store.copy_data(meta.id, tmp)
            # Verified under the temporary name: a base file with its
            # final name is always the image the metadata describes.
            if meta.checksum and (_digest(tmp, meta.checksum_algo)
                                  != meta.checksum):
                raise exception.ImageUnacceptable(
                    image_id=meta.id, reason='checksum mismatch')
            found = self._check_format(meta, tmp)
            os.chmod(tmp, 0o644)
            os.rename(tmp, path)
        LOG.info('Cached image %(id)s as %(path)s',
                 {'id': meta.id, 'path': path})
        return _cached_image(meta, path, found)

    @staticmethod
    def _check_format(meta, path) -> qemu_img.ImageInfo | None:
        """What qemu-img says of a bootable disk image, after checking
        that it is what its metadata says; None for the opaque files
        (kernels, ramdisks)."""
        if not meta.is_bootable_disk:
            return None
        found = qemu_img.info(path)
        if found.format != meta.disk_format:
            raise exception.ImageUnacceptable(
                image_id=meta.id, reason='metadata says %s, data is %s'
                                         % (meta.disk_format, found.format))
        if found.backing_file:
            # An image must not point the host at another file.
            raise exception.ImageUnacceptable(
                image_id=meta.id, reason='image has a backing file')
        return found

    def _describe(self, meta, path) -> CachedImage:
        cached = self._described.get(path)
        if cached is not None and os.path.exists(path):
            return cached
        found = None
        if meta.is_bootable_disk:
            found = qemu_img.info(path, expected_format=meta.disk_format)
        cached = self._described[path] = _cached_image(meta, path, found)
        return cached

    # -- what cache_cleanup uses ----------------------------------------

    def entries(self) -> tuple[list[CacheEntry], list[str]]:
        """(base images and fetch leftovers, paths of the other entries)
        of ``_base`` as it is now. Entries the cache does not name so
        (other names, symlinks, directories) are never removed."""
        found: list[CacheEntry] = []
        other: list[str] = []
        try:
            scanned = sorted(os.scandir(self.base_dir), key=lambda e: e.name)
        except FileNotFoundError:
            return found, other
        for entry in scanned:
            match = (_BASE_NAME.match(entry.name)
                     or _FETCH_PART.match(entry.name))
            if match is None or not entry.is_file(follow_symlinks=False):
                other.append(entry.path)
                continue
            try:
                mtime = entry.stat(follow_symlinks=False).st_mtime
            except FileNotFoundError:
                continue
            found.append(CacheEntry(entry.name, entry.path,
                                    match.group('hash'), mtime,
                                    part='id' in match.groupdict()))
        return found, other

    @contextlib.contextmanager
    def lock_if_free(self, hash_: str):
        """Hold the image's lock if no fetch (of any host sharing the
        storage) does; yield whether it is held. Never waits."""
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(lockutils.lock(
                    lock_name(hash_), external=True,
                    lock_path=self.lock_path, blocking=False))
                held = True
            except lockutils.AcquireLockFailedException:
                held = False
            yield held

    def lock_is_free(self, hash_: str) -> bool:
        """Whether no fetch holds the image's lock now; creates nothing
        (no lock file means no fetch ever took it)."""
        if not os.path.exists(os.path.join(self.lock_path,
                                           lock_name(hash_))):
            return True
        with self.lock_if_free(hash_) as held:
            return held

    def remove_if_older(self, name: str, older_than: float,
                        dry_run: bool = False) -> tuple[bool, str]:
        """Remove the base image or fetch leftover ``name`` of ``_base``
        if it was last modified before ``older_than`` (a ``time.time()``
        value), under its image's lock taken without waiting, its age read
        again under the lock. (True, what was done) when removed (or, with
        ``dry_run``, when it would be); (False, why not) otherwise.

        The caller decides that nothing else needs it (no instance disk
        uses a base image; no fetch wrote the leftover recently).
        """
        match = _BASE_NAME.match(name) or _FETCH_PART.match(name)
        if match is None:
            return False, 'not a file the image cache names'
        hash_ = match.group('hash')
        if dry_run:
            if not self.lock_is_free(hash_):
                return False, 'a fetch of the image holds its lock'
            return self._older(name, older_than)
        with self.lock_if_free(hash_) as held:
            if not held:
                return False, 'a fetch of the image holds its lock'
            old, why = self._older(name, older_than)
            if not old:
                return False, why
            if not instancedir.remove_layout_file(
                    self.instances_path, instancedir.BASE_DIR, name):
                return False, 'gone already'
        self._described.pop(os.path.join(self.base_dir, name), None)
        LOG.info('Removed %(path)s from the image cache (%(why)s)',
                 {'path': os.path.join(self.base_dir, name), 'why': why})
        return True, why

    def _older(self, name, older_than):
        try:
            st = os.lstat(os.path.join(self.base_dir, name))
        except FileNotFoundError:
            return False, 'gone already'
        if st.st_mtime >= older_than:
            return False, 'used or written since %s' % _when(st.st_mtime)
        return True, 'last used or written %s' % _when(st.st_mtime)


def _cached_image(meta, path: str,
                  found: qemu_img.ImageInfo | None) -> CachedImage:
    """The cache's description of the base file ``path``: from qemu-img's
    ``found`` for a disk image, as an opaque raw file otherwise."""
    if found is None:
        return CachedImage(meta.id, path, 'raw', os.path.getsize(path))
    return CachedImage(meta.id, path, found.format, found.virtual_size)


def _when(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(
        timestamp, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
