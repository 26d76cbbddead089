"""What a compute host tells the others about its instance storage: the
one writer of ``services.storage_identity``.

Other hosts decide "is storage shared with this host?" from the identity
this host recorded, even while it is down, so the record must follow the
storage as it is, not as it was when the service started. It is written
at ``init_host`` and again with every heartbeat, from the marker read live
(``ComputeDriver.get_storage_status``): an NFS mount that appears after the
service started is recorded within one ``report_interval``.

The marker is created only at the very first start of a compute service
on this host (its row never recorded an identity) and only on an empty
``instances_path``. A host that recorded an identity and no longer finds
its marker has lost its storage (a mount missing): that, or
``instances_path_must_be_mounted`` without a mount, disables the service
with a reason starting ``AUTO:`` (shown by ``nova service-list``; the
conductor then chooses other targets), and it enables itself again once
the storage is back, unless an operator disabled it for a reason of their
own meanwhile. A missing marker never erases the recorded identity: it is
the last evidence there is.

A marker flagged by ``nova-manage host init-storage --mount-point`` says
its storage is mounted at ``instances_path``; the row records that flag
with the identity (``storage_must_be_mounted``). When the mount is missing
the flagged marker is hidden, and the directory underneath may hold an
older marker of its own (the host ran on local disk before its NFS mount
was set up). Taking that one would move the recorded identity, and the
host's new instances, onto the hidden local disk. So a host whose recorded
storage must be mounted and whose ``instances_path`` is not a mount point
has a storage problem like a missing marker: disabled (``AUTO:``), spawns
refused, and the recorded identity and flag kept, until the mount is back
or an operator records another storage (``nova-manage host init-storage
--force`` on the host, or ``record-storage-identity`` while it is down).
The service notices such a record at its next heartbeat.

Example (the service's heartbeat)::

    reporter = StorageReporter(host, driver)
    reporter.update(service_row)     # fields changed in memory
    service_row.heartbeat()          # written with the heartbeat
"""

from oslo_log import log as logging

from nova import context as nova_context
from nova import exception
from nova import objects
from nova.objects import service as service_obj

LOG = logging.getLogger(__name__)

COMPUTE_BINARY = service_obj.COMPUTE_BINARY
AUTO_PREFIX = 'AUTO: '


def storage_problem(status, recorded: str | None,
                    recorded_must_be_mounted: bool | None = False
                    ) -> str | None:
    """Why nothing may be written to this host's storage now; None if
    nothing is wrong. ``recorded`` and ``recorded_must_be_mounted``: what
    the host's service row records."""
    if status.unavailable_reason:
        return status.unavailable_reason
    if recorded_must_be_mounted and not status.mounted:
        # Identities and path first: the service row keeps 255
        # characters of this.
        return ('instance storage not mounted: storage identity %s is '
                'recorded as mounted at %s, which is not a mount point now '
                'and shows %s. Mount it, or run "nova-manage host '
                'init-storage --force" on this host to make that directory '
                'its storage' % (recorded, status.instances_path,
                                 status.describe()))
    if recorded and not status.identity:
        return ('instance storage is missing: this host recorded storage '
                'identity %s, but %s (is instances_path mounted?)'
                % (recorded, status.unknown_reason))
    return None


def _describe_record(identity, must_be_mounted) -> str:
    return '%s%s' % (identity or 'none',
                     ' (must be a mount point)' if must_be_mounted else '')


