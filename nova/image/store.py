"""The local image store: one data file and one metadata file per image.

Layout under the store directory (``HostSettings.image_store_path``)::

    <id>.img     the image data
    <id>.json    its metadata: an ``ImageMeta`` as JSON

An image becomes visible only when its metadata file exists, and that file
is written last (temporary name, then rename), so a reader never sees half
an image.

Example::

    store = ImageStore(settings.image_store_path)
    meta = store.add_from_file('/tmp/cirros.qcow2', name='cirros')
    store.get(meta.id).disk_format     # 'qcow2', detected by qemu-img
"""

import builtins
import contextlib
import dataclasses
import datetime
import hashlib
import json
import os
import shutil
import uuid

from oslo_log import log as logging
from oslo_utils import uuidutils

from nova import exception
from nova import fileio
from nova.image import meta as image_meta
from nova.image import qemu_img

LOG = logging.getLogger(__name__)

DATA_SUFFIX = '.img'
META_SUFFIX = '.json'
_CHUNK = 1024 * 1024


def _checked_id(image_id: str) -> str:
    # Image ids become file names: only a canonical UUID may.
    try:
        canonical = str(uuid.UUID(image_id))
    except (TypeError, ValueError, AttributeError):
        raise exception.ImageNotFound(image_id=image_id)
    if canonical != image_id.lower():
        raise exception.ImageNotFound(image_id=image_id)
    return canonical


