"""Rebuild and evacuate on the host that runs the new guest.

``ComputeManager.rebuild_instance`` validates, locks, records the action
event and hands off here. Two workflows:

* **evacuate** (``recreate=True``): the instance's host is dead, so nothing
  is powered off or destroyed there. This host claims the migration
  (``accepted`` -> ``pre-migrating``), decides from evidence whether it
  shares storage with the source (``shared_storage``), removes the leftovers
  of an earlier failed evacuation of the same instance when storage is not
  shared, then binds the instance's ports here (so this host's network
  agent reports them), spawns (reusing the disks on shared storage,
  building new ones from the image otherwise) and only then moves
  ``instance.host``/``node`` here, together with migration ``done``; a
  failure binds the ports back to the source. When spawn fails the manager's
  ``_rebuild_default_impl`` destroys the guest with
  ``destroy_disks=not on_shared_storage`` and re-raises (the fix of the
  evacuation-leftovers bug, doc/source/cleanup.rst, "Background"); the
  instance goes to ERROR with a fault, keeps its host, and the migration
  becomes ``failed``. A refusal before anything was touched here
  (wrong target or task state, ``on_shared_storage`` contradicting or not
  checkable against the evidence) ends the evacuation all the same:
  migration ``failed``, a fault, no task state, and the vm_state as it was
  (nothing happened to the guest). A migration already taken by someone
  else is theirs: its refusal touches nothing.

* **rebuild** (``recreate=False``, same host): power off, destroy (the old
  disks are replaced on purpose) and spawn from the image; a failure leaves
  ERROR with a fault and the new disks removed by spawn's own cleanup.

The manager must offer: ``host``, ``driver``, ``settings`` and
``_rebuild_default_impl`` (below, ``default_impl``), and may offer
``get_image_meta(context, image_ref)`` and ``network_api``.
"""

import dataclasses

from oslo_log import log as logging
from oslo_utils import excutils

from nova.compute import actions
from nova.compute import operation
from nova.compute import shared_storage
from nova.compute import states
from nova.compute import task_states
from nova.compute import vm_states
from nova import exception
from nova.image import store as image_store
from nova.network import api as network_api_mod
from nova.network import model as network_model
from nova import objects
from nova.objects import migration as migration_obj
from nova.virt import instancedir

LOG = logging.getLogger(__name__)

EVENT = 'compute_rebuild_instance'


@dataclasses.dataclass(frozen=True)
class RebuildRequest:
    """The arguments of ``rebuild_instance`` after the instance."""
    orig_image_ref: str | None = None
    image_ref: str | None = None
    injected_files: list = dataclasses.field(default_factory=list)
    new_pass: str | None = None
    orig_sys_metadata: dict | None = None
    bdms: object = None
    recreate: bool = False
    on_shared_storage: bool | None = None
    preserve_ephemeral: bool = False
    migration: object = None
    scheduled_node: str | None = None


class _Refused(Exception):
    """Wraps a refusal that happened before this host touched anything."""

    def __init__(self, cause):
        super().__init__(str(cause))
        self.cause = cause


def default_impl(driver, context, instance, image_meta, injected_files,
                 admin_password, recreate, on_shared_storage,
                 network_info=None, block_device_info=None, power_on=True):
    """The driver sequence of a rebuild (Nova's ``_rebuild_default_impl``).

    Same host: power off and destroy the old guest first. Evacuation: its
    host is dead, touch nothing there. Then task_state ``rebuild_spawning``
    and ``driver.spawn``. When spawn raises during an evacuation, destroy
    what is left of the guest here, keeping the disks on shared storage
    (they are the instance's only copy), and re-raise.
    """
    if not recreate:
        driver.power_off(instance, timeout=driver.settings.shutdown_timeout)
        driver.destroy(context, instance, network_info,
                       block_device_info=block_device_info,
                       destroy_disks=True)
    instance.task_state = task_states.REBUILD_SPAWNING
    instance.save(expected_task_state=[task_states.REBUILDING])
    try:
        driver.spawn(context, instance, image_meta, injected_files,
                     admin_password, network_info=network_info,
                     block_device_info=block_device_info,
                     power_on=power_on)
    except Exception:
        with excutils.save_and_reraise_exception():
            if recreate:
                LOG.error('Spawn failed during evacuation; destroying the '
                          'guest here (destroy_disks=%s)',
                          not on_shared_storage, instance=instance)
                driver.destroy(context, instance, network_info,
                               block_device_info,
                               destroy_disks=not on_shared_storage)


