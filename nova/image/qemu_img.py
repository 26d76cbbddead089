"""Thin wrappers around ``qemu-img``, run through ``nova.command``.

Every call passes ``--force-share`` to ``info`` so that inspecting a disk
a running guest holds open does not fail on QEMU's image locking.
"""

import dataclasses
import json

from oslo_concurrency import processutils

from nova import command
from nova import exception

QEMU_IMG = 'qemu-img'


@dataclasses.dataclass(frozen=True)
class ImageInfo:
    format: str
    virtual_size: int
    actual_size: int = 0
    backing_file: str | None = None
    backing_format: str | None = None


def info(path: str, expected_format: str | None = None) -> ImageInfo:
    """Inspect ``path``; with ``expected_format``, probe it as that format.

    Raises ``ImageUnacceptable`` when qemu-img cannot read the file.
    """
    cmd = [QEMU_IMG, 'info', '--output=json', '--force-share']
    if expected_format:
        cmd += ['-f', expected_format]
    try:
        out, _err = command.execute(*cmd, path)
    except processutils.ProcessExecutionError as e:
        raise exception.ImageUnacceptable(
            image_id=path, reason='qemu-img info failed: %s'
                                  % (e.stderr or e).strip())
    data = json.loads(out)
    return ImageInfo(format=data['format'],
                     virtual_size=int(data['virtual-size']),
                     actual_size=int(data.get('actual-size', 0)),
                     backing_file=data.get('backing-filename'),
                     backing_format=data.get('backing-filename-format'))


def detect_format(path: str) -> str:
    return info(path).format


def _run(path: str, *cmd: str) -> None:
    try:
        command.execute(QEMU_IMG, *cmd)
    except processutils.ProcessExecutionError as e:
        raise exception.DiskCreationFailed(
            path=path, reason=(e.stderr or str(e)).strip())


def create(path: str, fmt: str, size: int | None = None,
           backing_file: str | None = None,
           backing_format: str | None = None) -> None:
    """Create a blank image, or a qcow2 overlay when ``backing_file``."""
    cmd = ['create', '-f', fmt]
    if backing_file:
        cmd += ['-b', backing_file, '-F', backing_format]
    cmd.append(path)
    if size is not None:
        cmd.append(str(size))
    _run(path, *cmd)


def convert(source: str, source_format: str, dest: str,
            dest_format: str, force_share: bool = False) -> None:
    """Copy ``source`` to ``dest``, backing files merged. With
    ``force_share``, read a disk a running QEMU holds locked (a snapshot
    of a paused guest: the caller makes sure nothing writes meanwhile)."""
    cmd = ['convert']
    if force_share:
        cmd.append('--force-share')
    _run(dest, *cmd, '-f', source_format, '-O', dest_format, source, dest)


def resize(path: str, fmt: str, size: int) -> None:
    _run(path, 'resize', '-f', fmt, path, str(size))
