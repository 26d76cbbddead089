"""Temporary files of work that died, in instance directories and the
journal directory.

* ``<instance dir>/<name>.part-<attempt id>``: a file a spawn attempt was
  writing (``journal.SpawnJournal.creating``). Stale when its attempt has
  no journal of any host on this storage (``<instances_path>/_journal``)
  and is not among the attempts the driver runs now. A snapshot's copy of
  the root disk (``snapshot.part-<image id>``) is one of these: no
  journal names its image id, and while the snapshot runs the driver
  counts that id among its live attempts.
* ``_journal/*.journal-<uuid>``: a journal write that never finished.

Each only when last modified before ``older_than``: the caller passes a
time before its process started and long enough ago that the work of a
running process (this one, or another host's) is never taken for a dead
one. Nothing is removed but regular files named as above, through
``instancedir`` (paths built from validated UUIDs, inside
``instances_path``). With ``dry_run`` nothing changes; the findings say
what would be done.

Example::

    findings = stale_files.remove(settings.instances_path,
                                  driver.live_attempts(), cutoff)
"""

import os
import re

from oslo_log import log as logging

from nova import exception
from nova.virt import housekeeping
from nova.virt import instancedir
from nova.virt import instances_scan
from nova.virt import journal

LOG = logging.getLogger(__name__)

_UUID = r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
_PART = re.compile(r'^(?P<name>.+)\.part-(?P<id>%s)$' % _UUID)
_JOURNAL = re.compile(r'^(?P<uuid>%s)\.(?P<attempt>%s)\.json$'
                      % (_UUID, _UUID))
_JOURNAL_TEMP = re.compile(r'^.+\.journal-%s$' % _UUID)


def remove(instances_path: str, live_attempts: frozenset[str],
           older_than: float, dry_run: bool = False
           ) -> list[housekeeping.Finding]:
    """Remove the stale ``.part-`` files of the instance directories and
    the journal's stale temporary files; one finding a file. Never
    raises for one file (an ``ERROR`` finding)."""
    found: list[housekeeping.Finding] = []
    attempts, temps, unknown = _journals(instances_path)
    scan = instances_scan.InstancesScan(instances_path)
    for uuid, dir_path in scan.instance_dirs.items():
        for name in scan.names(dir_path):
            match = _PART.match(name)
            if match is None:
                continue
            full = os.path.join(dir_path, name)
            try:
                finding = _judge_part(
                    instances_path, uuid, name, match.group('id'),
                    attempts, live_attempts, unknown, older_than, dry_run)
            except Exception as e:
                LOG.exception('Could not remove %s', full,
                              instance_uuid=uuid)
                finding = housekeeping.Finding(
                    housekeeping.PART, full, uuid, housekeeping.ERROR,
                    exception.message_of(e))
            if finding is not None:
                found.append(finding)
    for entry in temps:
        try:
            finding = _judge_journal_temp(instances_path, entry,
                                          older_than, dry_run)
        except Exception as e:
            LOG.exception('Could not remove %s', entry.path)
            finding = housekeeping.Finding(
                housekeeping.JOURNAL_TEMP, entry.path, None,
                housekeeping.ERROR, exception.message_of(e))
        if finding is not None:
            found.append(finding)
    return found


def _journals(instances_path):
    """(attempt ids with a journal, journal temporary files, why no
    ``.part-`` file of an instance directory can be judged or None)."""
    path = journal.journal_dir(instances_path)
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except FileNotFoundError:
        return set(), [], None
    except OSError as e:
        return set(), [], 'cannot read %s: %s' % (path, e.strerror or e)
    attempts, temps, unknown = set(), [], None
    for entry in entries:
        match = _JOURNAL.match(entry.name)
        if match:
            # Open, complete or unreadable: its attempt is not dead for
            # sure until its host's recovery has dealt with it.
            attempts.add(match.group('attempt'))
        elif _JOURNAL_TEMP.match(entry.name):
            temps.append(entry)
        elif entry.name.endswith('.json'):
            unknown = ('%s is not named as journals are: which attempt it '
                       'is about cannot be told' % entry.path)
    return attempts, temps, unknown


def _judge_part(instances_path, uuid, name, attempt, attempts, live,
                unknown, older_than, dry_run):
    idir = instancedir.InstanceDir(instances_path, uuid)
    full = idir.file(name)
    modified = housekeeping.mtime(full)
    if modified is None:
        return None
    if not os.path.isfile(full) or os.path.islink(full):
        why = 'not a regular file'
    elif attempt in live:
        why = 'attempt %s runs in this process' % attempt
    elif attempt in attempts:
        why = 'attempt %s has a journal in %s' % (
            attempt, journal.journal_dir(instances_path))
    elif unknown:
        why = unknown
    else:
        why = housekeeping.too_young(modified, older_than)
    if why is not None:
        return housekeeping.Finding(housekeeping.PART, full, uuid,
                                    housekeeping.KEEP, why)
    if not dry_run and not idir.remove_file(name):
        return None
    return housekeeping.Finding(
        housekeeping.PART, full, uuid, housekeeping.REMOVE,
        'attempt %s has no journal and runs nowhere; left by a dead '
        'process' % attempt)


def _judge_journal_temp(instances_path, entry, older_than, dry_run):
    modified = housekeeping.mtime(entry.path)
    if modified is None:
        return None
    why = (housekeeping.too_young(modified, older_than)
           if entry.is_file(follow_symlinks=False) else 'not a regular file')
    if why is not None:
        return housekeeping.Finding(housekeeping.JOURNAL_TEMP, entry.path,
                                    None, housekeeping.KEEP, why)
    if not dry_run and not instancedir.remove_layout_file(
            instances_path, instancedir.JOURNAL_DIR, entry.name):
        return None
    return housekeeping.Finding(
        housekeeping.JOURNAL_TEMP, entry.path, None, housekeeping.REMOVE,
        'temporary file of a journal write that never finished')