def _image_meta(manager, context, image_ref, required=True):
    """The ``ImageMeta`` spawn builds disks from.

    On shared storage an evacuation reuses the disks, so a vanished image
    does not stop it (``required=False``).
    """
    getter = getattr(manager, 'get_image_meta', None)
    try:
        if getter is not None:
            return getter(context, image_ref)
        if not image_ref:
            raise exception.ImageNotFound(image_id=image_ref)
        return image_store.ImageStore.from_settings(
            manager.settings).get(image_ref)
    except (exception.ImageNotFound, exception.InvalidConfiguration):
        if required:
            raise
        LOG.warning('Image %s is not available; reusing the existing '
                    'disks', image_ref)
        return None


# -- port bindings of an evacuation -------------------------------------
#
# The network agent of a host reports only the ports bound to that host.
# So the ports move to the target *before* it spawns (its agent then
# sends the network-vif-plugged events spawn waits for), and go back to
# the host the database places the instance on when the evacuation fails
# (the source's agent reports them again once that host plugs them).


def _network_api(manager):
    network_api = getattr(manager, 'network_api', None)
    return network_api if network_api is not None else (
        network_api_mod.API())


def _network_info(manager, context, instance):
    """Bind the instance's ports to this host; its VIFs as this host will
    plug them (not active yet: the driver waits for their events).

    An instance whose VIFs have no ports in the network backend (tests
    hand VIFs in directly) keeps its VIFs, made inactive the same way.
    """
    bound = _network_api(manager).bind_ports(context, instance,
                                             manager.host)
    if bound:
        return network_model.NetworkInfo(bound)
    return network_model.NetworkInfo(
        dataclasses.replace(vif, active=False)
        for vif in instance.network_info)


def _network_info_after_spawn(manager, context, instance, network_info):
    """The VIFs as the ports are now: active where this host's agent
    reported them plugged (a later reboot here must not wait for events
    that will not come again). ``network_info`` when there are no ports,
    or when they cannot be read (the guest runs: do not fail for this).
    """
    try:
        current = _network_api(manager).get_instance_nw_info(context,
                                                             instance)
    except Exception:
        LOG.exception('Could not read the ports; keeping the VIFs as '
                      'bound', instance=instance)
        return network_info
    return network_model.NetworkInfo(current) if current else network_info


def _rebind_ports_to_owner(manager, context, instance):
    """After a failed evacuation: the ports it bound here go back to the
    instance's host as the database records it (the source, unless this
    host took the instance over before the failure). Ports it never
    moved (a failure before ``_network_info``) are left as they are.
    Never raises."""
    try:
        owner = objects.Instance.get_by_uuid(context, instance.uuid).host
        moved = any(port.binding_host == manager.host for port in
                    objects.Port.get_by_instance_uuid(context,
                                                      instance.uuid))
        if moved and owner and owner != manager.host:
            _network_api(manager).bind_ports(context, instance, owner)
    except exception.InstanceNotFound:
        pass        # deleted meanwhile: its delete freed the ports
    except Exception:
        LOG.exception('Could not bind the ports back to the instance\'s '
                      'host', instance=instance)

# -- end of port bindings ------------------------------------------------


def _record_failure(context, instance, exc, host, vm_state,
                    expected=(task_states.REBUILDING,
                              task_states.REBUILD_SPAWNING)):
    """Instance back to ``vm_state`` with no task and a fault."""
    actions.record_fault(context, instance, exc, host)
    instance.vm_state = vm_state
    instance.task_state = None
    try:
        instance.save(expected_task_state=list(expected))
    except exception.NovaException:
        LOG.exception('Could not record the failed state',
                      instance=instance)


