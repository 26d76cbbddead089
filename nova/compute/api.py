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

from oslo_log import log as logging
from oslo_utils import excutils

from nova.compute import evacuation_states
from nova.compute import hostnames
from nova.compute import port_bindings
from nova.compute import rebuild_request
from nova.compute import shared_storage
from nova.compute import states
from nova.conf import CONF
from nova import exception
from nova.model import task_states
from nova.model import vm_states
from nova.network import api as network_api_mod
from nova import objects
from nova.objects import migration as migration_obj
from nova.scheduler import target as target_mod

LOG = logging.getLogger(__name__)

RESET_STATES = {'active': vm_states.ACTIVE, 'error': vm_states.ERROR}
REBOOT_TYPES = ('SOFT', 'HARD')


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

    # -- helpers -----------------------------------------------------------

    def _image_meta(self, image_ref):
        if self.image_api is None:
            from nova.conf import host_settings
            from nova.image import source
            self.image_api = source.for_host(
                host_settings.HostSettings.from_conf(CONF))
        return self.image_api.get(image_ref)

    def _take(self, context, instance, action, instance_action=None,
              **expected):
        """Check ``action`` against the state table and take the instance.

        The task_state is written by compare-and-swap on the states the
        table allows, so a concurrent request that got in first makes
        this one fail with ``UnexpectedTaskStateError`` (409).
        ``expected``: further compare-and-swap checks of the same save
        (``expected_host``).
        """
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
               access_ip_v6=None, key_name=None) -> objects.Instance:
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

        ``requested_host`` / ``requested_node`` (microversion 2.74): only
        that compute host (a node is named as its host here) is
        considered: ``ComputeHostNotFound`` when there is none, and
        ``NoValidHost`` when it is down, disabled or full, or the two
        name different hosts.

        ``hostname`` (microversion 2.90): the guest's hostname; when None,
        the one derived from ``display_name`` (``compute.hostnames``).
        ``access_ip_v4`` / ``access_ip_v6``: stored as given (validated
        addresses, in canonical form) for the API to show.
        """
        destination = self._requested_destination(
            context, requested_host, requested_node)
        flavor = objects.Flavor.get_by_flavor_id(context, flavor_id)
        if key_name is not None:
            objects.KeyPair.get_by_name(context, context.user_id, key_name)
        image_meta = self._image_meta(image_ref)
        if not image_meta.is_bootable_disk:
            raise exception.ImageUnacceptable(
                image_id=image_ref, reason='not a bootable disk image')
        network_api = self._network_api()
        requested = network_api.validate_networks(context, networks)
        instance = objects.Instance(
            context, display_name=display_name, user_id=context.user_id,
            project_id=context.project_id, flavor=flavor,
            image_ref=image_meta.id, key_name=key_name,
            vm_state=vm_states.BUILDING,
            task_state=task_states.SCHEDULING, access_ip_v4=access_ip_v4,
            access_ip_v6=access_ip_v6)
        instance.hostname = (hostname if hostname is not None else
                             hostnames.from_display_name(display_name,
                                                         instance.uuid))
        # Ports may exist before their instance (they do not reference
        # the row, as with Neutron): allocating them first makes a full
        # subnet refuse the request instead of leaving an ERROR instance.
        # Bound to no host yet, no network agent looks at them.
        network_api.allocate_for_instance(context, instance, requested)
        try:
            host = self.host_chooser.place_new(context, instance,
                                               only=destination)
        except Exception:
            with excutils.save_and_reraise_exception():
                network_api.deallocate_for_instance(context, instance)
        objects.InstanceAction.action_start(context, instance.uuid, 'create')
        try:
            network_info = network_api.bind_ports(context, instance, host)
            instance.network_info = network_info
            instance.save()
            self.compute_rpcapi.build_and_run_instance(
                context, instance, host=host, image_meta=image_meta,
                network_info=network_info)
        except Exception as e:
            with excutils.save_and_reraise_exception():
                objects.InstanceFault.create(context, instance.uuid, e)
                instance.vm_state = vm_states.ERROR
                instance.task_state = None
                instance.save()
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

    def rebuild(self, context, instance, image_ref=None):
        """Rebuild on the instance's own host from ``image_ref``."""
        image_meta = self._image_meta(image_ref or instance.image_ref)
        self._take_and_cast(context, instance, 'rebuild', lambda: (
            self.compute_rpcapi.rebuild_instance(
                context, instance, request=rebuild_request.RebuildRequest(
                    recreate=False, image_ref=image_meta.id),
                host=instance.host)))

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
