"""This process's mount table (``/proc/self/mountinfo``), parsed, and the
mount a path is on.

A line of mountinfo (proc(5))::

    36 35 98:0 /exports/a /mnt/a rw,noatime master:1 - nfs4 srv:/a rw,...
    |  |  |    |          |      |          |        | |    |      |
    id parent  root       mount  per-mount  optional - type source super
       id dev  (within    point  options    fields              options
               the file system)

``dev`` (major:minor) names the file system instance (its superblock):
two mounts with the same ``dev`` show the same file system, and ``root``
is the directory of it each one shows (a bind mount of a subdirectory has
that subdirectory as its root). Paths are written with space, tab,
newline and backslash as octal escapes (``\\040``).

Example::

    table = mounts.read()                  # OSError when unreadable
    mount = mounts.containing(table, '/var/lib/nova/instances')
    mount.fs_type, mount.source, mount.has_option('local_lock=all')
"""

import dataclasses
import os
import re

MOUNTINFO = '/proc/self/mountinfo'
_OCTAL_ESCAPE = re.compile(r'\\([0-7]{3})')


def unescape(field: str) -> str:
    """A mountinfo path field as the path it stands for."""
    return _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), field)


@dataclasses.dataclass(frozen=True)
class Mount:
    """One line of mountinfo."""
    mount_id: int
    parent_id: int
    device: str                     # major:minor of the file system
    root: str                       # the directory of it mounted here
    mount_point: str
    options: tuple[str, ...]        # this mount's own (rw, nosuid, ...)
    fs_type: str
    source: str
    super_options: tuple[str, ...]  # the file system's (NFS's live here)

    def has_option(self, option: str) -> bool:
        """Whether ``option`` is among the mount's or the file system's
        options (the kernel may show a file system's in either field)."""
        return option in self.options or option in self.super_options

    def describe(self) -> str:
        return '%s (%s %s)' % (self.mount_point, self.fs_type, self.source)


def _parse_line(line: str) -> Mount | None:
    fields = line.split()
    try:
        separator = fields.index('-', 6)
        fs_type, source = fields[separator + 1:separator + 3]
    except ValueError:
        return None     # not a mountinfo line
    super_options = (fields[separator + 3].split(',')
                     if len(fields) > separator + 3 else [])
    try:
        mount_id, parent_id = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    return Mount(mount_id=mount_id, parent_id=parent_id, device=fields[2],
                 root=unescape(fields[3]), mount_point=unescape(fields[4]),
                 options=tuple(fields[5].split(',')), fs_type=fs_type,
                 source=unescape(source),
                 super_options=tuple(super_options))


def parse(text: str) -> list[Mount]:
    """The mounts of a mountinfo text, in its order (lines that are not
    mountinfo lines are skipped)."""
    table = []
    for line in text.splitlines():
        mount = _parse_line(line)
        if mount is not None:
            table.append(mount)
    return table


def read(path: str | None = None) -> list[Mount]:
    """The mounts listed in ``path`` (by default ``MOUNTINFO`` as it is
    when called); OSError when it cannot be read."""
    # Paths are bytes to the kernel: decoded as os.fsdecode does, so that
    # they compare equal to the paths this process resolves.
    with open(path or MOUNTINFO, encoding='utf-8',
              errors='surrogateescape') as f:
        return parse(f.read())


def within(path: str, top: str) -> bool:
    """Whether the (normalised) ``path`` is ``top`` or below it."""
    return (path == top or top == '/'
            or path.startswith(top.rstrip('/') + '/'))


def containing(table: list[Mount], path: str) -> Mount | None:
    """The mount ``path`` (absolute, resolved: ``os.path.realpath``) is
    on; None when no mount holds it.

    Mostly the one with the longest mount point above the path, but found
    as the kernel finds it, by the tree the parent ids make: from the
    root (a mount whose parent is not listed), into the child mounted on
    the highest directory above the path, and so on. A mount on a
    directory hides whatever was mounted below it before (``/a/b``, then
    ``/a``: ``/a/b`` no longer shows), and one mounted on top of another
    is that one's child. Of two children on one directory, the one
    listed last (mounted last) is taken.
    """
    path = os.path.normpath(path)
    ids = {m.mount_id for m in table}
    current = None
    seen: set[int] = set()
    while True:
        if current is None:
            children = [m for m in table
                        if m.parent_id not in ids
                        or m.parent_id == m.mount_id]
        else:
            children = [m for m in table
                        if m.parent_id == current.mount_id
                        and m.mount_id != current.mount_id]
        below = [(len(m.mount_point.rstrip('/')), -position, m)
                 for position, m in enumerate(children)
                 if m.mount_id not in seen and within(path, m.mount_point)]
        if not below:
            return current
        current = min(below, key=lambda entry: entry[:2])[2]
        seen.add(current.mount_id)
