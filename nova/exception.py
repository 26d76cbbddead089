"""The project's exceptions.

Each carries a message template (``msg_fmt``) filled from keyword arguments
and the HTTP status the REST API maps it to (``code``). Layers below the API
raise these, never bare library errors: the libvirt boundary (``host.py``,
``guest.py``) converts ``libvirtError`` into them.

The message is the operator's: it names hosts, paths and storage
identities. What the owner of a server reads about one of its faults is
``safe_message_of``: the class's ``safe_msg``, a plain sentence that is
never filled from the exception's values, or else the sentence of its
HTTP code (doc/source/cleanup.rst, "Who reads a fault").
"""


class NovaException(Exception):
    msg_fmt = 'An unknown exception occurred.'
    code = 500
    # What the owner of a server may read when this becomes one of its
    # faults (or the details of a failed action event). A constant: the
    # values the message is filled from name hosts and paths, and a host
    # can be named anything, so no scrubbing of the message can be
    # trusted. None: the sentence of ``code`` (``safe_message_for_code``).
    safe_msg: str | None = None

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


def code_of(exc: BaseException) -> int:
    """The HTTP code of ``exc``: its ``code`` when an int, else 500."""
    code = getattr(exc, 'code', 500)
    # NOTE: bool is an int, and no HTTP code.
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    return 500


# The owner's sentence for a failure whose exception has no ``safe_msg``
# (or is no project exception), by HTTP code.
_SAFE_BY_CODE = {
    400: 'The operation was refused as it cannot be carried out.',
    404: 'Something the operation needs could not be found.',
    409: 'The operation conflicts with the current state of the server.',
    503: 'A service the operation needs is unavailable; try again later.',
}
# Any other code; 500 above all: a failure in the cloud, not the request.
GENERIC_SAFE_MESSAGE = ('The operation failed because of an error in the '
                        'cloud; an administrator can see its cause.')


def safe_message_for_code(code: int | None) -> str:
    """The owner's sentence for a failure with HTTP ``code``."""
    return _SAFE_BY_CODE.get(code or 500, GENERIC_SAFE_MESSAGE)


def safe_message_of(exc: BaseException) -> str:
    """What the owner of a server may read about ``exc``: never the
    message (``message_of`` is the operator's), but the class's
    ``safe_msg`` or the sentence of its code. Another library's
    exception has no such sentence: it gets the one of its code."""
    if isinstance(exc, NovaException) and exc.safe_msg:
        return exc.safe_msg
    return safe_message_for_code(code_of(exc))


class Invalid(NovaException):
    msg_fmt = 'Invalid input: %(reason)s'
    code = 400


class InvalidInput(Invalid):
    msg_fmt = 'Invalid input received: %(reason)s'


class InvalidUUID(Invalid):
    msg_fmt = 'Expected a UUID but received %(uuid)s.'


class InvalidConfiguration(Invalid):
    msg_fmt = 'Configuration is invalid: %(reason)s'
    safe_msg = ('The operation failed because of a configuration error in '
                'the cloud.')


class InvalidInstancePath(Invalid):
    msg_fmt = ('Refusing to use path %(path)s: it is not inside the '
               'instances directory %(instances_path)s.')
    safe_msg = ("The operation was refused: the server's files are not "
                'where its compute host keeps them.')


class InvalidSharedStorage(Invalid):
    msg_fmt = '%(reason)s'
    safe_msg = ('The evacuation was refused: it could not be confirmed '
                "that the new host may use the server's disks safely.")


class InvalidKeypair(Invalid):
    msg_fmt = 'Keypair data is invalid: %(reason)s'


class NotFound(NovaException):
    msg_fmt = 'Resource could not be found.'
    code = 404


class InstanceNotFound(NotFound):
    msg_fmt = 'Instance %(instance_id)s could not be found.'
    safe_msg = 'The server could not be found.'


class MigrationNotFound(NotFound):
    msg_fmt = 'Migration %(migration_id)s could not be found.'
    safe_msg = 'The migration of the server could not be found.'


class HostEvacuationNotFound(NotFound):
    msg_fmt = 'Host evacuation %(evacuation_id)s could not be found.'


class InstanceActionNotFound(NotFound):
    msg_fmt = ('Action for request_id %(request_id)s on instance '
               '%(instance_uuid)s not found.')


class ServiceNotFound(NotFound):
    msg_fmt = 'Service %(service_id)s could not be found.'
    safe_msg = 'A compute service the operation needs could not be found.'


