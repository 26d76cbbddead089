"""Instance disk files: how they are made, and ``disk.info``.

``qcow2``: an overlay whose backing file is the cached base image (a
copy-on-write disk that starts as the image). ``raw``: a full copy of the
image, independent of the cache. Blank disks (ephemeral, swap) have the same
format and no backing file. qcow2 disks are written by ``overlays``: by
``qemu-img`` the first time, then from the bytes it wrote.

``disk.info`` maps each disk's file name in the instance directory to its
format (JSON), so a later spawn, hard reboot or evacuation knows the disks
without looking inside them. A disk's format is never probed: a guest owns
the bytes of its raw disk, and a qcow2 header it writes there, naming any
host file as backing file, would make the host open that file for it. A
disk with no recorded format is ``UnknownDiskFormat``, unless the attempt
that needs it created it (and so knows).

Names, not absolute paths: shared storage may be mounted at another path
on another host. Entries written by absolute path (older releases) are
read by their file name when they are in this instance's directory, and
written back by name at the next write.

Example::

    create_root_disk(path, 'qcow2', cached_base, size=10 * GiB)
    write_disk_info(idir.file('disk.info'), {'disk': 'qcow2'})
"""

import dataclasses
import json
import os

from oslo_log import log as logging

from nova import exception
from nova import fileio
from nova.image import qemu_img
from nova.virt.libvirt import imagecache
from nova.virt.libvirt import overlays

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
        overlays.create(path, 'qcow2', size=grow_to,
                        backing=overlays.Backing(base.path, base.format,
                                                 base.virtual_size))
        return
    qemu_img.convert(base.path, base.format, path, 'raw')
    if grow_to is not None:
        qemu_img.resize(path, 'raw', grow_to)


def create_blank_disk(path: str, images_type: str, size: int) -> None:
    _check_format(images_type)
    overlays.create(path, images_type, size=size)


@dataclasses.dataclass(frozen=True)
class DiskInfo:
    """What ``disk.info`` says: {file name: format}, and whether it was
    written in the old form (absolute paths) and wants rewriting."""
    formats: dict[str, str]
    legacy: bool = False


def read_disk_info(path: str) -> DiskInfo:
    """The ``disk.info`` at ``path``; empty if there is none.

    ``InternalError`` when it is not a JSON object of strings.
    """
    try:
        with open(path) as f:
            values = json.load(f)
    except FileNotFoundError:
        return DiskInfo({})
    except (ValueError, UnicodeDecodeError) as e:
        raise exception.InternalError(err='%s is corrupt: %s' % (path, e))
    if not isinstance(values, dict) or not all(
            isinstance(k, str) and isinstance(v, str)
            for k, v in values.items()):
        raise exception.InternalError(
            err='%s is corrupt: not an object of names to formats' % path)
    own_dir = os.path.basename(os.path.dirname(os.path.abspath(path)))
    formats, legacy = {}, False
    for key, fmt in values.items():
        if os.sep not in key:
            formats[key] = fmt
            continue
        legacy = True
        parent, name = os.path.split(os.path.normpath(key))
        if os.path.basename(parent) == own_dir and name:
            formats.setdefault(name, fmt)
        else:
            LOG.warning('%s names %s, which is not in its own instance '
                        'directory; ignored', path, key)
    return DiskInfo(formats, legacy)


def write_disk_info(path: str, formats: dict[str, str],
                    journal=None) -> None:
    """Write ``disk.info`` atomically (temporary name, then rename);
    through the spawn ``journal`` when one is writing the directory."""
    content = json.dumps(formats, indent=2, sort_keys=True)
    if journal is not None:
        journal.write_file(os.path.basename(path), content)
    else:
        fileio.write_atomically(path, content)


def existing_format(path: str, disk_info: DiskInfo) -> str:
    """The recorded format of the existing disk at ``path``; never probed.

    ``UnknownDiskFormat`` when ``disk.info`` does not list it, or lists a
    format this host does not use.
    """
    name = os.path.basename(path)
    fmt = disk_info.formats.get(name)
    if fmt is None:
        raise exception.UnknownDiskFormat(
            path=path, reason='disk.info does not list %s' % name)
    if fmt not in FORMATS:
        raise exception.UnknownDiskFormat(
            path=path, reason='disk.info says %r, not one of %s'
                              % (fmt, ', '.join(FORMATS)))
    return fmt


def backing_file(path: str, fmt: str) -> str | None:
    if fmt != 'qcow2':
        return None
    return qemu_img.info(path, expected_format=fmt).backing_file
