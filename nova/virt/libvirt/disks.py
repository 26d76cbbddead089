"""The disks and boot files of one instance, in its directory.

``create_for_spawn`` makes what is missing (root disk from the cached
image, ephemeral and swap disks, kernel and ramdisk copies, ``disk.info``,
an empty ``console.log``), noting each thing it creates in the
``SpawnRecord`` before creating it (and saving a ``disk.info`` it rewrites),
and reuses what is already there (an evacuation onto shared storage). With
no image (``image_meta`` None: it was deleted) it can only reuse: the root
disk must be there, and the kernel and ramdisk files are used if they are.
``load_existing`` finds them again for a
hard reboot and never creates a disk: a missing disk is ``DiskNotFound``,
not a blank disk in its place.
"""

import dataclasses
import os
import shutil

from oslo_log import log as logging

from nova import exception
from nova.virt.libvirt import blockinfo
from nova.virt.libvirt import designer
from nova.virt.libvirt import imagebackend
from nova.virt import instancedir

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class InstanceImages:
    disks: list[designer.GuestDisk]
    kernel_boot: designer.KernelBoot | None = None


def _cmdline(image_meta) -> str:
    if image_meta is not None and image_meta.os_command_line:
        return image_meta.os_command_line
    return designer.DEFAULT_CMDLINE


def create_for_spawn(record, instance, image_meta, settings, store,
                     cache) -> InstanceImages:
    idir = record.instance_dir
    record.created_dir = idir.create()
    console = idir.file(instancedir.CONSOLE_LOG)
    if not os.path.exists(console):
        record.created_file(instancedir.CONSOLE_LOG)
        open(console, 'a').close()
    disk_info_path = idir.file(instancedir.DISK_INFO)
    disk_info = imagebackend.read_disk_info(disk_info_path)
    known = dict(disk_info)
    disks = []
    for spec in blockinfo.disks_for(instance.flavor):
        path = idir.file(spec.name)
        if os.path.exists(path):
            fmt = imagebackend.existing_format(path, disk_info)
            LOG.info('Reusing existing disk %s', path, instance=instance)
        else:
            fmt = settings.images_type
            record.created_file(spec.name)
            _create_disk(spec, path, fmt, instance, image_meta, store,
                         cache)
        known[path] = fmt
        disks.append(designer.GuestDisk(spec, path, fmt))
    if image_meta is None:
        kernel_boot = _existing_kernel_boot(idir, None)
    else:
        kernel_boot = _kernel_boot(record, image_meta, store, cache)
    if not os.path.lexists(disk_info_path):
        record.created_file(instancedir.DISK_INFO)
        imagebackend.write_disk_info(disk_info_path, known)
    elif known != disk_info:
        # Shared storage, mounted elsewhere here or written before a disk
        # was added: rewritten, and put back if the spawn fails.
        record.replacing_file(instancedir.DISK_INFO)
        imagebackend.write_disk_info(disk_info_path, known)
    return InstanceImages(disks, kernel_boot)


def _kernel_boot(record, image_meta, store, cache):
    if not image_meta.kernel_id:
        return None
    kernel = _boot_file(record, instancedir.KERNEL, image_meta.kernel_id,
                        store, cache)
    ramdisk = None
    if image_meta.ramdisk_id:
        ramdisk = _boot_file(record, instancedir.RAMDISK,
                             image_meta.ramdisk_id, store, cache)
    return designer.KernelBoot(kernel, ramdisk, _cmdline(image_meta))


def _existing_kernel_boot(idir, image_meta):
    kernel = idir.file(instancedir.KERNEL)
    if not os.path.exists(kernel):
        return None
    ramdisk = idir.file(instancedir.RAMDISK)
    return designer.KernelBoot(
        kernel, ramdisk if os.path.exists(ramdisk) else None,
        _cmdline(image_meta))


def _create_disk(spec, path, fmt, instance, image_meta, store, cache):
    if spec.kind == blockinfo.ROOT:
        if image_meta is None:
            raise exception.ImageNotFound(image_id=instance.image_ref)
        if not image_meta.is_bootable_disk:
            raise exception.ImageUnacceptable(
                image_id=image_meta.id,
                reason='a %s image is not a disk' % image_meta.disk_format)
        base = cache.fetch(store, image_meta)
        imagebackend.create_root_disk(path, fmt, base, spec.size)
    else:
        imagebackend.create_blank_disk(path, fmt, spec.size)
    LOG.info('Created %(kind)s disk %(path)s (%(fmt)s)',
             {'kind': spec.kind, 'path': path, 'fmt': fmt},
             instance=instance)


def _boot_file(record, name, image_id, store, cache) -> str:
    """Copy a kernel or ramdisk image into the instance directory."""
    path = record.instance_dir.file(name)
    if not os.path.exists(path):
        cached = cache.fetch(store, store.get(image_id))
        record.created_file(name)
        shutil.copyfile(cached.path, path)
    return path


def load_existing(idir, instance, image_meta, store, cache) -> InstanceImages:
    """The instance's disks as they are; re-fetch a missing base image.

    ``image_meta`` may be None (the image left the store); the kernel
    command line then falls back to the default.
    """
    if not idir.exists():
        raise exception.DiskNotFound(location=idir.path)
    disk_info = imagebackend.read_disk_info(
        idir.file(instancedir.DISK_INFO))
    disks = []
    for spec in blockinfo.disks_for(instance.flavor):
        path = idir.file(spec.name)
        if not os.path.exists(path):
            raise exception.DiskNotFound(location=path)
        fmt = imagebackend.existing_format(path, disk_info)
        _ensure_backing(path, fmt, instance, image_meta, store, cache)
        disks.append(designer.GuestDisk(spec, path, fmt))
    return InstanceImages(disks, _existing_kernel_boot(idir, image_meta))


def _ensure_backing(path, fmt, instance, image_meta, store, cache):
    backing = imagebackend.backing_file(path, fmt)
    if backing is None or os.path.exists(backing):
        return
    if image_meta is not None and backing == cache.path_for(image_meta.id):
        LOG.warning('Base image %s of %s is gone; fetching it again',
                    backing, path, instance=instance)
        cache.fetch(store, image_meta)
        return
    raise exception.DiskNotFound(location=backing)
