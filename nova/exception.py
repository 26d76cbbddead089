"""The project's exceptions.

Each carries a message template (``msg_fmt``) filled from keyword arguments
and the HTTP status the REST API maps it to (``code``). Layers below the API
raise these, never bare library errors: the libvirt boundary (``host.py``,
``guest.py``) converts ``libvirtError`` into them.
"""


class NovaException(Exception):
    msg_fmt = 'An unknown exception occurred.'
    code = 500

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                # A missing keyword must not hide the original failure.
                message = self.msg_fmt
        self.message = str(message)
        super().__init__(self.message)

    def format_message(self):
        return self.message


def message_of(exc: BaseException) -> str:
    """What an operator should read about ``exc``: a NovaException's
    message, another exception's text, or at least its class name."""
    if isinstance(exc, NovaException):
        message = exc.format_message()
    else:
        message = str(exc)
    return message or type(exc).__name__


class Invalid(NovaException):
    msg_fmt = 'Invalid input: %(reason)s'
    code = 400


class InvalidInput(Invalid):
    msg_fmt = 'Invalid input received: %(reason)s'


class InvalidUUID(Invalid):
    msg_fmt = 'Expected a UUID but received %(uuid)s.'


class InvalidConfiguration(Invalid):
    msg_fmt = 'Configuration is invalid: %(reason)s'


class InvalidInstancePath(Invalid):
    msg_fmt = ('Refusing to use path %(path)s: it is not inside the '
               'instances directory %(instances_path)s.')


class InvalidSharedStorage(Invalid):
    msg_fmt = '%(reason)s'


class NotFound(NovaException):
    msg_fmt = 'Resource could not be found.'
    code = 404


class InstanceNotFound(NotFound):
    msg_fmt = 'Instance %(instance_id)s could not be found.'


class MigrationNotFound(NotFound):
    msg_fmt = 'Migration %(migration_id)s could not be found.'


class InstanceActionNotFound(NotFound):
    msg_fmt = ('Action for request_id %(request_id)s on instance '
               '%(instance_uuid)s not found.')


class ServiceNotFound(NotFound):
    msg_fmt = 'Service %(service_id)s could not be found.'


class ComputeHostNotFound(NotFound):
    msg_fmt = 'Compute host %(host)s could not be found.'


class ImageNotFound(NotFound):
    msg_fmt = 'Image %(image_id)s could not be found.'


class FlavorNotFound(NotFound):
    msg_fmt = 'Flavor %(flavor_id)s could not be found.'


class NetworkNotFound(NotFound):
    msg_fmt = 'Network %(network_id)s could not be found.'


class PortNotFound(NotFound):
    msg_fmt = 'Port %(port_id)s could not be found.'


class Conflict(NovaException):
    msg_fmt = 'Conflict: %(reason)s'
    code = 409


class InstanceInvalidState(Conflict):
    msg_fmt = ('Instance %(instance_uuid)s in %(attr)s %(state)s. Cannot '
               '%(method)s while the instance is in this state.')


class UnexpectedTaskStateError(Conflict):
    msg_fmt = ('Conflict updating instance %(instance_uuid)s. Expected: '
               '%(expected)s. Actual: %(actual)s')


class UnexpectedDeletingTaskStateError(UnexpectedTaskStateError):
    pass


class InstanceExists(Conflict):
    msg_fmt = 'Instance %(name)s already exists.'


class ServiceTopicExists(Conflict):
    msg_fmt = 'Service with host %(host)s binary %(binary)s exists.'


class EvacuationInProgress(Conflict):
    msg_fmt = ('Instance %(instance_uuid)s is already being evacuated '
               '(migration %(migration_id)s).')


class ComputeServiceInUse(Conflict):
    msg_fmt = 'Compute service of %(host)s is still in use.'


class ComputeServiceUnavailable(Invalid):
    # NOTE: a client error, as in Nova: the request names a host whose
    # compute service is down (evacuate to HOST); asking again will not
    # help until the operator acts, so it is not a 503.
    msg_fmt = 'Compute service of %(host)s is unavailable at this time.'


class ComputeServiceStillUp(Invalid):
    msg_fmt = ('Compute service of %(host)s is still in use: it is up, '
               'evacuate needs it down or forced down.')


class EvacuationTargetStateUnsupported(Conflict):
    msg_fmt = ('An evacuation that ends %(target_state)s needs every '
               'service at RPC version 1.1; some are older (the RPC '
               'version cap is lower). Use microversion 2.94 or earlier '
               'until the upgrade is done.')


class NoValidHost(NovaException):
    msg_fmt = 'No valid host was found. %(reason)s'
    code = 400