class ComputeHostNotFound(NotFound):
    msg_fmt = 'Compute host %(host)s could not be found.'
    safe_msg = 'The requested compute host could not be found.'


class HypervisorNotFound(NotFound):
    msg_fmt = 'Hypervisor with ID %(hypervisor_id)s could not be found.'
    safe_msg = 'The requested hypervisor could not be found.'


class ImageNotFound(NotFound):
    msg_fmt = 'Image %(image_id)s could not be found.'
    safe_msg = 'The image of the server could not be found.'


class ImageMetadataKeyNotFound(NotFound):
    msg_fmt = 'Image %(image_id)s has no metadata with key %(key)s.'


class ImageServiceUnavailable(NovaException):
    msg_fmt = 'The Image service (Glance) cannot be reached: %(reason)s'
    safe_msg = 'The Image service is unavailable.'
    code = 503


class ImageServiceError(NovaException):
    msg_fmt = 'The Image service (Glance) answered %(status)s: %(reason)s'
    safe_msg = 'The Image service refused the request.'
    code = 502


class ImageForbidden(NovaException):
    msg_fmt = 'The Image service does not allow this on image %(image_id)s.'
    code = 403


class FlavorNotFound(NotFound):
    msg_fmt = 'Flavor %(flavor_id)s could not be found.'
    safe_msg = 'The flavor of the server could not be found.'


class NetworkNotFound(NotFound):
    msg_fmt = 'Network %(network_id)s could not be found.'
    safe_msg = 'A network of the server could not be found.'


class PortNotFound(NotFound):
    msg_fmt = 'Port %(port_id)s could not be found.'
    safe_msg = 'A port of the server could not be found.'


class KeypairNotFound(NotFound):
    msg_fmt = 'Keypair %(name)s not found for user %(user_id)s'
    safe_msg = 'The key pair could not be found.'


class InstanceGroupNotFound(NotFound):
    msg_fmt = 'Instance group %(group_uuid)s could not be found.'
    safe_msg = 'The server group could not be found.'


class MetadataItemNotFound(NotFound):
    msg_fmt = ('Metadata item %(key)s of instance %(instance_uuid)s was '
               'not found.')
    safe_msg = 'The metadata item of the server could not be found.'


class Conflict(NovaException):
    msg_fmt = 'Conflict: %(reason)s'
    code = 409


class InstanceIsLocked(Conflict):
    msg_fmt = 'Instance %(instance_uuid)s is locked'
    safe_msg = 'The server is locked: only an administrator may act on it.'


class HostEvacuationInProgress(Conflict):
    msg_fmt = ('A host-evacuate of %(host)s is already %(status)s '
               '(%(evacuation_id)s): follow it, or wait for its end.')


class InstanceInvalidState(Conflict):
    msg_fmt = ('Instance %(instance_uuid)s in %(attr)s %(state)s. Cannot '
               '%(method)s while the instance is in this state.')
    safe_msg = 'The server is not in a state that allows the operation.'


class UnexpectedTaskStateError(Conflict):
    msg_fmt = ('Conflict updating instance %(instance_uuid)s. Expected: '
               '%(expected)s. Actual: %(actual)s')
    safe_msg = ('Another operation changed the server meanwhile; this one '
                'stopped.')


class UnexpectedDeletingTaskStateError(UnexpectedTaskStateError):
    pass


class InstanceExists(Conflict):
    msg_fmt = 'Instance %(name)s already exists.'
    safe_msg = 'A guest of the server already exists on its compute host.'


class KeyPairExists(Conflict):
    msg_fmt = "Key pair '%(key_name)s' already exists."


class ServiceTopicExists(Conflict):
    msg_fmt = 'Service with host %(host)s binary %(binary)s exists.'


class ComputeServiceUnavailable(Invalid):
    # NOTE: a client error, as in Nova: the request names a host whose
    # compute service is down (evacuate to HOST); asking again will not
    # help until the operator acts, so it is not a 503.
    msg_fmt = 'Compute service of %(host)s is unavailable at this time.'
    safe_msg = 'The compute service the operation needs is unavailable.'


class ComputeServiceStillUp(Invalid):
    msg_fmt = ('Compute service of %(host)s is still in use: it is up, '
               'evacuate needs it down or forced down.')
    safe_msg = ('The evacuation was refused: the compute host of the '
                'server is still up.')


