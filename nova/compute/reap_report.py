"""What one run of the orphan reaper found, and what it did.

Each part of the reaper (``nova/compute/reaper.py``) adds one ``Finding``
a thing it looked at; the report logs each as it is added, and
``nova-manage host reap`` prints them (``COLUMNS``).

Example::

    report = ReapReport(host, instances_path, dry_run=False)
    report.add(DOMAIN, uuid, uuid, KEEP, 'instance not in the database')
    print(len(report.acted), len(report.kept), len(report.errors))
"""

import dataclasses

from oslo_log import log as logging

from nova.compute import pending_deletes
from nova.virt import housekeeping

LOG = logging.getLogger(__name__)

# Kinds of finding.
EVACUATED = 'evacuated'
PENDING_DELETE = 'pending-delete'
DOMAIN = 'domain'
PART = housekeeping.PART
BASE_PART = housekeeping.BASE_PART
JOURNAL_TEMP = housekeeping.JOURNAL_TEMP
BASE = housekeeping.BASE
STORAGE = 'storage'

# What was done (or, in a dry run, would be).
STOP = 'stop'           # a domain powered off and undefined
REMOVE = housekeeping.REMOVE        # a file removed
CLEAN = 'clean'         # the source-side cleanup of an evacuation
DELETE = pending_deletes.DELETE     # a delete finished: guest and disks
KEEP = pending_deletes.KEEP
ERROR = pending_deletes.ERROR
_ACTED = (STOP, REMOVE, CLEAN, DELETE)

COLUMNS = (('KIND', 'kind'), ('INSTANCE', 'instance_uuid'),
           ('NAME', 'name'), ('ACTION', 'action'), ('REASON', 'reason'))


@dataclasses.dataclass(frozen=True)
class Finding:
    """One thing the reaper looked at, and what it did with it."""
    kind: str
    name: str                   # a domain UUID or a path
    instance_uuid: str | None
    action: str                 # STOP, REMOVE, CLEAN, DELETE, KEEP, ERROR
    reason: str


@dataclasses.dataclass
class ReapReport:
    host: str
    instances_path: str
    dry_run: bool
    findings: list[Finding] = dataclasses.field(default_factory=list)

    def add(self, kind, name, instance_uuid, action, reason) -> Finding:
        finding = Finding(kind, name, instance_uuid, action, reason)
        self.findings.append(finding)
        if action == ERROR:
            LOG.error('Reaper: %(kind)s %(name)s: %(reason)s',
                      dataclasses.asdict(finding),
                      instance_uuid=instance_uuid)
        elif action != KEEP:
            # Stopping a guest deserves attention; removing a leftover
            # file is routine.
            log = LOG.info if action == REMOVE else LOG.warning
            log('Reaper: %(dry)s%(action)s %(kind)s %(name)s: %(reason)s',
                dict(dataclasses.asdict(finding),
                     dry='dry run, would ' if self.dry_run else ''),
                instance_uuid=instance_uuid)
        else:
            LOG.debug('Reaper: keep %(kind)s %(name)s: %(reason)s',
                      dataclasses.asdict(finding),
                      instance_uuid=instance_uuid)
        return finding

    def add_files(self, findings: list[housekeeping.Finding]) -> None:
        """What a driver's housekeeping found (``nova.virt.housekeeping``),
        as the reaper's findings."""
        for found in findings:
            self.add(found.kind, found.path, found.instance_uuid,
                     found.action, found.reason)

    @property
    def acted(self) -> list[Finding]:
        return [f for f in self.findings if f.action in _ACTED]

    @property
    def kept(self) -> list[Finding]:
        return [f for f in self.findings if f.action == KEEP]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.action == ERROR]
