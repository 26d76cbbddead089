"""What an API request checks and changes before it hands off.

``API`` is the request side of every server operation: it checks the
instance against the one state table (``nova.compute.states``), takes the
instance by a compare-and-swap save of its task_state (of two concurrent
requests exactly one proceeds, the other gets a 409), records the instance
action, and casts to the instance's compute host (or, for evacuate, to the
conductor). The REST API calls these methods; nothing here talks to a
hypervisor.

Example::

    api = API(compute_rpcapi.ComputeAPI(), conductor_rpcapi.ConductorAPI())
    instance = api.create(ctx, 'vm1', image_ref, flavor_id='1')
    api.stop(ctx, instance)
    migration = api.evacuate(ctx, instance, host='compute2')
"""

import dataclasses
import functools

from oslo_log import log as logging
from oslo_utils import excutils

from nova.compute import availability_zones
from nova.compute import evacuation_states
from nova.compute import hostnames
from nova.compute import instance_lock
from nova.compute import port_bindings
from nova.compute import quotas
from nova.compute import rebuild_request
from nova.compute import shared_storage
from nova.compute import states
from nova.conf import CONF
from nova import exception
from nova.image import new_image
from nova.model import network as network_model
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova.network import api as network_api_mod
from nova import objects
from nova.objects import flavor_catalog
from nova.objects import host_evacuation as run_obj
from nova.objects import instance_group as group_obj
from nova.objects import instance_metadata as metadata_obj
from nova.objects import keypair as keypair_obj
from nova.objects import migration as migration_obj
from nova import phases
from nova.scheduler import target as target_mod

LOG = logging.getLogger(__name__)

RESET_STATES = {'active': vm_states.ACTIVE, 'error': vm_states.ERROR}
REBOOT_TYPES = ('SOFT', 'HARD')
# The vm_states in which a server's metadata may change (the reference's).
METADATA_VM_STATES = (vm_states.ACTIVE, vm_states.PAUSED,
                      vm_states.SUSPENDED, vm_states.STOPPED,
                      vm_states.SHELVED, vm_states.SHELVED_OFFLOADED)


@dataclasses.dataclass(frozen=True)
class ExternalEventResult:
    """What became of one external event (Nova's per-event answer)."""
    instance_uuid: str
    name: str
    tag: str | None
    status: str
    code: int