class RebuildWorkflow:

    def __init__(self, manager):
        self.manager = manager
        self.driver = manager.driver
        self.host = manager.host

    def run(self, context, instance, request: RebuildRequest):
        if request.recreate:
            return self.evacuate(context, instance, request)
        return self.rebuild(context, instance, request)

    # -- evacuate ---------------------------------------------------------

    def _node(self, request):
        if request.scheduled_node:
            return request.scheduled_node
        nodes = self.driver.get_available_nodes()
        return nodes[0] if nodes else self.host

    def _claim(self, context, instance, request):
        """Migration ``accepted`` -> ``pre-migrating``, compare-and-swap.

        Exactly one target can take a migration; a second delivery of the
        same request, or one that was failed meanwhile, is refused here
        before anything of the instance is touched.
        """
        migration = request.migration
        if migration is None:
            migration = objects.Migration(
                context, instance_uuid=instance.uuid,
                source_compute=instance.host, source_node=instance.node,
                dest_compute=self.host, dest_node=self._node(request),
                migration_type=migration_obj.EVACUATION,
                status=migration_obj.ACCEPTED).create()
        migration.status = migration_obj.PRE_MIGRATING
        migration.dest_compute = self.host
        migration.dest_node = self._node(request)
        migration.save(expected_status=migration_obj.ACCEPTED)
        return migration

    def _fail_migration(self, migration,
                        expected=migration_obj.PRE_MIGRATING):
        migration.status = migration_obj.FAILED
        try:
            migration.save(expected_status=expected)
        except exception.NovaException:
            LOG.exception('Could not mark migration %s failed',
                          migration.uuid, instance_uuid=migration.
                          instance_uuid)

    def _remove_leftovers(self, context, instance, network_info, shared):
        """Remove a failed earlier attempt's remains of this instance.

        Without shared storage this host does not own the instance and its
        storage is not the owner's, the third case of
        doc/source/cleanup.rst, "Who may delete disks". With shared storage
        the disks are the instance's only copy: only a stray domain and
        VIFs go. ``shared`` False comes from evidence whenever an instance
        directory is here (``_decide_shared``), never from the operator's
        word alone.
        """
        has_domain = self.driver.instance_exists(instance)
        on_disk = (not shared) and self.driver.instance_on_disk(instance)
        if not (has_domain or on_disk):
            return
        LOG.warning('Removing leftovers of an earlier evacuation attempt '
                    '(domain: %(dom)s, disks: %(disk)s, delete disks: '
                    '%(dd)s)', {'dom': has_domain, 'disk': on_disk,
                                'dd': not shared}, instance=instance)
        self.driver.destroy(context, instance, network_info,
                            destroy_disks=not shared)

    def _decide_shared(self, context, instance, request):
        evidence = shared_storage.gather(
            context, source_host=instance.host, target_host=self.host,
            target_identity=self.driver.get_storage_identity())
        # Only looked at, never taken as evidence of sharing: it makes an
        # operator's unverifiable on_shared_storage unsafe to trust.
        idir = instancedir.InstanceDir(self.manager.settings.instances_path,
                                       instance.uuid)
        shared = shared_storage.decide(
            evidence, request.on_shared_storage,
            instance_dir=idir.path if idir.exists() else None)
        LOG.info('Evacuating from %(src)s: %(ev)s', {
            'src': instance.host, 'ev': evidence.describe()},
            instance=instance)
        return shared

    def _refuse_unclaimed(self, context, instance, request, exc):
        """End an evacuation refused before it was claimed, then raise.

        The conductor's cast never hears of the refusal, and the source's
        init_host would wait for an ``accepted`` migration forever: so the
        migration goes ``accepted`` -> ``failed`` and the instance loses
        its ``rebuilding`` task, both by compare-and-swap (someone who
        changed either meanwhile owns it now). Nothing happened to the
        guest, so its vm_state stays.
        """
        LOG.error('Evacuation refused: %s', exc, instance=instance)
        if request.migration is not None:
            self._fail_migration(request.migration,
                                 expected=migration_obj.ACCEPTED)
        _record_failure(context, instance, exc, self.host,
                        instance.vm_state,
                        expected=(task_states.REBUILDING,))
        raise exc

    def evacuate(self, context, instance, request):
        refusal = None
        if instance.host == self.host:
            refusal = exception.InvalidInput(
                reason='instance %s is already on host %s; an evacuation '
                       'needs another target' % (instance.uuid, self.host))
        elif instance.task_state != task_states.REBUILDING:
            refusal = exception.InstanceInvalidState(
                instance_uuid=instance.uuid, attr='task_state',
                state=instance.task_state, method='evacuate')
        if refusal is not None:
            self._refuse_unclaimed(context, instance, request, refusal)
        # A migration someone else took is theirs: refused untouched.
        migration = self._claim(context, instance, request)
        original_vm_state = instance.vm_state
        try:
            self._evacuate_claimed(context, instance, request, migration,
                                   original_vm_state)
        except _Refused as refused:
            self._fail_migration(migration)
            _record_failure(context, instance, refused.cause, self.host,
                            original_vm_state)
            raise refused.cause
        except Exception as e:
            with excutils.save_and_reraise_exception():
                LOG.error('Evacuation failed: %s', e, instance=instance)
                # Port bindings: see _rebind_ports_to_owner.
                _rebind_ports_to_owner(self.manager, context, instance)
                self._fail_migration(migration)
                _record_failure(context, instance, e, self.host,
                                vm_states.ERROR)
        return migration

    def _evacuate_claimed(self, context, instance, request, migration,
                          original_vm_state):
        try:
            shared = self._decide_shared(context, instance, request)
        except exception.InvalidSharedStorage as e:
            raise _Refused(e)
        image_meta = _image_meta(self.manager, context, instance.image_ref,
                                 required=not shared)
        self._remove_leftovers(context, instance, instance.network_info,
                               shared)
        # Port bindings: only once no leftover VIF of the instance is
        # plugged here, so that this host's agent reports spawn's plug.
        network_info = _network_info(self.manager, context, instance)
        power_on = original_vm_state != vm_states.STOPPED
        self.manager._rebuild_default_impl(
            context, instance, image_meta, request.injected_files,
            request.new_pass, request.bdms, recreate=True,
            on_shared_storage=shared, network_info=network_info,
            block_device_info=None,
            preserve_ephemeral=request.preserve_ephemeral,
            power_on=power_on)
        self._finish_evacuation(context, instance, migration, request,
                                original_vm_state, network_info, shared)

    def _finish_evacuation(self, context, instance, migration, request,
                           original_vm_state, network_info, shared):
        """Move the instance here, then mark the migration done.

        In this order: should this host die between the two writes, the
        source sees an evacuation still in progress (it neither starts nor
        deletes anything), never a done one for an instance the database
        still places on it.
        """
        instance.host = self.host
        instance.node = migration.dest_node
        instance.power_state = operation.current_power_state(self.driver,
                                                             instance)
        instance.vm_state = states.get('evacuate').vm_state_after(
            True, original_vm_state)
        instance.task_state = None
        # Port bindings: see _network_info_after_spawn.
        instance.network_info = _network_info_after_spawn(
            self.manager, context, instance, network_info)
        try:
            instance.save(expected_task_state=[task_states.REBUILD_SPAWNING])
        except Exception:
            with excutils.save_and_reraise_exception():
                # Someone else changed the instance meanwhile (reset-state,
                # delete): it is not ours, so the new guest must go.
                LOG.error('Instance changed during evacuation; removing '
                          'the guest spawned here', instance=instance)
                self.driver.destroy(context, instance, network_info,
                                    destroy_disks=not shared)
        migration.status = migration_obj.DONE
        migration.save(expected_status=migration_obj.PRE_MIGRATING)
        LOG.info('Evacuated from %s', migration.source_compute,
                 instance=instance)

    # -- rebuild on the same host -----------------------------------------

    def rebuild(self, context, instance, request):
        if instance.host != self.host:
            raise exception.InvalidInput(
                reason='instance %s is on host %s, not %s' % (
                    instance.uuid, instance.host, self.host))
        if request.preserve_ephemeral:
            raise exception.InvalidInput(
                reason='preserve_ephemeral is not supported')
        if instance.task_state != task_states.REBUILDING:
            raise exception.InstanceInvalidState(
                instance_uuid=instance.uuid, attr='task_state',
                state=instance.task_state, method='rebuild')
        original_vm_state = instance.vm_state
        image_ref = request.image_ref or instance.image_ref
        try:
            image_meta = _image_meta(self.manager, context, image_ref)
            network_info = instance.network_info
            self.manager._rebuild_default_impl(
                context, instance, image_meta, request.injected_files,
                request.new_pass, request.bdms, recreate=False,
                on_shared_storage=False, network_info=network_info,
                power_on=original_vm_state != vm_states.STOPPED)
            instance.image_ref = image_ref
            instance.power_state = operation.current_power_state(
                self.driver, instance)
            instance.vm_state = states.get('rebuild').vm_state_after(
                True, original_vm_state)
            instance.task_state = None
            instance.save(expected_task_state=[task_states.REBUILD_SPAWNING])
        except Exception as e:
            with excutils.save_and_reraise_exception():
                LOG.error('Rebuild failed: %s', e, instance=instance)
                _record_failure(context, instance, e, self.host,
                                vm_states.ERROR)