class PauseUnsupported(Conflict):
    msg_fmt = ('Pause and unpause need every compute service at RPC '
               'version 1.4; some are older (the RPC version cap is '
               'lower). Retry once the upgrade is done.')
    safe_msg = ('The request was refused: not every service of the cloud '
                'supports pausing yet.')


class EvacuationTargetStateUnsupported(Conflict):
    msg_fmt = ('An evacuation that ends %(target_state)s needs every '
               'service at RPC version 1.1; some are older (the RPC '
               'version cap is lower). Use microversion 2.94 or earlier '
               'until the upgrade is done.')
    safe_msg = ('The evacuation was refused: not every service of the '
                'cloud supports it yet.')


class NoValidHost(NovaException):
    msg_fmt = 'No valid host was found. %(reason)s'
    safe_msg = 'No compute host can take the server.'
    code = 400


class GroupPolicyUnsatisfied(NoValidHost):
    """No host with room keeps a server group's hard policy."""
    msg_fmt = ('No valid host was found. Server group %(group)s '
               '(%(policy)s): %(reason)s')
    safe_msg = ('No compute host can take the server without breaking '
                'the policy of its server group.')


class HostClaimBusy(NovaException):
    msg_fmt = ('Another process kept the claim lease on host %(host)s for '
               'more than %(seconds)s s')
    safe_msg = 'The compute host was busy; try again later.'
    code = 409


class HostClaimLeaseLost(NovaException):
    msg_fmt = ('The claim lease on host %(host)s was taken over by another '
               'claimer before this claim was written (it took more than '
               '%(seconds)s s); the claim was not written')
    safe_msg = 'The compute host was busy; try again later.'
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
    safe_msg = ('The server was not started: a disk of it is in use '
                'elsewhere, and must be released first.')
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
    safe_msg = 'The hypervisor of the compute host is unavailable.'
    code = 503


class InternalError(NovaException):
    msg_fmt = '%(err)s'


class InstancePowerOnFailure(NovaException):
    msg_fmt = 'Failed to power on instance: %(reason)s'
    safe_msg = 'The server could not be powered on.'


class InstancePowerOffFailure(NovaException):
    msg_fmt = 'Failed to power off instance: %(reason)s'
    safe_msg = 'The server could not be powered off.'


class InstanceRebootFailure(NovaException):
    msg_fmt = 'Failed to reboot instance: %(reason)s'
    safe_msg = 'The server could not be rebooted.'


class InstanceSuspendFailure(NovaException):
    msg_fmt = 'Failed to suspend instance: %(reason)s'
    safe_msg = 'The server could not be suspended.'


class InstanceResumeFailure(NovaException):
    msg_fmt = 'Failed to resume instance: %(reason)s'
    safe_msg = 'The server could not be resumed.'


class InstancePauseFailure(NovaException):
    msg_fmt = 'Failed to pause instance: %(reason)s'
    safe_msg = 'The server could not be paused.'


class InstanceUnpauseFailure(NovaException):
    msg_fmt = 'Failed to unpause instance: %(reason)s'
    safe_msg = 'The server could not be unpaused.'


class VirtualInterfaceCreateException(NovaException):
    msg_fmt = 'Virtual Interface creation failed'
    safe_msg = 'The network interfaces of the server could not be created.'


class VirtualInterfacePlugException(NovaException):
    msg_fmt = '%(reason)s'
    safe_msg = 'A network interface of the server could not be plugged in.'


class ImageUnacceptable(Invalid):
    msg_fmt = 'Image %(image_id)s is unacceptable: %(reason)s'
    safe_msg = 'The image of the server cannot be used.'


class DiskCreationFailed(NovaException):
    msg_fmt = 'Could not create disk %(path)s: %(reason)s'
    safe_msg = 'A disk of the server could not be created.'


class InjectedFailure(NovaException):
    """Raised by the fake driver when a test told it to fail at a step."""
    msg_fmt = 'Injected failure at step %(step)s'


class UnexpectedVMStateError(UnexpectedTaskStateError):
    msg_fmt = ('Conflict updating instance %(instance_uuid)s. Expected '
               'vm_state: %(expected)s. Actual: %(actual)s')


class InstanceActionEventNotFound(NotFound):
    msg_fmt = 'Event %(event)s not found for action id %(action_id)s.'


class FlavorExists(Conflict):
    msg_fmt = 'Flavor with ID %(flavor_id)s or name %(name)s exists.'