class API:

    def __init__(self, compute_rpcapi, conductor_api, network_api=None,
                 image_api=None, host_chooser=None):
        self.compute_rpcapi = compute_rpcapi
        self.conductor_api = conductor_api
        self.network_api = network_api
        self.image_api = image_api
        self.host_chooser = host_chooser or target_mod.TargetChooser()

    # -- reading -----------------------------------------------------------

    def get(self, context, uuid) -> objects.Instance:
        return objects.Instance.get_by_uuid(context, uuid)

    def get_all(self, context, host=None, vm_state=None,
                include_deleted=False) -> list:
        return objects.Instance.get_all(context, host=host,
                                        vm_state=vm_state,
                                        include_deleted=include_deleted)

    def get_host_uptime(self, context, host) -> str:
        """What ``uptime`` says on ``host`` (asked over RPC);
        ``ComputeServiceUnavailable`` when its service is down."""
        if not self._host_is_up(context, host):
            raise exception.ComputeServiceUnavailable(host=host)
        return self.compute_rpcapi.get_host_uptime(context, host)

    def get_diagnostics(self, context, instance):
        """The guest's ``Diagnostics`` from its host; a conflict unless
        it runs (the hypervisor has no figures for a stopped guest)."""
        if instance.vm_state != vm_states.ACTIVE or \
                instance.power_state != power_state.RUNNING or \
                not instance.host:
            raise exception.InstanceInvalidState(
                instance_uuid=instance.uuid, attr='vm_state',
                state=instance.vm_state, method='get_diagnostics')
        return self.compute_rpcapi.get_instance_diagnostics(context,
                                                            instance)

    # -- helpers -----------------------------------------------------------

    def _images(self):
        if self.image_api is None:
            from nova.conf import host_settings
            from nova.image import source
            self.image_api = source.for_host(
                host_settings.HostSettings.from_conf(CONF))
        return self.image_api

    def _image_meta(self, image_ref):
        return self._images().get(image_ref)

    def _take(self, context, instance, action, instance_action=None,
              **expected):
        """Check ``action`` against the state table and take the instance.

        The task_state is written by compare-and-swap on the states the
        table allows, so a concurrent request that got in first makes
        this one fail with ``UnexpectedTaskStateError`` (409).
        ``expected``: further compare-and-swap checks of the same save
        (``expected_host``).
        """
        instance_lock.check(context, instance)
        transition = states.check(instance, action)
        instance.task_state = transition.task_state
        instance.save(expected_task_state=list(transition.from_task_states),
                      expected_vm_state=list(transition.from_vm_states),
                      **expected)
        objects.InstanceAction.action_start(context, instance.uuid,
                                            instance_action or action)
        return transition

    def _release(self, instance, task_state):
        """Undo ``_take`` when the hand-off itself failed.

        Compare-and-swap: if whoever failed already cleared the task, or
        someone else took the instance, this changes nothing.
        """
        instance.task_state = None
        try:
            instance.save(expected_task_state=[task_state])
        except exception.UnexpectedTaskStateError:
            instance.refresh()
        except exception.NovaException:
            LOG.exception('Could not clear task_state', instance=instance)

    def _take_and_cast(self, context, instance, action, cast,
                       instance_action=None):
        transition = self._take(context, instance, action, instance_action)
        try:
            cast()
        except Exception:
            with excutils.save_and_reraise_exception():
                self._release(instance, transition.task_state)

    # -- lifecycle -----------------------------------------------------------

    def create(self, context, display_name, image_ref, flavor_id,
               networks=None, requested_host=None,
               requested_node=None, hostname=None, access_ip_v4=None,
               access_ip_v6=None, key_name=None, metadata=None,
               description=None, group_uuid=None,
               availability_zone=None,
               auto_disk_config=False) -> objects.Instance:
        """Create an instance, place it on a host and cast its build.

        ``networks``: as ``network.api.API.validate_networks`` takes them
        (``[{'uuid': ...}]``, names, ``'auto'`` or ``None``: the only
        network; ``'none'``). Everything the request names is checked
        before the instance row exists: the flavor (``FlavorNotFound``),
        the image (``ImageNotFound``, ``ImageUnacceptable``), the
        networks (``NetworkNotFound``, ``NetworkAmbiguous``), a host
        (``NoValidHost``), and the ports are allocated with their fixed
        addresses (``NoMoreFixedIps``). A refused request leaves no
        instance and no port behind. Only a failure after that (binding
        the ports to the host, the cast) leaves the instance in ERROR with
        a fault, its ports kept for its delete to free.

        ``key_name``: a key pair of the caller (``KeypairNotFound``
        otherwise), recorded on the instance.

        Quotas: ``TooManyInstances`` (403) before anything is written when
        the project or user has no room for one more instance of the
        flavor (instances, cores, ram; ``compute.quotas``); counted again
        once the row exists, and a create that raced past the first count
        with others is taken back.

        ``requested_host`` / ``requested_node`` (microversion 2.74): only
        that compute host (a node is named as its host here) is
        considered: ``ComputeHostNotFound`` when there is none, and
        ``NoValidHost`` when it is down, disabled or full, or the two
        name different hosts.

        ``availability_zone``: only compute hosts of that zone are
        considered (``InvalidAvailabilityZone`` when no enabled compute
        host is in it); recorded on the instance, so that an evacuation
        keeps to it too.

        ``hostname`` (microversion 2.90): the guest's hostname; when None,
        the one derived from ``display_name`` (``compute.hostnames``).
        ``access_ip_v4`` / ``access_ip_v6``: stored as given (validated
        addresses, in canonical form) for the API to show.

        ``group_uuid`` (the ``group`` scheduler hint): a server group of
        the caller's project (``InstanceGroupNotFound`` otherwise) that
        the instance joins; its host keeps the group's policy. When a
        hard policy leaves no host with room, the instance is created in
        ERROR, on no host, with a fault saying why (a member of its group,
        as Nova leaves it), and nothing is cast.
        ``metadata`` (``{key: value}``, checked by the API) is stored with
        the instance row, before the build is cast; ``description`` is
        the server's description (microversion 2.19).
        ``auto_disk_config``: ``OS-DCF:diskConfig`` AUTO, recorded only.
        """
        phases.mark('api.create_received', context.request_id)
        destination = self._requested_destination(
            context, requested_host, requested_node)
        group = (None if group_uuid is None
                 else self._group_of_caller(context, group_uuid))
        if availability_zone is not None:
            availability_zones.check_requested(context, availability_zone)
        flavor = flavor_catalog.get_by_flavor_id(context, flavor_id)
        quotas.check_instances(context, flavor)
        if metadata:
            quotas.check_metadata_items(context, metadata)
        if key_name is not None:
            keypair_obj.KeyPair.get_by_name(context, context.user_id, key_name)
        image_meta = self._image_meta(image_ref)
        if not image_meta.is_bootable_disk:
            raise exception.ImageUnacceptable(
                image_id=image_ref, reason='not a bootable disk image')
        if flavor.memory_mb < image_meta.min_ram:
            raise exception.FlavorMemoryTooSmall()
        if flavor.root_gb and flavor.root_gb < image_meta.min_disk:
            raise exception.FlavorDiskTooSmall()
        network_api = self._network_api()
        requested = network_api.validate_networks(context, networks)
        instance = objects.Instance(
            context, display_name=display_name, user_id=context.user_id,
            project_id=context.project_id, flavor=flavor,
            image_ref=image_meta.id, key_name=key_name,
            vm_state=vm_states.BUILDING,
            task_state=task_states.SCHEDULING, access_ip_v4=access_ip_v4,
            access_ip_v6=access_ip_v6, availability_zone=availability_zone,
            display_description=description,
            auto_disk_config=auto_disk_config)
        instance.hostname = (hostname if hostname is not None else
                             hostnames.from_display_name(display_name,
                                                         instance.uuid))
        # Ports may exist before their instance (they do not reference
        # the row, as with Neutron): allocating them first makes a full
        # subnet refuse the request instead of leaving an ERROR instance.
        # Bound to no host yet, no network agent looks at them.
        network_api.allocate_for_instance(context, instance, requested)
        phases.mark('api.ports_allocated', context.request_id)
        try:
            ports = network_api.get_ports(
                context, instance, networks={n.uuid: n for n in requested})
            # The ports are bound to the chosen host in the transaction
            # that creates the instance (with its network_info): no
            # instance exists whose VIFs are bound nowhere.
            host = self.host_chooser.place_new(
                context, instance, only=destination, group=group,
                action=objects.InstanceAction.starting(
                    context, instance.uuid, 'create'),
                bind=functools.partial(network_api.bind_new_instance,
                                       instance, ports))
            network_api.bound_new_instance(instance, ports, host)
            phases.mark('api.host_chosen', context.request_id)
        except exception.GroupPolicyUnsatisfied as e:
            network_api.deallocate_for_instance(context, instance)
            return self._refused_by_group(context, instance, group, e)
        except Exception:
            with excutils.save_and_reraise_exception():
                network_api.deallocate_for_instance(context, instance)
        try:
            quotas.recheck_instances(context)
        except exception.TooManyInstances:
            # Raced past the first check with another create: this one
            # goes, its row deleted and its ports freed.
            with excutils.save_and_reraise_exception():
                network_api.deallocate_for_instance(context, instance)
                instance.destroy()
        try:
            if metadata:
                metadata_obj.InstanceMetadata.replace(context, instance.uuid,
                                                      metadata)
            self.compute_rpcapi.build_and_run_instance(
                context, instance, host=host, image_meta=image_meta,
                network_info=instance.network_info)
            phases.mark('api.build_cast', context.request_id)
        except Exception as e:
            with excutils.save_and_reraise_exception():
                objects.InstanceFault.create(context, instance.uuid, e)
                instance.vm_state = vm_states.ERROR
                instance.task_state = None
                instance.save()
        return instance

    @staticmethod
    def _group_of_caller(context, group_uuid):
        """The server group a create names, if the caller's project owns
        it (administrators: any); ``InstanceGroupNotFound`` otherwise."""
        group = group_obj.InstanceGroup.get_by_uuid(context, group_uuid)
        if group.project_id != context.project_id and not context.is_admin:
            raise exception.InstanceGroupNotFound(group_uuid=group_uuid)
        return group

    @staticmethod
    def _refused_by_group(context, instance, group, exc):
        """The build's end when the group's policy left no host: the
        instance in ERROR on no host (nothing was made anywhere), in its
        group, with the fault. Its ports are freed already: it records no
        VIFs, whatever a claim that did not commit set on the object
        (``network.api.API.bind_new_instance``)."""
        LOG.warning('Not built: %s', exception.message_of(exc),
                    instance=instance)
        instance.host = instance.node = None
        instance.network_info = network_model.NetworkInfo()
        instance.vm_state = vm_states.ERROR
        instance.task_state = None
        group_obj.InstanceGroup.add_member(context, group.uuid, instance.uuid)
        instance.create(and_action=objects.InstanceAction.starting(
            context, instance.uuid, 'create'))
        objects.InstanceFault.create(context, instance.uuid, exc)
        return instance

    @staticmethod
    def _requested_destination(context, host, node) -> str | None:
        """The one host a create asks for, or None; checked before
        anything is created."""
        if host is None and node is None:
            return None
        if host is not None and node is not None and host != node:
            raise exception.NoValidHost(
                reason='hypervisor %s is not on host %s' % (node, host))
        named = host if host is not None else node
        target_mod.get_compute_service(context, named)
        return named

    def _network_api(self):
        """The network API given, else the built-in one (ports in this
        database), so every instance gets real ports and addresses."""
        if self.network_api is None:
            return network_api_mod.API()
        return self.network_api

    def start(self, context, instance):
        self._take_and_cast(context, instance, 'start', lambda: (
            self.compute_rpcapi.start_instance(context, instance)))

    def stop(self, context, instance):
        self._take_and_cast(context, instance, 'stop', lambda: (
            self.compute_rpcapi.stop_instance(context, instance)))

    def suspend(self, context, instance):
        self._take_and_cast(context, instance, 'suspend', lambda: (
            self.compute_rpcapi.suspend_instance(context, instance)))

    def resume(self, context, instance):
        self._take_and_cast(context, instance, 'resume', lambda: (
            self.compute_rpcapi.resume_instance(context, instance)))

    def pause(self, context, instance):
        # A client capped below RPC 1.4 refuses the cast
        # (``PauseUnsupported``, 409): the task state is released again.
        self._take_and_cast(context, instance, 'pause', lambda: (
            self.compute_rpcapi.pause_instance(context, instance)))

    def unpause(self, context, instance):
        self._take_and_cast(context, instance, 'unpause', lambda: (
            self.compute_rpcapi.unpause_instance(context, instance)))

    def reboot(self, context, instance, reboot_type):
        reboot_type = (reboot_type or '').upper()
        if reboot_type not in REBOOT_TYPES:
            raise exception.InvalidInput(
                reason='reboot type must be SOFT or HARD, not %r'
                       % reboot_type)
        action = 'reboot_hard' if reboot_type == 'HARD' else 'reboot_soft'
        self._take_and_cast(
            context, instance, action, lambda: (
                self.compute_rpcapi.reboot_instance(context, instance,
                                                    reboot_type)),
            instance_action='reboot')

    def rebuild(self, context, instance, image_ref=None, changes=None,
                metadata=None, preserve_ephemeral=False):
        """Rebuild on the instance's own host from ``image_ref``.

        ``changes``: instance fields the rebuild also sets (``display_
        name``, ``display_description``, ``key_name``, ``user_data``,
        access addresses, ``auto_disk_config``), written by the same
        compare-and-swap save that takes the instance, so a refused
        rebuild changes none of them.
        ``metadata``: the server's new metadata, replacing the old once
        the instance is taken. ``preserve_ephemeral``: honoured trivially
        when the flavor has no ephemeral disk (there is nothing to keep);
        refused otherwise (``InvalidInput``), since a rebuild here
        replaces every disk of the instance.
        """
        image_meta = self._image_meta(image_ref or instance.image_ref)
        if not image_meta.is_bootable_disk:
            raise exception.ImageUnacceptable(
                image_id=image_meta.id, reason='not a bootable disk image')
        if preserve_ephemeral and instance.flavor is not None and \
                instance.flavor.ephemeral_gb:
            raise exception.InvalidInput(
                reason='preserve_ephemeral is not supported: a rebuild '
                       'replaces the ephemeral disk too')
        key_name = (changes or {}).get('key_name')
        if key_name is not None:
            keypair_obj.KeyPair.get_by_name(context, context.user_id, key_name)
        if metadata is not None:
            quotas.check_metadata_items(context, metadata)
        for name, value in (changes or {}).items():
            setattr(instance, name, value)
        transition = self._take(context, instance, 'rebuild')
        try:
            if metadata is not None:
                metadata_obj.InstanceMetadata.replace(context, instance.uuid,
                                                      metadata)
            self.compute_rpcapi.rebuild_instance(
                context, instance, request=rebuild_request.RebuildRequest(
                    recreate=False, image_ref=image_meta.id),
                host=instance.host)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._release(instance, transition.task_state)
        return image_meta

    # -- createImage and createBackup (the host's part: snapshot.py) ---------

    def snapshot(self, context, instance, name: str,
                 metadata: dict | None = None,
                 token: str | None = None) -> str:
        """createImage: the id of the image now queued, which the
        server's host fills. ``token``: the user's, with which Glance
        creates the image (their project's)."""
        return self._image_of(
            context, instance, 'snapshot', 'createImage',
            new_image.SNAPSHOT, name, metadata, token, None,
            lambda image_id: self.compute_rpcapi.snapshot_instance(
                context, instance, image_id=image_id))

    def backup(self, context, instance, name: str, backup_type: str,
               rotation: int, metadata: dict | None = None,
               token: str | None = None) -> str:
        """createBackup: as ``snapshot``; then the host keeps the
        ``rotation`` newest backups of ``backup_type`` of the server."""
        return self._image_of(
            context, instance, 'backup', 'createBackup', new_image.BACKUP,
            name, metadata, token, backup_type,
            lambda image_id: self.compute_rpcapi.backup_instance(
                context, instance, image_id=image_id,
                backup_type=backup_type, rotation=rotation))

    def _image_of(self, context, instance, action, instance_action,
                  image_type, name, metadata, token, backup_type, cast):
        # Refused requests change nothing: the quota and the state (409,
        # a snapshot already running included) before any image exists.
        quotas.check_metadata_items(context, metadata or {})
        transition = self._take(context, instance, action, instance_action)
        images = self._images()
        try:
            try:
                base = self._image_meta(instance.image_ref)
            except (exception.ImageNotFound, exception.ImageUnacceptable):
                base = None
            image_id = images.create_queued(
                new_image.for_server(instance, name, image_type, base,
                                     metadata, backup_type), token)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._release(instance, transition.task_state)
        try:
            cast(image_id)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._release(instance, transition.task_state)
                images.discard(image_id)
        return image_id

    # -- changes that run no operation on the host ---------------------------

    def update(self, context, instance, changes: dict) -> None:
        """Set the fields ``changes`` names (``PUT /servers/{id}``:
        display name, description, access addresses, disk config).
        Nothing runs on the host; as in the reference, a locked server
        may be renamed."""
        for name, value in changes.items():
            setattr(instance, name, value)
        instance.save()

    def _check_metadata_change(self, context, instance):
        instance_lock.check(context, instance)
        if instance.vm_state not in METADATA_VM_STATES:
            raise exception.InstanceInvalidState(
                instance_uuid=instance.uuid, attr='vm_state',
                state=instance.vm_state, method='update metadata')

    def update_metadata(self, context, instance, metadata: dict,
                        replace: bool = False) -> dict:
        """Set metadata keys (all of them with ``replace``); the
        server's whole metadata afterwards."""
        self._check_metadata_change(context, instance)
        quotas.check_metadata_items(context, metadata if replace else {
            **metadata_obj.InstanceMetadata.get(context, instance.uuid),
            **metadata})
        if replace:
            return metadata_obj.InstanceMetadata.replace(
                context, instance.uuid, metadata)
        return metadata_obj.InstanceMetadata.update(context, instance.uuid,
                                                    metadata)

    def delete_metadata_item(self, context, instance, key: str) -> None:
        self._check_metadata_change(context, instance)
        metadata_obj.InstanceMetadata.delete_key(context, instance.uuid, key)

    def lock(self, context, instance, reason=None) -> None:
        instance_lock.lock(context, instance, reason)

    def unlock(self, context, instance) -> None:
        instance_lock.unlock(context, instance)

    def _host_is_up(self, context, host):
        try:
            service = objects.Service.get_by_host_and_binary(
                context, host, shared_storage.COMPUTE_BINARY)
        except exception.ServiceNotFound:
            return False
        return service.is_up(CONF.service_down_time)

    def delete(self, context, instance):
        """Delete; locally when no compute service can do it.

        An instance never placed on a host, or whose host's compute
        service is down, is deleted in the database only (Nova's "local
        delete"); what is left on that host is an orphan its init_host
        reports and never starts.
        """
        instance_lock.check(context, instance)
        transition = states.check(instance, 'delete')
        instance.task_state = task_states.DELETING
        # An attempt in progress (a build, an evacuation) loses its token:
        # it stops at its next side effect and undoes what it made.
        instance.attempt_id = None
        # Any task state, not the one read: a delete is accepted in every
        # state, and a build that moved on from scheduling to spawning
        # since the read must not turn it into a 409. The save reads the
        # row back, so the host decided on below is the row's as of this
        # write (a build claims nothing once the task is deleting).
        instance.save(
            expected_task_state=list(transition.from_task_states),
            expected_vm_state=list(transition.from_vm_states))
        objects.InstanceAction.action_start(context, instance.uuid, 'delete')
        if instance.host and self._host_is_up(context, instance.host):
            try:
                self.compute_rpcapi.terminate_instance(context, instance)
            except Exception:
                with excutils.save_and_reraise_exception():
                    self._release(instance, task_states.DELETING)
            return
        LOG.warning('Compute service of %s is not up; deleting the '
                    'instance in the database only', instance.host,
                    instance=instance)
        if self.network_api is not None:
            self.network_api.deallocate_for_instance(context, instance)
        else:
            for port in objects.Port.get_by_instance_uuid(context,
                                                          instance.uuid):
                port.destroy()
        instance.destroy()
        objects.InstanceAction.action_finish(context, instance.uuid)

    def reset_state(self, context, instance, state):
        """Operator override: vm_state ``active`` or ``error``, no task.

        Also ends (as ``failed``) any evacuation of the instance still
        marked in progress: after a reset the database says where the
        instance is, and a stale in-progress record would keep its host
        from ever starting it again. The instance's write and the ends of
        its evacuations are one transaction
        (``evacuation_states.end_evacuation``): an evacuation requested
        while the reset runs is either ended with the task it set, or left
        alone with its task, never failed with its task left behind. The
        same write clears the instance's attempt token: an evacuation
        attempt still running anywhere stops at its next side effect. The
        ports it may have bound to its target are bound back to the
        instance's host. No fault: nothing failed, the operator decided
        (the instance action records it).
        """
        try:
            vm_state = RESET_STATES[state]
        except KeyError:
            raise exception.InvalidInput(
                reason='state must be one of %s' % sorted(RESET_STATES))
        objects.InstanceAction.action_start(context, instance.uuid,
                                            'reset_state')
        ended = evacuation_states.end_evacuation(
            context, instance, evacuation_states.ALL_IN_PROGRESS, None,
            CONF.host, evacuation_states.OPERATOR, vm_state=vm_state)
        if ended:
            # The evacuations given up on may have bound the ports to
            # their targets; the instance is its host's again (an attempt
            # still running there lost its token and binds nothing).
            port_bindings.bind_to_owner(self._network_api(), context,
                                        instance)

    # -- evacuate ------------------------------------------------------------

    def evacuate(self, context, instance, host=None, on_shared_storage=None,
                 force=False, target_state=None) -> objects.Migration:
        """Request the evacuation of ``instance`` off its dead host.

        Refused unless the source's compute service is down or forced down
        (``ComputeServiceStillUp``), the instance is in a state the table
        allows, and a named ``host`` exists, is not the source and (unless
        ``force``) is up. With a named host whose recorded storage identity
        contradicts ``on_shared_storage``, refused at once with
        ``InvalidSharedStorage``; otherwise the target checks it.
        ``target_state``: None, the instance comes back in the vm_state it
        had; ``stopped`` (microversion 2.95), it ends STOPPED on its new
        host, its guest spawned powered off.
        """
        phases.mark('api.evacuate_received', context.request_id)
        source = instance.host
        if not source:
            raise exception.InstanceInvalidState(
                instance_uuid=instance.uuid, attr='host', state=None,
                method='evacuate')
        source_service = target_mod.get_compute_service(context, source)
        if source_service.is_up(CONF.service_down_time):
            raise exception.ComputeServiceStillUp(host=source)
        if host is not None:
            target_service = target_mod.validate_named_target(
                context, instance, host, force)
            if on_shared_storage is not None:
                evidence = shared_storage.StorageEvidence(
                    source_host=source, target_host=host,
                    source_identity=source_service.storage_identity,
                    target_identity=target_service.storage_identity)
                shared_storage.decide(evidence, on_shared_storage)
        # NOTE: on the host everything above was decided from, too: a
        # request that read the instance before an evacuation moved it
        # (and ended, leaving the same states) must not evacuate it again
        # from a host that no longer owns it (InstanceNotOnThisHost, 409).
        transition = self._take(context, instance, 'evacuate',
                                expected_host=[source])
        migration = None
        try:
            migration = objects.Migration(
                context, instance_uuid=instance.uuid,
                source_compute=source, source_node=instance.node,
                dest_compute=host, dest_node=host,
                migration_type=migration_obj.EVACUATION,
                status=migration_obj.ACCEPTED).create()
            extra = {} if target_state is None else {
                'target_state': target_state}
            self.conductor_api.evacuate_instance(
                context, instance, migration, host=host,
                on_shared_storage=on_shared_storage, **extra)
            phases.mark('api.evacuate_cast', context.request_id)
        except Exception as e:
            with excutils.save_and_reraise_exception():
                # Not handed over: the evacuation ends here, like every
                # early end (a fault, the migration failed, the task
                # cleared). A conductor that got it after all and passed
                # it on made the migration its target's: then nothing is
                # touched (end_evacuation).
                evacuation_states.end_evacuation(
                    context, instance, migration, e, CONF.host,
                    evacuation_states.API,
                    task_states_expected=(transition.task_state,))
        # Created, or the handler above re-raised.
        assert migration is not None
        LOG.info('Evacuation %s from %s accepted', migration.uuid, source,
                 instance=instance)
        return migration

    def host_evacuate(self, context, host, target_host=None,
                      on_shared_storage=None) -> run_obj.HostEvacuation:
        """Record a host-evacuate run of every instance of ``host`` and
        hand it to a conductor; the run (``queued``).

        The one way a run starts, for ``POST /os-host-evacuations`` (which
        checks the request first) and for nova-hamonitor alike. A run no
        conductor was handed is ended at once, saying so.
        """
        instances = objects.Instance.get_by_host(context, host)
        run = run_obj.HostEvacuation.create(
            context, host, instances, target_host=target_host,
            on_shared_storage=on_shared_storage)
        try:
            self.conductor_api.run_host_evacuation(
                context, evacuation_uuid=run.uuid)
        except Exception:
            with excutils.save_and_reraise_exception():
                run.abandon('not handed to a conductor')
        LOG.info('host-evacuate %(run)s of %(host)s: %(n)d instances',
                 {'run': run.uuid, 'host': host, 'n': len(instances)})
        return run

    # -- external events -----------------------------------------------------

    def _event_hosts(self, context, instance):
        """Hosts that may wait for events of ``instance``: its own and the
        target of an evacuation in progress (which plugs its ports)."""
        hosts = [instance.host] if instance.host else []
        for migration in objects.Migration.get_by_filters(
                context, instance_uuid=instance.uuid,
                migration_type=migration_obj.EVACUATION,
                status=list(migration_obj.IN_PROGRESS)):
            if migration.dest_compute and migration.dest_compute not in hosts:
                hosts.append(migration.dest_compute)
        return hosts

    def external_instance_event(self, context, events) -> list:
        """Route events (``InstanceExternalEvent``) to the hosts concerned.

        Returns one ``ExternalEventResult`` per event: 200 when sent, 404
        when the instance is unknown, 422 when it is on no host.
        """
        results = []
        # host -> (instances by uuid, events)
        by_host: dict[str, tuple[dict, list]] = {}
        for event in events:
            try:
                instance = objects.Instance.get_by_uuid(context,
                                                        event.instance_uuid)
            except exception.InstanceNotFound:
                results.append(ExternalEventResult(
                    event.instance_uuid, event.name, event.tag,
                    'failed', 404))
                continue
            hosts = self._event_hosts(context, instance)
            if not hosts:
                results.append(ExternalEventResult(
                    event.instance_uuid, event.name, event.tag,
                    'failed', 422))
                continue
            for host in hosts:
                instances, host_events = by_host.setdefault(host, ({}, []))
                instances[instance.uuid] = instance
                host_events.append(event)
            results.append(ExternalEventResult(
                event.instance_uuid, event.name, event.tag,
                event.status, 200))
        for host, (instances, host_events) in by_host.items():
            self.compute_rpcapi.external_instance_event(
                context, list(instances.values()), host_events, host=host)
        return results
