"""One look at what ``instances_path`` holds.

The instance directories (named by a valid UUID), and the other
directories there that may hold disks nova cannot name (a stray copy, a
symlink to a directory). The layout's own directories (``_base``,
``locks``, ...) and the file system's (``lost+found``) are neither.
Each directory's entries are read once, so the parts of one run judge
the same listing.

Example::

    scan = InstancesScan(settings.instances_path)
    for uuid, path in scan.instance_dirs.items():
        print(uuid, scan.names(path))
"""

import os

from nova import exception
from nova.virt import instancedir

# Not a directory of ours, and never readable by nova (mkfs makes it).
_FILE_SYSTEM_DIRS = ('lost+found',)


class InstancesScan:
    """The instance directories and the other directories of
    ``instances_path`` as they were when it was built."""

    def __init__(self, instances_path: str):
        self.instances_path = instances_path
        self.instance_dirs: dict[str, str] = {}     # uuid: path
        self.other_dirs: list[str] = []     # may hold disks we cannot name
        self._names: dict[str, list[str]] = {}
        try:
            entries = sorted(os.scandir(instances_path),
                             key=lambda e: e.name)
        except FileNotFoundError:
            entries = []
        for entry in entries:
            if entry.name in instancedir.LAYOUT or \
                    entry.name in _FILE_SYSTEM_DIRS:
                continue
            try:
                uuid = instancedir.validated_uuid(entry.name)
            except exception.InvalidUUID:
                uuid = None
            if uuid is not None and entry.is_dir(follow_symlinks=False):
                self.instance_dirs[uuid] = entry.path
            elif entry.is_dir():            # symlinks to directories too
                self.other_dirs.append(entry.path)

    def names(self, path: str) -> list[str]:
        """The entries of a directory (read once); [] once it is gone."""
        if path not in self._names:
            try:
                self._names[path] = sorted(os.listdir(path))
            except FileNotFoundError:
                self._names[path] = []
        return self._names[path]
