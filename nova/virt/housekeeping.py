"""What a driver's housekeeping found under ``instances_path``.

A driver's ``remove_stale_temporary_files`` and ``manage_image_cache``
(``nova/virt/driver.py``) look at files nothing else removes while the
services run: the temporary files of work that died, and base images no
disk uses. They decide, file by file, whether it is safe to remove, and
return one ``Finding`` a file; the caller (the orphan reaper,
``nova/compute/reaper.py``) decides when they run and reports them.

Example::

    for finding in driver.remove_stale_temporary_files(cutoff):
        print(finding.kind, finding.path, finding.action, finding.reason)
"""

import dataclasses
from nova.model import actions
import os
import time

# Kinds of file.
PART = 'part'                   # <name>.part-<attempt> in an instance dir
JOURNAL_TEMP = 'journal-temp'   # _journal/*.journal-<uuid>
BASE_PART = 'base-part'         # _base/<hash>.part-<uuid> of a fetch
BASE = 'base'                   # _base/<hash>, a base image

# What was done with it (with ``dry_run``: what would be).
REMOVE = actions.REMOVE
KEEP = actions.KEEP
ERROR = actions.ERROR


@dataclasses.dataclass(frozen=True)
class Finding:
    """One file looked at, and what was done with it."""
    kind: str
    path: str
    instance_uuid: str | None
    action: str                 # REMOVE, KEEP or ERROR
    reason: str


def mtime(path: str) -> float | None:
    """When ``path`` itself (never a symlink's target) was last
    modified; None once it is gone."""
    try:
        return os.lstat(path).st_mtime
    except FileNotFoundError:
        return None


def too_young(modified: float, older_than: float) -> str | None:
    """Why a temporary file modified at ``modified`` is kept, or None
    when it is older than ``older_than``."""
    if modified < older_than:
        return None
    # NOTE: the caller's cutoff is before its own process started: what
    # is younger may be the work of a process that still runs (this one,
    # or another host's sharing the storage, with some clock skew).
    return ('modified %d s ago, too recently: a running process may '
            'still be writing it' % max(0, time.time() - modified))
