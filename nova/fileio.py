"""Files replaced whole: a reader sees the old content or all of the new.

One way for the whole product to write a small file in place (disk.info,
libvirt.xml, ownership stamps, journals, the storage identity marker, the
image store's metadata): the content goes to a temporary file of its own
next to the target, is flushed to disk, and is renamed over the target.
A crash at any instant leaves the old file or the new one, and at worst a
temporary whose name says what wrote it.

The only file this module removes is its own temporary, and only when the
write failed before the rename (or, for ``temporary_beside``, when the
caller did not rename it into place).

Example::

    write_atomically('/srv/images/<id>.json', text)
    write_atomically(journal_path, text, purpose='journal', sync_dir=True)
"""

import contextlib
import os
from typing import Iterator

from oslo_utils import uuidutils


def _remove_if_left(tmp: str) -> None:
    """Remove a temporary of this module's, unless it is gone (renamed
    into place)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)


def fsync_dir(path: str) -> None:
    """Flush a directory, so a rename or creation in it survives a crash."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def temporary_beside(path: str, purpose: str = 'part') -> Iterator[str]:
    """A new name next to ``path`` (``<path>.<purpose>-<uuid>``) for a
    file the caller makes and then moves into place (rename, link);
    whatever is still under that name when the block ends is removed:
    the caller's failure, or the name a hard link left behind."""
    tmp = '%s.%s-%s' % (path, purpose, uuidutils.generate_uuid())
    try:
        yield tmp
    finally:
        _remove_if_left(tmp)


def write_atomically(path: str, content: str | bytes,
                     purpose: str = 'part', tmp_path: str | None = None,
                     sync_dir: bool = False) -> None:
    """Replace ``path`` with ``content`` so a reader sees the old file or
    the whole new one, never a part.

    Written under a name of its own first (``tmp_path``, by default
    ``<path>.<purpose>-<uuid>``, so a file that is there is never
    truncated, and a leftover says what wrote it), flushed to disk, then
    renamed over ``path``; with ``sync_dir`` the rename is flushed too.
    """
    tmp = tmp_path or '%s.%s-%s' % (path, purpose,
                                    uuidutils.generate_uuid())
    mode = 'wb' if isinstance(content, bytes) else 'w'
    if tmp_path is None:
        # NOTE: a generated name must be new: never write into a file
        # someone else is writing. A caller's own name (a journal's
        # ``.part-``) may be a leftover of a crash, and is overwritten.
        mode = mode.replace('w', 'x')
    try:
        with open(tmp, mode) as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        if sync_dir:
            fsync_dir(os.path.dirname(path) or '.')
    finally:
        _remove_if_left(tmp)
