"""Housekeeping of the libvirt driver's image cache (``_base``).

* **Fetch leftovers**: ``_base/<hash>.part-<uuid>`` of a fetch that died,
  removed under the image's lock taken without waiting (no fetch of any
  host sharing the storage runs then), its age read again there; only
  when last modified before the caller's ``older_than``.
* **Unused base images** (``manage_image_cache``): a base image that no
  disk of any directory under ``instances_path`` (instance directories,
  quarantined ones, other directories holding something named like a
  disk) has as its qcow2 backing file, last used more than ``min_age``
  seconds ago, removed under the image's lock with its age read again
  there (every fetch touches the base it returns, so one a spawn in
  progress uses is young). Backing files are read with
  ``qemu-img info -f qcow2`` only for the disks ``disk.info`` records as
  qcow2, never probed, and only while some base image is old enough to
  go (the scan stops once each is known to be in use). A directory whose
  disks cannot all be told (``disk.info`` missing or corrupt, a disk it
  does not list, a qcow2 ``qemu-img`` cannot read) keeps every base
  image.

Only files the cache names (``imagecache.ImageCache.entries``) are ever
removed, by ``remove_if_older``. With ``dry_run`` nothing changes (not
even a lock file is made); the findings say what would be done.

Example::

    cache = imagecache.ImageCache(settings.instances_path)
    findings = cache_cleanup.remove_unused_bases(cache, 86400)
"""

import os
import time

from oslo_log import log as logging

from nova import exception
from nova.image import qemu_img
from nova.virt import housekeeping
from nova.virt import instancedir
from nova.virt import instances_scan
from nova.virt.libvirt import imagebackend

LOG = logging.getLogger(__name__)

_DISKS = (instancedir.DISK, instancedir.EPHEMERAL0, instancedir.SWAP)


def remove_fetch_leftovers(cache, older_than: float, dry_run: bool = False
                           ) -> list[housekeeping.Finding]:
    """Remove the temporary files of fetches that died; one finding a
    file. Never raises for one file (an ``ERROR`` finding)."""
    found = []
    for entry in cache.entries()[0]:
        if not entry.part:
            continue
        try:
            why = housekeeping.too_young(entry.mtime, older_than)
            if why is None:
                removed, why = cache.remove_if_older(
                    entry.name, older_than, dry_run=dry_run)
                if removed:
                    found.append(housekeeping.Finding(
                        housekeeping.BASE_PART, entry.path, None,
                        housekeeping.REMOVE,
                        'temporary file of an image fetch that died (no '
                        'fetch holds the image\'s lock); ' + why))
                    continue
            found.append(housekeeping.Finding(
                housekeeping.BASE_PART, entry.path, None, housekeeping.KEEP,
                why))
        except Exception as e:
            LOG.exception('Could not remove %s', entry.path)
            found.append(housekeeping.Finding(
                housekeeping.BASE_PART, entry.path, None,
                housekeeping.ERROR, exception.message_of(e)))
    return found


class _Unknown(Exception):
    """What a directory's disks use cannot be told."""


def remove_unused_bases(cache, min_age: float, dry_run: bool = False
                        ) -> list[housekeeping.Finding]:
    """Age out the base images no disk uses (see the module docstring);
    one finding a base image. Never raises for one file."""
    found: list[housekeeping.Finding] = []
    now = time.time()
    candidates = {}
    for entry in cache.entries()[0]:
        if entry.part:
            continue
        if now - entry.mtime < min_age:
            found.append(_base(entry, housekeeping.KEEP,
                               'used %d s ago, less than %d s'
                               % (max(0, now - entry.mtime), min_age)))
        else:
            candidates[entry.name] = entry
    if not candidates:
        return found
    # First what needs no qemu-img: one directory whose disks cannot be
    # told keeps every candidate, so then no disk is read at all.
    scan = instances_scan.InstancesScan(cache.instances_path)
    try:
        disks = [disk for dir_path in _disk_dirs(scan)
                 for disk in _qcow2_disks(scan, dir_path)]
    except _Unknown as e:
        return found + _keep_all(candidates, str(e))
    unproven = set(candidates)
    for disk in disks:
        if not unproven:
            break
        try:
            backing = _backing_file(disk)
        except _Unknown as e:
            return found + _keep_all(
                {n: candidates[n] for n in unproven}, str(e))
        name = os.path.basename(backing or '')
        if name in unproven:
            unproven.discard(name)
            found.append(_base(candidates[name], housekeeping.KEEP,
                               'backing file of %s' % disk))
    for name in sorted(unproven):
        found.append(_remove_base(cache, candidates[name], now - min_age,
                                  dry_run))
    return found


def _base(entry, action, why):
    return housekeeping.Finding(housekeeping.BASE, entry.path, None, action,
                                why)


def _remove_base(cache, entry, older_than, dry_run):
    try:
        removed, why = cache.remove_if_older(entry.name, older_than,
                                             dry_run=dry_run)
    except Exception as e:
        LOG.exception('Could not remove %s', entry.path)
        return _base(entry, housekeeping.ERROR, exception.message_of(e))
    if removed:
        return _base(entry, housekeeping.REMOVE,
                     'no instance disk uses it; %s' % why)
    return _base(entry, housekeeping.KEEP, why)


def _keep_all(candidates, why):
    return [_base(candidates[name], housekeeping.KEEP,
                  'cannot tell whether it is in use: %s' % why)
            for name in sorted(candidates)]


def _disk_dirs(scan):
    """Every directory whose disks may use a base image: the instance
    directories, the quarantined ones, and other directories holding
    something named like a disk; ``_Unknown`` when the quarantine cannot
    be read."""
    dirs = list(scan.instance_dirs.values())
    try:
        quarantined, other = instancedir.list_quarantine(
            scan.instances_path)
    except exception.QuarantineUnusable as e:
        raise _Unknown(e.format_message())
    dirs.extend(entry.path for entry in quarantined)
    for path in [p for p in other if os.path.isdir(p)] + scan.other_dirs:
        names = scan.names(path)
        if instancedir.DISK_INFO in names or set(_DISKS) & set(names):
            dirs.append(path)
    return dirs


def _qcow2_disks(scan, dir_path):
    """The qcow2 disks of ``dir_path`` by what its ``disk.info`` records;
    ``_Unknown`` when what its disks are cannot all be told. Reads no
    disk."""
    names = scan.names(dir_path)
    info_path = os.path.join(dir_path, instancedir.DISK_INFO)
    try:
        info = imagebackend.read_disk_info(info_path)
    except exception.InternalError as e:
        raise _Unknown(e.format_message())
    except OSError as e:
        raise _Unknown('cannot read %s: %s' % (info_path, e.strerror or e))
    for name in _DISKS:
        if name in names and name not in info.formats:
            raise _Unknown('%s: disk %s is not listed in disk.info'
                           % (dir_path, name))
    found = []
    for name, fmt in sorted(info.formats.items()):
        if name not in names or fmt == 'raw':
            continue
        if fmt != 'qcow2':
            raise _Unknown('%s: disk.info says %s is %r' % (dir_path, name,
                                                            fmt))
        found.append(os.path.join(dir_path, name))
    return found


def _backing_file(disk):
    """The backing file of a disk ``disk.info`` records as qcow2, read as
    qcow2 (never probed); ``_Unknown`` when qemu-img cannot read it."""
    try:
        return qemu_img.info(disk, expected_format='qcow2').backing_file
    except (exception.NovaException, OSError, ValueError) as e:
        raise _Unknown('%s: %s' % (disk, exception.message_of(e)))
