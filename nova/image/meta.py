"""What the rest of the system knows about an image.

An ``ImageMeta`` is the metadata of one image, of the local store or of
Glance's record. It
crosses the RPC boundary (``to_dict``/``from_dict``) and is what the
compute manager hands to ``driver.spawn``.

Example::

    meta = ImageMeta(id=uuidutils.generate_uuid(), name='cirros',
                     disk_format='qcow2')
"""

import dataclasses
import datetime
from typing import Callable

from oslo_utils import uuidutils

from nova import exception

# Formats a root disk can be made from.
DISK_FORMATS = ('qcow2', 'raw')
# Glance's names for a kernel and a ramdisk image (cirros-*-uec images boot
# with an external kernel and initrd); neither is a bootable disk.
KERNEL_FORMAT = 'aki'
RAMDISK_FORMAT = 'ari'
ALL_FORMATS = DISK_FORMATS + (KERNEL_FORMAT, RAMDISK_FORMAT)


@dataclasses.dataclass(frozen=True)
class ImageMeta:
    id: str
    name: str
    disk_format: str
    kernel_id: str | None = None
    ramdisk_id: str | None = None
    # Bytes of the data file, and its digest as hex by ``checksum_algo``
    # (a hashlib name: the local store's SHA-256, or Glance's
    # ``os_hash_algo``, SHA-512 by default).
    size: int = 0
    checksum: str = ''
    checksum_algo: str = 'sha256'
    # Kernel command line for images booted with a kernel; None means the
    # driver's default.
    os_command_line: str | None = None
    # When the image entered the store, UTC, as 2012-08-20T21:11:09Z (an
    # image is never changed after: it is also when it was last updated).
    created_at: str | None = None
    # The least memory (MiB) and root disk (GiB) the image needs (Glance's
    # min_ram and min_disk; 0: no minimum).
    min_ram: int = 0
    min_disk: int = 0
    # Glance's status. A local store's image is 'active' once added; a
    # snapshot's is 'queued' from the API's request until its host has
    # uploaded the data ('saving' while it does).
    status: str = 'active'
    # Glance's properties (a snapshot's ``image_type``, ``instance_uuid``,
    # the user's metadata...), strings by strings.
    properties: dict = dataclasses.field(default_factory=dict, hash=False)

    def __post_init__(self):
        if not uuidutils.is_uuid_like(self.id):
            raise exception.InvalidUUID(uuid=self.id)
        if self.disk_format not in ALL_FORMATS:
            raise exception.ImageUnacceptable(
                image_id=self.id,
                reason='disk_format %r is not one of %s'
                       % (self.disk_format, ', '.join(ALL_FORMATS)))
        for other in (self.kernel_id, self.ramdisk_id):
            if other is not None and not uuidutils.is_uuid_like(other):
                raise exception.InvalidUUID(uuid=other)

    @staticmethod
    def timestamp(value: datetime.datetime) -> str:
        """``created_at`` for a moment (aware, or naive in UTC)."""
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc)
        return value.strftime('%Y-%m-%dT%H:%M:%SZ')

    @property
    def is_bootable_disk(self) -> bool:
        return self.disk_format in DISK_FORMATS

    @property
    def boots_with_kernel(self) -> bool:
        return self.kernel_id is not None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> 'ImageMeta':
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


def find(name_or_id: str, get: Callable[[str], ImageMeta],
         named: Callable[[str], list[ImageMeta]]) -> ImageMeta:
    """An image by id (``get``), or by name when ``named`` gives exactly
    one image of that name (what ``openstack server create --image``
    accepts); ``ImageNotFound`` otherwise."""
    if uuidutils.is_uuid_like(name_or_id):
        try:
            return get(name_or_id)
        except exception.ImageNotFound:
            pass
    matches = named(name_or_id)
    if len(matches) != 1:
        raise exception.ImageNotFound(image_id=name_or_id)
    return matches[0]