class HostClaimBusy(NovaException):
    msg_fmt = ('Another process kept the claim lease on host %(host)s for '
               'more than %(seconds)s s')
    code = 409


class DiskLeaseHeld(Conflict):
    """libvirt refused to start a guest: a disk of it is in use elsewhere.

    Its lease (libvirt's lock manager, ``virtlockd``) or QEMU's own lock
    on the image is held by another process: a QEMU on another host that
    shares the storage (a host that is partitioned, not dead), or another
    domain on this host. Raised at the libvirt boundary (``guest.py``)
    with what libvirt knows, the disk; who holds it is named by whoever
    knows (``holder``: a host from the database; ``local_domain``: a
    domain of this very host). The message starts with what to do.
    """
    msg_fmt = ('disk in use by another host: fence %(holder)s first '
               '(libvirt refused to start the guest: %(disk)s is locked, '
               '%(reason)s)')
    UNKNOWN_HOLDER = 'the host that runs it'

    def __init__(self, message=None, disk='a disk of the guest',
                 holder=None, local_domain=None, reason=''):
        self.disk = disk
        self.holder = holder
        self.local_domain = local_domain
        self.reason = reason
        if message is None and local_domain:
            message = ('disk in use by domain %s on this host: stop it '
                       'first (libvirt refused to start the guest: %s is '
                       'locked, %s)' % (local_domain, disk, reason))
        super().__init__(message, disk=disk,
                         holder=holder or self.UNKNOWN_HOLDER,
                         reason=reason)

    @property
    def holder_known(self) -> bool:
        return bool(self.holder or self.local_domain)

    def naming(self, holder: str) -> 'DiskLeaseHeld':
        """The same refusal, naming the host that holds the disk."""
        return type(self)(disk=self.disk, holder=holder,
                          reason=self.reason)


class HypervisorUnavailable(NovaException):
    msg_fmt = 'Connection to the hypervisor is broken on host: %(host)s'
    code = 503


class InternalError(NovaException):
    msg_fmt = '%(err)s'


class InstanceDeployFailure(NovaException):
    msg_fmt = 'Failed to deploy instance: %(reason)s'


class BuildAbortException(NovaException):
    msg_fmt = 'Build of instance %(instance_uuid)s aborted: %(reason)s'


class InstancePowerOnFailure(NovaException):
    msg_fmt = 'Failed to power on instance: %(reason)s'


class InstancePowerOffFailure(NovaException):
    msg_fmt = 'Failed to power off instance: %(reason)s'


class InstanceRebootFailure(NovaException):
    msg_fmt = 'Failed to reboot instance: %(reason)s'


class InstanceSuspendFailure(NovaException):
    msg_fmt = 'Failed to suspend instance: %(reason)s'


class InstanceResumeFailure(NovaException):
    msg_fmt = 'Failed to resume instance: %(reason)s'


class InstanceTerminationFailure(NovaException):
    msg_fmt = 'Failed to terminate instance: %(reason)s'


class VirtualInterfaceCreateException(NovaException):
    msg_fmt = 'Virtual Interface creation failed'


class VirtualInterfacePlugException(NovaException):
    msg_fmt = '%(reason)s'


class ImageUnacceptable(Invalid):
    msg_fmt = 'Image %(image_id)s is unacceptable: %(reason)s'


class DiskCreationFailed(NovaException):
    msg_fmt = 'Could not create disk %(path)s: %(reason)s'


class InjectedFailure(NovaException):
    """Raised by the fake driver when a test told it to fail at a step."""
    msg_fmt = 'Injected failure at step %(step)s'


class DBNotAllowed(NovaException):
    msg_fmt = '%(binary)s attempted direct database access'


class UnexpectedVMStateError(UnexpectedTaskStateError):
    msg_fmt = ('Conflict updating instance %(instance_uuid)s. Expected '
               'vm_state: %(expected)s. Actual: %(actual)s')


class InstanceActionEventNotFound(NotFound):
    msg_fmt = 'Event %(event)s not found for action id %(action_id)s.'


class FlavorExists(Conflict):
    msg_fmt = 'Flavor with ID %(flavor_id)s or name %(name)s exists.'


class MigrationExists(Conflict):
    msg_fmt = 'Migration %(migration_id)s exists.'


class NetworkExists(Conflict):
    msg_fmt = 'Network %(network_id)s exists.'


class PortExists(Conflict):
    msg_fmt = ('Port %(port_id)s or MAC address %(mac_address)s is '
               'already in use.')


class FlavorDiskSmallerThanImage(Invalid):
    msg_fmt = ('Flavor root disk (%(flavor_size)d bytes) is smaller than '
               'the image %(image_id)s (%(image_size)d bytes).')