def _copy_with_checksum(source: str, dest: str) -> str:
    digest = hashlib.sha256()
    with open(source, 'rb') as src, open(dest, 'xb') as dst:
        while True:
            chunk = src.read(_CHUNK)
            if not chunk:
                break
            digest.update(chunk)
            dst.write(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    return digest.hexdigest()


class ImageStore:
    """The images of one host (or of several, if they share the path)."""

    def __init__(self, path: str):
        if not path:
            raise exception.InvalidConfiguration(
                reason='the image store path is empty')
        self.path = os.path.abspath(path)

    @classmethod
    def from_settings(cls, settings) -> 'ImageStore':
        return cls(settings.image_store_path)

    def data_path(self, image_id: str) -> str:
        return os.path.join(self.path, _checked_id(image_id) + DATA_SUFFIX)

    def _meta_path(self, image_id: str) -> str:
        return os.path.join(self.path, _checked_id(image_id) + META_SUFFIX)

    def get(self, image_id: str) -> image_meta.ImageMeta:
        """The metadata of an image; ``ImageNotFound`` if there is none."""
        try:
            with open(self._meta_path(image_id)) as f:
                values = json.load(f)
                if not values.get('created_at'):
                    # Recorded before the store kept the time: the
                    # metadata file is written once, when the image is
                    # added.
                    values['created_at'] = image_meta.ImageMeta.timestamp(
                        datetime.datetime.fromtimestamp(
                            os.fstat(f.fileno()).st_mtime,
                            datetime.timezone.utc))
        except FileNotFoundError:
            raise exception.ImageNotFound(image_id=image_id)
        return image_meta.ImageMeta.from_dict(values)

    def find(self, name_or_id: str) -> image_meta.ImageMeta:
        """An image by id, or by name when the name is unique."""
        return image_meta.find(
            name_or_id, self.get,
            lambda name: [m for m in self.list() if m.name == name])

    def list(self) -> list[image_meta.ImageMeta]:
        if not os.path.isdir(self.path):
            return []
        images = []
        for entry in sorted(os.listdir(self.path)):
            stem, suffix = os.path.splitext(entry)
            if suffix == META_SUFFIX and uuidutils.is_uuid_like(stem):
                try:
                    images.append(self.get(stem))
                except exception.ImageNotFound:
                    continue  # deleted while we listed
        return images

    def add_from_file(self, source: str, name: str,
                      disk_format: str | None = None,
                      kernel_id: str | None = None,
                      ramdisk_id: str | None = None,
                      image_id: str | None = None,
                      os_command_line: str | None = None,
                      ) -> image_meta.ImageMeta:
        """Copy ``source`` into the store and record its metadata.

        ``disk_format`` is detected with qemu-img when omitted; a stated
        qcow2 or raw format must match what qemu-img sees. ``kernel_id``
        and ``ramdisk_id`` must name images already in the store.
        """
        image_id = _checked_id(image_id or uuidutils.generate_uuid())
        if os.path.exists(self._meta_path(image_id)):
            raise exception.InvalidInput(
                reason='image %s already exists' % image_id)
        if disk_format is None:
            disk_format = qemu_img.detect_format(source)
        if disk_format in image_meta.DISK_FORMATS:
            found = qemu_img.detect_format(source)
            if found != disk_format:
                raise exception.ImageUnacceptable(
                    image_id=image_id,
                    reason='stated format %s, file is %s'
                           % (disk_format, found))
        self._check_companion(kernel_id, image_meta.KERNEL_FORMAT)
        self._check_companion(ramdisk_id, image_meta.RAMDISK_FORMAT)
        os.makedirs(self.path, exist_ok=True)
        data_path = self.data_path(image_id)
        with fileio.temporary_beside(data_path) as tmp:
            checksum = _copy_with_checksum(source, tmp)
            os.replace(tmp, data_path)
        meta = image_meta.ImageMeta(
            id=image_id, name=name, disk_format=disk_format,
            kernel_id=kernel_id, ramdisk_id=ramdisk_id,
            size=os.path.getsize(data_path), checksum=checksum,
            os_command_line=os_command_line,
            created_at=image_meta.ImageMeta.timestamp(
                datetime.datetime.now(datetime.timezone.utc)))
        fileio.write_atomically(self._meta_path(image_id),
                                json.dumps(meta.to_dict(), indent=2,
                                           sort_keys=True))
        LOG.info('Added image %(id)s (%(name)s, %(fmt)s) to %(store)s',
                 {'id': image_id, 'name': name, 'fmt': disk_format,
                  'store': self.path})
        return meta

    def _check_companion(self, image_id, expected_format):
        if image_id is None:
            return
        found = self.get(image_id)
        if found.disk_format != expected_format:
            raise exception.ImageUnacceptable(
                image_id=image_id,
                reason='expected a %s image, found %s'
                       % (expected_format, found.disk_format))

    # -- snapshots: queued by the API, uploaded by a compute host ----------

    def _write_meta(self, meta: image_meta.ImageMeta) -> None:
        fileio.write_atomically(self._meta_path(meta.id),
                                json.dumps(meta.to_dict(), indent=2,
                                           sort_keys=True))

    def create_queued(self, new, token: str | None = None) -> str:
        """Record ``new`` (a ``new_image.NewImage``) as a queued image
        with no data yet, owned by ``new.owner`` (the server's project:
        rotation deletes only that project's backups); its id. ``token``
        is Glance's concern."""
        os.makedirs(self.path, exist_ok=True)
        meta = image_meta.ImageMeta(
            id=uuidutils.generate_uuid(), name=new.name,
            disk_format=new.disk_format, min_ram=new.min_ram,
            min_disk=new.min_disk, status='queued', owner=new.owner,
            properties=dict(new.properties),
            created_at=image_meta.ImageMeta.timestamp(
                datetime.datetime.now(datetime.timezone.utc)))
        self._write_meta(meta)
        return meta.id

    def upload(self, image_id: str, source: str) -> None:
        """Give a queued image its data (a copy of ``source``, which
        must be in the image's disk format); it becomes active.
        ``ImageNotFound`` when the image was deleted meanwhile: nothing
        of it is left then."""
        meta = self.get(image_id)
        if meta.status not in ('queued', 'saving'):
            raise exception.ImageUnacceptable(
                image_id=image_id,
                reason='image is %s, not queued' % meta.status)
        found = qemu_img.detect_format(source)
        if found != meta.disk_format:
            raise exception.ImageUnacceptable(
                image_id=image_id, reason='data is %s, image is %s'
                                          % (found, meta.disk_format))
        self._write_meta(dataclasses.replace(meta, status='saving'))
        data_path = self.data_path(image_id)
        with fileio.temporary_beside(data_path) as tmp:
            checksum = _copy_with_checksum(source, tmp)
            # A delete during the copy removed the metadata: the data
            # must not appear under its name then.
            if not os.path.exists(self._meta_path(image_id)):
                raise exception.ImageNotFound(image_id=image_id)
            os.replace(tmp, data_path)
        self._write_meta(dataclasses.replace(
            meta, status='active', size=os.path.getsize(data_path),
            checksum=checksum, checksum_algo='sha256'))
        LOG.info('Uploaded the data of image %(id)s to %(store)s',
                 {'id': image_id, 'store': self.path})

    def find_by_properties(self, properties: dict, owner: str
                           ) -> builtins.list[image_meta.ImageMeta]:
        """The images of project ``owner`` whose properties include all
        of ``properties`` (never one an operator added: no project owns
        those)."""
        return [m for m in self.list()
                if m.owner == owner
                and all(m.properties.get(k) == v
                        for k, v in properties.items())]

    def discard(self, image_id: str) -> None:
        """Delete an image that may be gone already."""
        try:
            self.delete(image_id)
        except exception.ImageNotFound:
            pass

    def delete(self, image_id: str) -> None:
        """Remove an image; metadata first, so it vanishes at once."""
        meta_path = self._meta_path(image_id)
        if not os.path.exists(meta_path):
            raise exception.ImageNotFound(image_id=image_id)
        os.unlink(meta_path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.data_path(image_id))

    def copy_data(self, image_id: str, dest: str) -> None:
        """Copy an image's data to ``dest`` (which must not exist)."""
        source = self.data_path(image_id)
        if not os.path.exists(source):
            raise exception.ImageNotFound(image_id=image_id)
        if self.get(image_id).status != 'active':
            # A snapshot still being uploaded: no disk is made from it.
            raise exception.ImageUnacceptable(
                image_id=image_id, reason='image is not active yet')
        with open(source, 'rb') as src, open(dest, 'xb') as dst:
            shutil.copyfileobj(src, dst, _CHUNK)
            dst.flush()
            os.fsync(dst.fileno())
