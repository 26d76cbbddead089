"""Instance disk files: how they are made, and ``disk.info``.

``qcow2``: an overlay whose backing file is the cached base image (a
copy-on-write disk that starts as the image). ``raw``: a full copy of the
image, independent of the cache. Blank disks (ephemeral, swap) have the same
format and no backing file.

``disk.info`` maps each disk's absolute path to its format (JSON), so a
later hard reboot knows the disks without probing them (probing a raw disk
a guest wrote a qcow2 header into would be a security hole).

Example::

    create_root_disk(path, 'qcow2', cached_base, size=10 * GiB)
    write_disk_info(idir.file('disk.info'), {path: 'qcow2'})
"""

import json

from oslo_log import log as logging

from nova import exception
from nova.image import qemu_img
from nova.virt import instancedir
from nova.virt.libvirt import imagecache

LOG = logging.getLogger(__name__)

FORMATS = ('qcow2', 'raw')


def _check_format(images_type: str) -> None:
    if images_type not in FORMATS:
        raise exception.InvalidConfiguration(
            reason='images_type %r is not one of %s'
                   % (images_type, ', '.join(FORMATS)))


def create_root_disk(path: str, images_type: str,
                     base: imagecache.CachedImage,
                     size: int | None) -> None:
    """Make the root disk from a cached base image.

    ``size`` None keeps the image's size; a larger one grows the disk; a
    smaller one is refused before anything is written.
    """
    _check_format(images_type)
    if size is not None and size < base.virtual_size:
        raise exception.FlavorDiskSmallerThanImage(
            flavor_size=size, image_size=base.virtual_size,
            image_id=base.image_id)
    grow_to = size if size is not None and size > base.virtual_size else None
    if images_type == 'qcow2':
        qemu_img.create(path, 'qcow2', size=grow_to,
                        backing_file=base.path, backing_format=base.format)
        return
    qemu_img.convert(base.path, base.format, path, 'raw')
    if grow_to is not None:
        qemu_img.resize(path, 'raw', grow_to)


def create_blank_disk(path: str, images_type: str, size: int) -> None:
    _check_format(images_type)
    qemu_img.create(path, images_type, size=size)


def read_disk_info(path: str) -> dict[str, str]:
    """``{disk path: format}``; empty if there is no ``disk.info``."""
    try:
        with open(path) as f:
            values = json.load(f)
    except FileNotFoundError:
        return {}
    except ValueError as e:
        raise exception.InternalError(err='%s is corrupt: %s' % (path, e))
    return {str(k): str(v) for k, v in values.items()}


def write_disk_info(path: str, disks: dict[str, str]) -> None:
    """Write ``disk.info`` atomically (temporary name, then rename)."""
    instancedir.write_atomically(
        path, json.dumps(disks, indent=2, sort_keys=True))


def existing_format(path: str, disk_info: dict[str, str]) -> str:
    """Format of a disk that already exists: disk.info, else qemu-img."""
    if path in disk_info:
        return disk_info[path]
    LOG.warning('Disk %s is not in disk.info; probing its format', path)
    return qemu_img.detect_format(path)


def backing_file(path: str, fmt: str) -> str | None:
    if fmt != 'qcow2':
        return None
    return qemu_img.info(path, expected_format=fmt).backing_file
