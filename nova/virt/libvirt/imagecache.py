"""The image cache: ``<instances_path>/_base/<sha1 of the image id>``.

Base images are shared by every instance made from them (qcow2 overlays
point at them) and are never removed by instance cleanup.

A fetch holds an external lock per image (``<instances_path>/locks``), so
two spawns on this host, or on two hosts sharing the storage, do not
download the same image at once; it writes to a temporary name and renames,
so a half-written base file never has the final name.

Example::

    cache = ImageCache(settings.instances_path)
    base = cache.fetch(store, image_meta)   # CachedImage(path, format, ...)
"""

import dataclasses
import hashlib
import os

from oslo_concurrency import lockutils
from oslo_log import log as logging
from oslo_utils import fileutils
from oslo_utils import uuidutils

from nova import exception
from nova.image import meta as image_meta_mod
from nova.image import qemu_img
from nova.virt import instancedir

LOG = logging.getLogger(__name__)

_CHUNK = 1024 * 1024


@dataclasses.dataclass(frozen=True)
class CachedImage:
    image_id: str
    path: str
    format: str
    virtual_size: int


def image_hash(image_id: str) -> str:
    return hashlib.sha1(image_id.encode('utf-8')).hexdigest()


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
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
        self._described = {}

    def path_for(self, image_id: str) -> str:
        return os.path.join(self.base_dir, image_hash(image_id))

    def fetch(self, store, meta: image_meta_mod.ImageMeta) -> CachedImage:
        """The cached copy of an image, copied from ``store`` if missing.

        Raises ``ImageNotFound`` when the store lacks the data and
        ``ImageUnacceptable`` when the data is not what the metadata says.
        Nothing is left behind by a failed fetch.
        """
        path = self.path_for(meta.id)
        with lockutils.lock('image-cache-' + image_hash(meta.id),
                            external=True, lock_path=self.lock_path):
            if not os.path.exists(path):
                self._fetch_locked(store, meta, path)
        return self._describe(meta, path)

    def _fetch_locked(self, store, meta, path):
        fileutils.ensure_tree(self.base_dir)
        tmp = '%s.part-%s' % (path, uuidutils.generate_uuid())
        try:
            store.copy_data(meta.id, tmp)
            if meta.checksum and _sha256(tmp) != meta.checksum:
                raise exception.ImageUnacceptable(
                    image_id=meta.id, reason='checksum mismatch')
            self._check_format(meta, tmp)
            os.chmod(tmp, 0o644)
            os.rename(tmp, path)
        finally:
            fileutils.delete_if_exists(tmp)
        LOG.info('Cached image %(id)s as %(path)s',
                 {'id': meta.id, 'path': path})

    @staticmethod
    def _check_format(meta, path):
        if not meta.is_bootable_disk:
            return  # kernels and ramdisks are opaque files
        found = qemu_img.info(path)
        if found.format != meta.disk_format:
            raise exception.ImageUnacceptable(
                image_id=meta.id, reason='metadata says %s, data is %s'
                                         % (meta.disk_format, found.format))
        if found.backing_file:
            # An image must not point the host at another file.
            raise exception.ImageUnacceptable(
                image_id=meta.id, reason='image has a backing file')

    def _describe(self, meta, path) -> CachedImage:
        cached = self._described.get(path)
        if cached is not None and os.path.exists(path):
            return cached
        if not meta.is_bootable_disk:
            cached = CachedImage(meta.id, path, 'raw', os.path.getsize(path))
        else:
            found = qemu_img.info(path, expected_format=meta.disk_format)
            cached = CachedImage(meta.id, path, found.format,
                                 found.virtual_size)
        self._described[path] = cached
        return cached
