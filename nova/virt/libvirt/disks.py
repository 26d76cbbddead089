"""The disks and boot files of one instance, in its directory.

``create_for_spawn`` makes what is missing (root disk from the cached
image, ephemeral and swap disks, kernel and ramdisk copies, ``disk.info``,
an empty ``console.log``) and reuses what is already there (an evacuation
onto shared storage). Each thing it makes is recorded in the attempt's
``SpawnJournal`` before it is made, and written under its ``.part-`` name
until it is complete: a disk never has its final name while partial, so
nothing that spawn, start or hard reboot would use is ever half written.
With no image (``image_meta`` None: it was deleted) it can only reuse: the
root disk must be there, and the kernel and ramdisk files are used if they
are. ``load_existing`` finds them again for a hard reboot and never creates
a disk: a missing disk is ``DiskNotFound``, not a blank disk in its place.

Formats come from ``disk.info`` only (``imagebackend.existing_format``):
an existing disk it does not list is ``UnknownDiskFormat``, never probed.
"""

import dataclasses
import os
import shutil
from typing import Sequence

from oslo_log import log as logging

from nova import crashpoint
from nova import exception
from nova.virt import instancedir
from nova.virt.libvirt import blockinfo
from nova.virt.libvirt import designer
from nova.virt.libvirt import imagebackend

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class InstanceImages:
    disks: list[designer.GuestDisk]
    kernel_boot: designer.KernelBoot | None = None
    # disk.info is in the old form (absolute paths): rewrite it by name
    # once the start that read it succeeded.
    disk_info_legacy: bool = False

    @property
    def formats(self) -> dict[str, str]:
        return {os.path.basename(d.path): d.format for d in self.disks}


def _cmdline(image_meta) -> str:
    if image_meta is not None and image_meta.os_command_line:
        return image_meta.os_command_line
    return designer.DEFAULT_CMDLINE


def planned_files(layout: Sequence[blockinfo.DiskSpec],
                  image_meta) -> tuple[str, ...]:
    """The files a spawn makes when they are missing: the disks of the
    ``layout`` (``blockinfo.disks_for`` the flavor), the kernel and
    ramdisk of the image, the console log."""
    names = [spec.name for spec in layout]
    if image_meta is not None and image_meta.kernel_id:
        names.append(instancedir.KERNEL)
        if image_meta.ramdisk_id:
            names.append(instancedir.RAMDISK)
    names.append(instancedir.CONSOLE_LOG)
    return tuple(names)


def create_for_spawn(journal, instance, layout: Sequence[blockinfo.DiskSpec],
                     image_meta, settings, store, cache) -> InstanceImages:
    """Make the missing disks of ``instance`` in the directory the
    ``journal``'s attempt made or adopted: those of ``layout``, the one
    the spawn planned its files from (``planned_files``)."""
    idir = journal.idir
    console = idir.file(instancedir.CONSOLE_LOG)
    if not os.path.lexists(console):
        open(journal.creating(instancedir.CONSOLE_LOG), 'a').close()
        journal.commit(instancedir.CONSOLE_LOG)
    disk_info = imagebackend.read_disk_info(
        idir.file(instancedir.DISK_INFO))
    known = dict(disk_info.formats)
    disks = []
    for spec in layout:
        path = idir.file(spec.name)
        if os.path.lexists(path):
            fmt = imagebackend.existing_format(path, disk_info)
            LOG.info('Reusing existing disk %s (%s)', path, fmt,
                     instance=instance)
        else:
            fmt = settings.images_type
            part = journal.creating(spec.name)
            _create_disk(spec, part, fmt, instance, image_meta, store,
                         cache)
            if spec.kind == blockinfo.ROOT:
                crashpoint.reached('spawn.writing_root_disk')
            journal.commit(spec.name)
            LOG.info('Created %(kind)s disk %(path)s (%(fmt)s)',
                     {'kind': spec.kind, 'path': path, 'fmt': fmt},
                     instance=instance)
        known[spec.name] = fmt
        disks.append(designer.GuestDisk(spec, path, fmt))
    if image_meta is None:
        kernel_boot = _existing_kernel_boot(idir, None)
    else:
        kernel_boot = _kernel_boot(journal, image_meta, store, cache)
    if disk_info.legacy or known != disk_info.formats or not \
            os.path.lexists(idir.file(instancedir.DISK_INFO)):
        # New, or on shared storage written before a disk was added, or
        # in the old form: (re)written, and put back if the spawn fails.
        imagebackend.write_disk_info(idir.file(instancedir.DISK_INFO),
                                     known, journal=journal)
    crashpoint.reached('spawn.after_disk_info')
    return InstanceImages(disks, kernel_boot)


def _kernel_boot(journal, image_meta, store, cache):
    if not image_meta.kernel_id:
        return None
    kernel = _boot_file(journal, instancedir.KERNEL, image_meta.kernel_id,
                        store, cache)
    ramdisk = None
    if image_meta.ramdisk_id:
        ramdisk = _boot_file(journal, instancedir.RAMDISK,
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
    """Write one disk at ``path`` (its ``.part-`` name)."""
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


def _boot_file(journal, name, image_id, store, cache) -> str:
    """Copy a kernel or ramdisk image into the instance directory."""
    path = journal.idir.file(name)
    if not os.path.lexists(path):
        cached = cache.fetch(store, store.get(image_id))
        shutil.copyfile(cached.path, journal.creating(name))
        journal.commit(name)
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
    return InstanceImages(disks, _existing_kernel_boot(idir, image_meta),
                          disk_info_legacy=disk_info.legacy)


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