class StorageReporter:
    """Keeps one compute host's service row in step with its storage."""

    def __init__(self, host: str, driver):
        self.host = host
        self.driver = driver
        self._last_problem = None
        self._checked_disabled = False
        # What the row recorded when last seen: the identity, and whether
        # its storage must be a mount point.
        self._recorded = None
        self._recorded_mounted = False

    def service_row(self, context):
        try:
            return objects.Service.get_by_host_and_binary(
                context, self.host, COMPUTE_BINARY)
        except exception.ServiceNotFound:
            return None

    def record_at_start(self, context):
        """At ``init_host``: create the identity of a new host's storage
        if this is its first start, then record what the storage says.
        The storage status as read."""
        row = self.service_row(context)
        if row is None:
            LOG.warning('No compute service row for host %s yet; its '
                        'storage identity is not recorded', self.host)
            return self.driver.get_storage_status()
        if not row.storage_identity:
            self.driver.init_storage_identity()
        status = self.update(row, fresh=True)
        row.save()
        return status

    def _recorded_in(self, row):
        """(identity, must be mounted) as recorded. The row may have been
        read before init_host recorded the identity: what this reporter
        recorded itself counts too."""
        if row.storage_identity:
            return row.storage_identity, bool(row.storage_must_be_mounted)
        return self._recorded, bool(self._recorded_mounted)

    def _reread(self, row):
        """Take what the database records now into ``row`` (an operator
        may have recorded another storage since the service read it)."""
        current = objects.Service.get_by_id(
            nova_context.get_admin_context(), row.id)
        for name in ('storage_identity', 'storage_must_be_mounted'):
            if getattr(row, name) != getattr(current, name):
                setattr(row, name, getattr(current, name))
        if current.storage_identity:
            self._recorded = current.storage_identity
            self._recorded_mounted = bool(current.storage_must_be_mounted)

    def update(self, row, fresh=False):
        """Set ``row``'s storage fields to what the storage says now (in
        memory: the caller saves or heartbeats). The storage status."""
        status = self.driver.get_storage_status()
        recorded, must_mount = self._recorded_in(row)
        disagree = (status.identity != recorded
                    or bool(status.must_be_mounted) != must_mount
                    or storage_problem(status, recorded, must_mount))
        if disagree and not fresh and row.id is not None:
            # Rare (a remount, a missing mount): worth one read, so that
            # an operator's record is honoured without a restart.
            self._reread(row)
            recorded, must_mount = self._recorded_in(row)
        problem = storage_problem(status, recorded, must_mount)
        if problem is None and status.identity:
            if status.identity != recorded:
                if recorded:
                    LOG.warning('Storage identity of host %(host)s changes '
                                'from %(old)s to %(new)s (instances_path '
                                'remounted?)',
                                {'host': self.host,
                                 'old': _describe_record(recorded,
                                                         must_mount),
                                 'new': _describe_record(
                                     status.identity,
                                     status.must_be_mounted)})
                row.storage_identity = status.identity
            if bool(status.must_be_mounted) != must_mount:
                row.storage_must_be_mounted = status.must_be_mounted
            recorded, must_mount = status.identity, status.must_be_mounted
        self._recorded = row.storage_identity or recorded
        self._recorded_mounted = bool(must_mount)
        if fresh or problem != self._last_problem or \
                not self._checked_disabled:
            self._set_disabled(row, problem, fresh)
        self._last_problem = problem
        return status

    def _set_disabled(self, row, problem, fresh):
        if not fresh and row.id is not None:
            # The operator may have changed it since this row was read.
            current = objects.Service.get_by_id(
                nova_context.get_admin_context(), row.id)
            disabled, reason = current.disabled, current.disabled_reason
        else:
            disabled, reason = row.disabled, row.disabled_reason
        self._checked_disabled = True
        automatic = disabled and (reason or '').startswith(AUTO_PREFIX)
        if problem:
            LOG.error('Host %(host)s: %(problem)s; building and evacuating '
                      'nothing here, deciding nothing that could delete',
                      {'host': self.host, 'problem': problem})
            if not disabled or automatic:
                row.disabled = True
                # The column holds 255 characters; the log line above has
                # the whole text.
                row.disabled_reason = (AUTO_PREFIX + problem)[:255]
        elif automatic:
            LOG.info('Host %s: instance storage is back; enabling the '
                     'service again', self.host)
            row.disabled = False
            row.disabled_reason = None

    def check_writable(self) -> None:
        """``StorageUnavailable`` unless this host's storage is there, read
        live now (before a build or an evacuation writes to it)."""
        problem = storage_problem(self.driver.get_storage_status(),
                                  self._recorded, self._recorded_mounted)
        if problem:
            # Named: the fault is read where it is not known which host
            # refused.
            raise exception.StorageUnavailable(
                reason='host %s: %s' % (self.host, problem))