class FlavorExtraSpecsNotFound(NotFound):
    msg_fmt = ('Flavor %(flavor_id)s has no extra specs with key '
               '%(extra_specs_key)s.')


class FlavorAccessExists(Conflict):
    msg_fmt = ('Flavor access already exists for flavor %(flavor_id)s and '
               'project %(project_id)s combination.')


class FlavorAccessNotFound(NotFound):
    msg_fmt = ('Flavor access not found for %(flavor_id)s / '
               '%(project_id)s combination.')


class FlavorIsPublic(Conflict):
    msg_fmt = ('Flavor %(flavor_id)s is public: every project has access '
               'to it.')


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
    safe_msg = 'The root disk of the flavor is smaller than the image.'


class DiskNotFound(NotFound):
    msg_fmt = 'No disk at %(location)s'
    safe_msg = 'A disk of the server could not be found.'


class UnexpectedMigrationStatusError(Conflict):
    msg_fmt = ('Conflict updating migration %(migration_id)s. Expected '
               'status: %(expected)s. Actual: %(actual)s')
    safe_msg = ('The migration of the server changed meanwhile; this '
                'operation stopped.')


class InvalidMigrationTransition(NovaException):
    """A step the evacuation state table does not have for that party."""
    msg_fmt = ('Migration %(migration_id)s cannot go to %(to)s by '
               '%(by)s: %(reason)s.')
    safe_msg = 'The migration of the server could not go on.'


class UnexpectedPortStatusError(Conflict):
    msg_fmt = ('Conflict updating port %(port_id)s. Expected status: '
               '%(expected)s. Actual: %(actual)s')
    safe_msg = 'A port of the server changed meanwhile; the operation stopped.'


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


class QuotaError(NovaException):
    """A request that would take more than a quota allows: nothing of it
    was kept."""
    msg_fmt = 'Quota exceeded: code=%(code)s'
    code = 403


class TooManyInstances(QuotaError):
    msg_fmt = ('Quota exceeded for %(overs)s: Requested %(req)s, but '
               'already used %(used)s of %(allowed)s %(overs)s')


class KeypairLimitExceeded(QuotaError):
    msg_fmt = 'Maximum number of key pairs exceeded'


class MetadataLimitExceeded(QuotaError):
    msg_fmt = 'Maximum number of metadata items exceeds %(allowed)d'


class InvalidQuotaValue(Invalid):
    msg_fmt = '%(reason)s'


class OperationInterrupted(NovaException):
    """An operation that a restart of the compute service cut short."""
    msg_fmt = ('%(operation)s was interrupted by a restart of the compute '
               'service on %(host)s; the hypervisor reports the guest '
               '%(power_state)s.')
    safe_msg = ('The operation was interrupted by a restart of the compute '
                'service.')


class NetworkAmbiguous(Invalid):
    msg_fmt = 'More than one possible network found: %(reason)s'
    safe_msg = ('More than one network can serve the server; the request '
                'must name one.')
    code = 409


class FixedIpAlreadyInUse(Conflict):
    msg_fmt = ('Fixed IP address %(address)s is already in use on network '
               '%(network_id)s.')
    safe_msg = 'The requested IP address is already in use.'


class NoMoreFixedIps(Conflict):
    msg_fmt = 'No more IP addresses available on network %(network)s.'
    safe_msg = 'A network of the server has no free IP address left.'


class InstanceEventsCancelled(NovaException):
    msg_fmt = ('Stopped waiting for events of instance %(instance_uuid)s: '
               '%(reason)s')
    safe_msg = 'The operation stopped waiting for events of the server.'


class AttemptSuperseded(UnexpectedTaskStateError):
    """The attempt's token is no longer the instance's: reset-state, a
    delete or a newer attempt took the instance over. The attempt stops
    where it stands and undoes only what it made; the instance's state
    is the new owner's to set (no fault)."""
    msg_fmt = ('Attempt %(attempt)s of instance %(instance_uuid)s is no '
               'longer current (%(why)s); it stopped before %(step)s and '
               'undoes only what it made.')
    safe_msg = 'A newer request took the server over; this operation stopped.'


class AttemptCheckFailed(NovaException):
    """Whether the attempt is still current could not be read: it stops
    all the same (never act on a token that was not confirmed)."""
    msg_fmt = ('Could not confirm that attempt %(attempt)s is still '
               'current before %(step)s (%(reason)s); stopped.')
    safe_msg = ('Whether the operation was still current could not be '
                'confirmed; it stopped.')


