"""qcow2 disks written from a template ``qemu-img`` made once.

A new qcow2 overlay holds no data: only its header (which names the
backing file and its format), the L1 table and the refcounts, all fixed
by the backing file's path and format and the virtual size. Every overlay
of one base image at one size is therefore the same bytes. ``qemu-img
create`` costs a process: about 11 ms of wall time and 8 ms of CPU here,
on every spawn and every evacuation. So the first disk of each shape is
made by ``qemu-img`` as before, its bytes are kept (only the non-zero
blocks: a few KiB), and the next disks of that shape are written from
them: a few ``pwrite`` calls and a truncate.

The bytes are ``qemu-img``'s own, read back from the file it wrote; this
module knows nothing of the qcow2 format. The shape is everything the
bytes depend on: the format, the size asked for, and the backing file's
path, format and virtual size (``qemu-img`` sizes the overlay by it when
no size is asked for). A file larger than ``MAX_TEMPLATE_BYTES`` is never
kept: such a disk is made by ``qemu-img`` every time.

Disks of a shape not seen yet that are asked for at once (the first
evacuations a target receives arrive together) wait for the first one's
``qemu-img`` instead of each running their own: on a host whose CPUs are
busy starting guests, a process started for nothing is what it can least
afford. A wait is bounded (``MAKER_WAIT_SECONDS``); a waiter whose maker
failed, or kept no template, runs ``qemu-img`` itself.

Example::

    overlays.create(path, 'qcow2', size=None,
                    backing=overlays.Backing(base.path, 'qcow2', base_size))
"""

import collections
import dataclasses
import os
import threading

from nova import exception
from nova.image import qemu_img

# A fresh qcow2 is 192 KiB up to 1 TiB and 1.2 MiB at 64 TiB (its L1
# table grows with the size): keep what is no larger than that.
MAX_TEMPLATE_BYTES = 4 * 1024 * 1024
# Shapes kept: one per (image, flavor size) in use on this host.
MAX_TEMPLATES = 64
_BLOCK = 4096
# How long a disk waits for another thread's qemu-img of its shape before
# it runs its own (a qemu-img that hangs must not hang every spawn).
MAKER_WAIT_SECONDS = 60.0


@dataclasses.dataclass(frozen=True)
class Backing:
    path: str
    format: str
    # What qemu-img sizes the overlay by when no size is asked for.
    virtual_size: int


@dataclasses.dataclass(frozen=True)
class _Shape:
    # Of a qcow2: the only format kept.
    size: int | None
    backing: Backing | None


@dataclasses.dataclass(frozen=True)
class _Template:
    length: int
    # (offset, bytes) of each run of non-zero blocks; the rest is a hole.
    extents: tuple[tuple[int, bytes], ...]


@dataclasses.dataclass
class _Making:
    """A shape's template being made by one thread; ``waiters``: the
    threads waiting for it (tests look)."""
    done: threading.Event = dataclasses.field(
        default_factory=threading.Event)
    waiters: int = 0


_templates: collections.OrderedDict = collections.OrderedDict()
_making: dict[_Shape, _Making] = {}
_lock = threading.Lock()
# What _template() returns to the one thread that is to make the template.
_MAKE = object()


def create(path: str, fmt: str, size: int | None = None,
           backing: Backing | None = None) -> None:
    """Create a blank disk, or a qcow2 overlay of ``backing``, at
    ``path`` (replacing what is there, as ``qemu-img create`` does)."""
    if fmt != 'qcow2':
        # A raw disk is a hole of ``size`` bytes: nothing to keep.
        _qemu_img_create(path, fmt, size, backing)
        return
    shape = _Shape(size, backing)
    template = _template(shape)
    if template is _MAKE:
        try:
            _qemu_img_create(path, fmt, size, backing)
            _keep(shape, _read_template(path))
        finally:
            with _lock:
                _making.pop(shape).done.set()
    elif template is None:
        _qemu_img_create(path, fmt, size, backing)
    else:
        _write(path, template)


def forget() -> None:
    """Drop every template (tests; a ``qemu-img`` upgrade needs none:
    what an older one wrote stays valid)."""
    with _lock:
        _templates.clear()


def _qemu_img_create(path, fmt, size, backing):
    qemu_img.create(path, fmt, size=size,
                    backing_file=backing.path if backing else None,
                    backing_format=backing.format if backing else None)


def _template(shape: _Shape):
    """The kept template of ``shape``; ``_MAKE`` when the caller is to
    make it (then it must end ``_making[shape]``); None when there is
    none to wait for (its maker failed, kept none or took too long)."""
    with _lock:
        template = _cached(shape)
        if template is not None:
            return template
        making = _making.get(shape)
        if making is None:
            _making[shape] = _Making()
            return _MAKE
        making.waiters += 1
    making.done.wait(MAKER_WAIT_SECONDS)
    with _lock:
        making.waiters -= 1
        return _cached(shape)


def _cached(shape: _Shape) -> _Template | None:
    """The kept template of ``shape``, or None; under ``_lock``."""
    template = _templates.get(shape)
    if template is not None:
        _templates.move_to_end(shape)
    return template


def _keep(shape: _Shape, template: _Template | None) -> None:
    if template is None:
        return
    with _lock:
        _templates[shape] = template
        _templates.move_to_end(shape)
        while len(_templates) > MAX_TEMPLATES:
            _templates.popitem(last=False)


def _read_template(path: str) -> _Template | None:
    with open(path, 'rb') as f:
        length = os.fstat(f.fileno()).st_size
        if length > MAX_TEMPLATE_BYTES:
            return None
        data = f.read()
    if len(data) != length:
        return None
    extents: list[tuple[int, bytes]] = []
    start = None
    for offset in range(0, length + _BLOCK, _BLOCK):
        block = data[offset:offset + _BLOCK]
        if block and any(block):
            if start is None:
                start = offset
            continue
        if start is not None:
            extents.append((start, data[start:offset]))
            start = None
    return _Template(length, tuple(extents))


def _write(path: str, template: _Template) -> None:
    try:
        # The mode qemu-img gives a file it creates.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                     | os.O_CLOEXEC, 0o644)
        try:
            for offset, data in template.extents:
                os.pwrite(fd, data, offset)
            os.ftruncate(fd, template.length)
        finally:
            os.close(fd)
    except OSError as e:
        raise exception.DiskCreationFailed(path=path, reason=str(e))
