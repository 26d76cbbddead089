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

Example (the service's heartbeat)::

    reporter = StorageReporter(host, driver)
    reporter.update(service_row)     # fields changed in memory
    service_row.heartbeat()          # written with the heartbeat
"""

from oslo_log import log as logging

from nova import context as nova_context
from nova import exception
from nova import objects

LOG = logging.getLogger(__name__)

COMPUTE_BINARY = 'nova-compute'
AUTO_PREFIX = 'AUTO: '


def storage_problem(status, recorded: str | None) -> str | None:
    """Why nothing may be written to this host's storage now; None if
    nothing is wrong."""
    if status.unavailable_reason:
        return status.unavailable_reason
    if recorded and not status.identity:
        return ('instance storage is missing: this host recorded storage '
                'identity %s, but %s (is instances_path mounted?)'
                % (recorded, status.unknown_reason))
    return None


class StorageReporter:
    """Keeps one compute host's service row in step with its storage."""

    def __init__(self, host: str, driver):
        self.host = host
        self.driver = driver
        self._last_problem = None
        self._checked_disabled = False
        # The identity the row recorded when last seen.
        self._recorded = None

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

    def update(self, row, fresh=False):
        """Set ``row``'s storage fields to what the storage says now (in
        memory: the caller saves or heartbeats). The storage status."""
        status = self.driver.get_storage_status()
        # The row may have been read before init_host recorded the
        # identity: what this reporter recorded itself counts too.
        recorded = row.storage_identity or self._recorded
        if status.identity and status.identity != recorded:
            if recorded:
                LOG.warning('Storage identity of host %(host)s changes from '
                            '%(old)s to %(new)s (instances_path remounted?)',
                            {'host': self.host, 'old': recorded,
                             'new': status.identity})
            row.storage_identity = status.identity
        problem = storage_problem(status, recorded)
        self._recorded = row.storage_identity
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
                row.disabled_reason = AUTO_PREFIX + problem
        elif automatic:
            LOG.info('Host %s: instance storage is back; enabling the '
                     'service again', self.host)
            row.disabled = False
            row.disabled_reason = None

    def check_writable(self) -> None:
        """``StorageUnavailable`` unless this host's storage is there, read
        live now (before a build or an evacuation writes to it)."""
        problem = storage_problem(self.driver.get_storage_status(),
                                  self._recorded)
        if problem:
            raise exception.StorageUnavailable(reason=problem)