class InstanceNotOnThisHost(UnexpectedTaskStateError):
    """The row places the instance elsewhere (an evacuation moved it)."""
    msg_fmt = ('Instance %(instance_uuid)s is on host %(actual)s, not on '
               '%(expected)s; not touching it here.')
    safe_msg = ('The server is on another compute host now; the operation '
                'stopped.')


class InvalidStorageIdentity(Invalid):
    msg_fmt = 'Storage identity cannot be used: %(reason)s'
    safe_msg = 'The storage of the compute host could not be identified.'


class StorageUnavailable(NovaException):
    """This host's instance storage is not there (a mount is missing)."""
    msg_fmt = '%(reason)s'
    safe_msg = 'The storage of the compute host is unavailable.'
    code = 409


class StorageEvidenceStale(Invalid):
    """This host's storage identity differs from what it recorded."""
    msg_fmt = ('Host %(host)s reads storage identity %(live)s at '
               '%(path)s but recorded %(recorded)s; refusing decisions '
               'that may delete until its next heartbeat records the '
               'identity it reads.')
    safe_msg = ('The storage of the compute host changed since it was last '
                'checked; the operation was refused.')


class InvalidOwnershipStamp(Invalid):
    msg_fmt = 'Ownership stamp %(path)s cannot be trusted: %(reason)s'
    safe_msg = ('The files of the server on the compute host could not be '
                'verified; the operation was refused to keep its disks '
                'safe.')


class FileMadeElsewhere(Conflict):
    msg_fmt = ('%(path)s was made by someone else while attempt '
               '%(attempt)s wrote it; not replacing it.')
    safe_msg = ('Another operation on the server made its disks first; '
                'this one was stopped.')


class InvalidJournal(Invalid):
    msg_fmt = ('Spawn journal %(path)s cannot be trusted: %(reason)s; '
               'kept, nothing of it undone.')
    safe_msg = ('The record of an earlier build of the server could not be '
                'verified; nothing of it was undone.')


class QuarantineUnusable(NovaException):
    msg_fmt = 'Quarantine directory %(path)s cannot be used: %(reason)s'
    safe_msg = ('The compute host could not set aside files left by an '
                'earlier attempt.')


class UnknownDiskFormat(Invalid):
    """A disk whose format nothing recorded: never probed."""
    msg_fmt = ('Disk %(path)s has no recorded format in disk.info '
               '(%(reason)s); refusing to guess it: a guest could have '
               'written any header into it.')
    safe_msg = 'A disk of the server has no recorded format; it was not used.'


class HaLeaseLost(NovaException):
    msg_fmt = ('This monitor no longer holds the lease of region '
               '%(region)s (before %(before)s)')


class AggregateNotFound(NotFound):
    msg_fmt = 'Aggregate %(aggregate_id)s could not be found.'


class AggregateNameExists(Conflict):
    msg_fmt = 'Aggregate %(aggregate_name)s already exists.'


class AggregateHostExists(Conflict):
    msg_fmt = ('Aggregate %(aggregate_id)s already has host '
               '%(host)s.')


class AggregateHostNotFound(NotFound):
    msg_fmt = 'Aggregate %(aggregate_id)s has no host %(host)s.'


class InvalidAggregateAction(Invalid):
    msg_fmt = ('Cannot %(action)s aggregate %(aggregate_id)s. Reason: '
               '%(reason)s.')


class AggregateHostZoneConflict(Conflict):
    # NOTE: a 409 where InvalidAggregateAction is a 400: the reference
    # answers adding a host that would be in two zones so.
    msg_fmt = ('Cannot add host %(host)s to aggregate %(aggregate_id)s. '
               'Reason: %(reason)s.')


class InvalidAvailabilityZone(Invalid):
    msg_fmt = 'The requested availability zone is not available: %(zone)s'


class FlavorMemoryTooSmall(Invalid):
    msg_fmt = "Flavor's memory is too small for requested image."


class FlavorDiskTooSmall(Invalid):
    msg_fmt = "Flavor's disk is too small for requested image."


class ActionNotSupported(NovaException):
    msg_fmt = '%(action)s is not supported here: %(reason)s'
    code = 501


class HostActionNotSupported(NovaException):
    msg_fmt = ('%(action)s of host %(host)s is not supported by its '
               'hypervisor driver.')
    code = 501


class HaMasakariFailed(NovaException):
    msg_fmt = 'Masakari did not take the notification: %(reason)s'