class DiskNotFound(NotFound):
    msg_fmt = 'No disk at %(location)s'


class UnexpectedMigrationStatusError(Conflict):
    msg_fmt = ('Conflict updating migration %(migration_id)s. Expected '
               'status: %(expected)s. Actual: %(actual)s')


class InvalidMigrationTransition(NovaException):
    """A step the evacuation state table does not have for that party."""
    msg_fmt = ('Migration %(migration_id)s cannot go to %(to)s by '
               '%(by)s: %(reason)s.')


class UnexpectedPortStatusError(Conflict):
    msg_fmt = ('Conflict updating port %(port_id)s. Expected status: '
               '%(expected)s. Actual: %(actual)s')


class InvalidAPIVersionString(Invalid):
    msg_fmt = ('API Version String %(version)s is of invalid format. Must '
               'be of format MajorNum.MinorNum.')


class InvalidGlobalAPIVersion(NovaException):
    msg_fmt = ('Version %(req_ver)s is not supported by the API. Minimum '
               'is %(min_ver)s and maximum is %(max_ver)s.')
    code = 406


class NotAuthenticated(NovaException):
    msg_fmt = 'Authentication required: %(reason)s'
    code = 401


class PolicyNotAuthorized(NovaException):
    msg_fmt = "Policy doesn't allow %(action)s to be performed."
    code = 403


class ValidationError(Invalid):
    msg_fmt = '%(detail)s'


class OperationInterrupted(NovaException):
    """An operation that a restart of the compute service cut short."""
    msg_fmt = ('%(operation)s was interrupted by a restart of the compute '
               'service on %(host)s; the hypervisor reports the guest '
               '%(power_state)s.')


class NetworkAmbiguous(Invalid):
    msg_fmt = 'More than one possible network found: %(reason)s'
    code = 409


class FixedIpAlreadyInUse(Conflict):
    msg_fmt = ('Fixed IP address %(address)s is already in use on network '
               '%(network_id)s.')


class NoMoreFixedIps(Conflict):
    msg_fmt = 'No more IP addresses available on network %(network)s.'


class InstanceEventsCancelled(NovaException):
    msg_fmt = ('Stopped waiting for events of instance %(instance_uuid)s: '
               '%(reason)s')


class AttemptSuperseded(UnexpectedTaskStateError):
    """The attempt's token is no longer the instance's: reset-state, a
    delete or a newer attempt took the instance over. The attempt stops
    where it stands and undoes only what it made; the instance's state
    is the new owner's to set (no fault)."""
    msg_fmt = ('Attempt %(attempt)s of instance %(instance_uuid)s is no '
               'longer current (%(why)s); it stopped before %(step)s and '
               'undoes only what it made.')


class AttemptCheckFailed(NovaException):
    """Whether the attempt is still current could not be read: it stops
    all the same (never act on a token that was not confirmed)."""
    msg_fmt = ('Could not confirm that attempt %(attempt)s is still '
               'current before %(step)s (%(reason)s); stopped.')


class InstanceNotOnThisHost(UnexpectedTaskStateError):
    """The row places the instance elsewhere (an evacuation moved it)."""
    msg_fmt = ('Instance %(instance_uuid)s is on host %(actual)s, not on '
               '%(expected)s; not touching it here.')


class InvalidStorageIdentity(Invalid):
    msg_fmt = 'Storage identity cannot be used: %(reason)s'


class StorageUnavailable(NovaException):
    """This host's instance storage is not there (a mount is missing)."""
    msg_fmt = '%(reason)s'
    code = 409


class StorageEvidenceStale(Invalid):
    """This host's storage identity differs from what it recorded."""
    msg_fmt = ('Host %(host)s reads storage identity %(live)s at '
               '%(path)s but recorded %(recorded)s; refusing decisions '
               'that may delete until its next heartbeat records the '
               'identity it reads.')


class InvalidOwnershipStamp(Invalid):
    msg_fmt = 'Ownership stamp %(path)s cannot be trusted: %(reason)s'


class InvalidJournal(Invalid):
    msg_fmt = ('Spawn journal %(path)s cannot be trusted: %(reason)s; '
               'kept, nothing of it undone.')


class QuarantineUnusable(NovaException):
    msg_fmt = 'Quarantine directory %(path)s cannot be used: %(reason)s'


class UnknownDiskFormat(Invalid):
    """A disk whose format nothing recorded: never probed."""
    msg_fmt = ('Disk %(path)s has no recorded format in disk.info '
               '(%(reason)s); refusing to guess it: a guest could have '
               'written any header into it.')
