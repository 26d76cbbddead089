"""Rebuild and evacuate on the host that runs the new guest.

``ComputeManager.rebuild_instance`` validates, locks, records the action
event and hands off here. Two workflows:

* **evacuate** (``recreate=True``): the instance's host is dead, so nothing
  is powered off or destroyed there. This host claims the migration
  (``accepted`` -> ``pre-migrating``) and, in the same transaction, the
  instance's token for its attempt (``attempts.py``): every side effect
  below checks that token right before it acts, and reset-state or a
  newer claim stops the attempt where it stands. It decides from evidence
  whether it shares storage with the source (``shared_storage``, its own
  identity read live) and what it may do with the instance directory it
  finds (``disk_ownership.on_target``: reuse it, move a leftover of an
  earlier attempt here aside into quarantine, or refuse, saying what
  unblocks it), then binds the instance's ports here (so this host's
  network agent reports them), spawns as an ``evacuation`` attempt
  (reusing the disks on shared storage, building new ones from the image
  otherwise) and only then moves ``instance.host``/``node`` here,
  together with migration ``done`` and the attempt ``landed``, and
  completes the attempt; a failure binds the ports back to the source.
  The instance comes back in the vm_state it had, unless the evacuation
  was asked to end ``stopped`` (``target_state``, microversion 2.95): then
  the guest is spawned powered off and the instance ends STOPPED.
  When spawn fails the manager's ``_rebuild_default_impl`` destroys the
  guest with ``destroy_disks=not on_shared_storage`` and re-raises (the
  fix of the evacuation-leftovers bug, doc/source/cleanup.rst,
  "Background"). A failed evacuation and a refused one (``on_shared_
  storage`` contradicting or not checkable against the evidence, a
  directory that does not fit its stamp, this host's storage missing or
  its recorded identity stale) end alike, as Nova's failed evacuations
  do: migration ``failed``, the instance ERROR on its source with a fault
  that says why and what unblocks it, its vm_state before kept for the
  next evacuation. A request that is no evacuation to this host (wrong
  target or task state) ends its migration and the task, the vm_state
  untouched. A migration already taken by someone else is theirs, and so
  is an instance whose token an attempt lost: it touches nothing.

* **rebuild** (``recreate=False``, same host): power off (when there is a
  domain: "ERROR with no domain" is what a failed spawn leaves), destroy
  (the old disks are replaced on purpose) and spawn from the image as a
  ``rebuild`` attempt; a failure leaves ERROR with a fault and the new
  disks removed by spawn's own cleanup.

The workflow is handed the request (``rebuild_request.RebuildRequest``)
and what it uses (``RebuildWorkflow``'s keyword arguments): the host
(``operation.ComputeHost``), the manager's ``Runner``, its
``_rebuild_default_impl``, the network backend's API and a lookup of image
metadata.
"""

import typing

from oslo_log import log as logging
from oslo_utils import excutils

from nova.compute import attempts
from nova.compute import disk_ownership
from nova.compute import evacuation_states
from nova.compute import operation
from nova.compute import port_bindings
from nova.compute import rebuild_request
from nova.compute import shared_storage
from nova.compute import states
from nova import context as nova_context
from nova import crashpoint
from nova import exception
from nova.image import meta as image_meta_mod
from nova.model import network as network_model
from nova.model import task_states
from nova.model import vm_states
from nova.network import api as network_api_mod
from nova import objects
from nova.objects import migration as migration_obj
from nova.virt import journal

LOG = logging.getLogger(__name__)

EVENT = 'compute_rebuild_instance'


def _image_meta(image_meta, context, image_ref, required=True):
    """The ``ImageMeta`` spawn builds disks from (``image_meta(context,
    image_ref)`` looks it up).

    On shared storage an evacuation reuses the disks, so a vanished image
    does not stop it (``required=False``).
    """
    try:
        return image_meta(context, image_ref)
    except (exception.ImageNotFound, exception.InvalidConfiguration):
        if required:
            raise
        LOG.warning('Image %s is not available; reusing the existing '
                    'disks', image_ref)
        return None


def _state_before(instance, vm_state=None):
    """The vm_state an evacuation should bring the instance back in: the
    one it had, or, for an instance in ERROR because an earlier
    evacuation failed, the one it had before that."""
    vm_state = vm_state or instance.vm_state
    if vm_state == vm_states.ERROR:
        return (instance.system_metadata or {}).get(
            evacuation_states.OLD_VM_STATE, vm_state)
    return vm_state


class RebuildImpl(typing.Protocol):
    """The driver sequence of a rebuild or evacuation
    (``ComputeManager._rebuild_default_impl``): destroy the old guest
    unless ``recreate``, then spawn as ``attempt``."""

    def __call__(self, context: nova_context.RequestContext,
                 instance: objects.Instance,
                 image_meta: image_meta_mod.ImageMeta | None, *,
                 recreate: bool, on_shared_storage: bool | None,
                 network_info: network_model.NetworkInfo | None,
                 power_on: bool,
                 attempt: journal.Attempt | None) -> None:
        ...


# (context, image_ref) -> ImageMeta; ImageNotFound when there is none.
ImageLookup = typing.Callable[[nova_context.RequestContext, str],
                              image_meta_mod.ImageMeta]

EVACUATE = operation.Operation('evacuate', 'evacuate', EVENT)
# The same, ending STOPPED (an evacuation requested at 2.95 or later).
EVACUATE_STOPPED = operation.Operation('evacuate_stopped', 'evacuate', EVENT)

REBUILD = operation.Operation('rebuild', 'rebuild', EVENT)


class RebuildWorkflow:
    """One rebuild or evacuation, run by the manager's ``Runner`` (lock,
    action event, claim, workflow, end) with this workflow's ``Flow``
    hooks where an evacuation differs: its claim is the migration's, its
    end the one-transaction move (``evacuation_states``)."""

    def __init__(self, request: rebuild_request.RebuildRequest, *,
                 compute: operation.ComputeHost, runner: operation.Runner,
                 rebuild_impl: RebuildImpl, network_api: network_api_mod.API,
                 image_meta: ImageLookup):
        self.compute = compute
        self.runner = runner
        self.rebuild_impl = rebuild_impl
        self.network_api = network_api
        self.image_meta = image_meta
        self.driver = compute.driver
        self.host = compute.host
        self.request = request
        self.migration = None
        # The attempt's token (``attempts.Claim``), once claimed.
        self.token: attempts.Claim | None = None
        # The ports an evacuation bound here (``port_bindings.Binding``).
        self.binding = None

    def run(self, context: nova_context.RequestContext,
            instance: objects.Instance) -> migration_obj.Migration | None:
        if self.request.recreate:
            self.runner.run(
                context, instance, self._evacuate_operation(),
                lambda: self._evacuate(context, instance),
                flow=operation.Flow(
                    claim=lambda inst, transition, event:
                        self._claim_evacuation(context, inst, event),
                    succeed=lambda inst, transition, original:
                        self._finish_evacuation(context, inst, original),
                    fail=self._evacuation_failed))
            return self.migration
        token = self.token = attempts.Claim.new(context, instance, self.host,
                                                journal.REBUILD)
        self.runner.run(
            context, instance, REBUILD,
            lambda: self._rebuild(context, instance),
            after_success=lambda: self.driver.complete_attempt(
                instance, token.attempt),
            flow=operation.Flow(claim=self._claim_rebuild,
                                fail=self._rebuild_failed),
            token=token)
        return None

    @property
    def attempt(self):
        """The attempt (``journal.Attempt``) this workflow runs, if any."""
        return None if self.token is None else self.token.attempt

    # -- evacuate ---------------------------------------------------------

    def _evacuate_operation(self) -> operation.Operation:
        # The RPC clients send no other target state (rpcapi.py).
        if self.request.target_state == vm_states.STOPPED:
            return EVACUATE_STOPPED
        return EVACUATE

    def _power_on(self, instance) -> bool:
        """Whether the guest is spawned running: as before the evacuation,
        unless the evacuation was asked to end stopped."""
        if self.request.target_state == vm_states.STOPPED:
            return False
        return _state_before(instance) != vm_states.STOPPED

    def _node(self, request):
        if request.scheduled_node:
            return request.scheduled_node
        nodes = self.driver.get_available_nodes()
        return nodes[0] if nodes else self.host

    def _claim_evacuation(self, context, instance, event):
        """Refuse what is not an evacuation to this host; then, in one
        transaction, migration ``accepted`` -> ``pre-migrating`` and the
        instance's token for this host's attempt, both by compare-and-
        swap (the instance still ``rebuilding`` on its source), and the
        start of the operation's action ``event``.

        Exactly one target can take a migration; a second delivery of the
        same request, or one that was failed meanwhile, is refused here
        before anything of the instance is touched.
        """
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
            self._refuse_unclaimed(context, instance, refusal)
        request = self.request
        migration = request.migration
        if migration is None:
            migration = objects.Migration(
                context, instance_uuid=instance.uuid,
                source_compute=instance.host, source_node=instance.node,
                dest_compute=self.host, dest_node=self._node(request),
                migration_type=migration_obj.EVACUATION,
                status=migration_obj.ACCEPTED).create()
        token = attempts.Claim.new(context, instance, self.host,
                                   journal.EVACUATION, migration.uuid)
        # A migration someone else took is theirs, and so is an instance
        # whose task or host changed: refused untouched.
        instance.save(
            expected_task_state=[task_states.REBUILDING],
            expected_host=[instance.host],
            and_migration=evacuation_states.step_for_claim(
                migration, self.host, self._node(request)),
            and_event=event, **token.take(instance))
        self.migration = migration
        self.token = token
        LOG.info('Evacuation %(m)s is pre-migrating (target), attempt '
                 '%(a)s', {'m': migration.uuid, 'a': token.id},
                 instance=instance)

    def _remove_leftovers(self, context, instance, network_info, verdict):
        # Each removal only while this attempt holds the token.
        """Remove a failed earlier attempt's remains of this instance.

        A stray domain and VIFs go (they hold no data). The directory goes
        only when ``verdict`` (``disk_ownership.on_target``) says it is a
        leftover of an earlier attempt on this very host and storage, and
        then it is moved aside into quarantine, whole, so that nothing of
        it is reused by the spawn and a wrong verdict costs disk space,
        never data (the third case of doc/source/cleanup.rst, "Who may
        delete disks").
        """
        if self.driver.instance_exists(instance):
            LOG.warning('Removing the domain and VIFs an earlier attempt '
                        'left here', instance=instance)
            self.token.check('leftovers')
            self.driver.stop_guest_now(instance)
            self.driver.destroy(context, instance, network_info,
                                destroy_disks=False)
        if verdict.action == disk_ownership.QUARANTINE:
            self.token.check('leftovers')
            self.driver.quarantine_instance_files(instance, verdict.reason)

    def _decide_shared(self, context, instance):
        """(shared, the verdict on the instance directory here), from the
        evidence as it is now (``disk_ownership``)."""
        live = disk_ownership.live_storage(context, self.host, self.driver)
        if live.stale is not None:
            raise live.stale
        evidence = shared_storage.gather(
            context, source_host=instance.host, target_host=self.host,
            target_identity=live.identity)
        facts = disk_ownership.read_directory(context, self.host,
                                              self.driver, instance)
        # A directory here is only looked at, never taken as evidence of
        # sharing: it makes an operator's unverifiable on_shared_storage
        # unsafe to trust.
        shared = shared_storage.decide(
            evidence, self.request.on_shared_storage,
            instance_dir=facts.path if facts.exists else None)
        LOG.info('Evacuating from %(src)s: %(ev)s', {
            'src': instance.host, 'ev': evidence.describe()},
            instance=instance)
        verdict = disk_ownership.on_target(
            facts, live, source=instance.host, host=self.host,
            shared=shared, instance_has_disks=instance.disks_exist,
            source_identity=evidence.source_identity)
        LOG.info('Instance directory: %s', verdict.message,
                 instance=instance)
        if verdict.action == disk_ownership.REFUSE:
            raise exception.InvalidSharedStorage(reason=verdict.message)
        return shared, verdict

    def _refuse_unclaimed(self, context, instance, exc):
        """End an evacuation refused before it was claimed, then raise.

        The conductor's cast never hears of the refusal, and the source's
        init_host would wait for an ``accepted`` migration forever: so the
        migration goes ``accepted`` -> ``failed`` and the instance loses
        its ``rebuilding`` task, both by compare-and-swap (someone who
        changed either meanwhile owns it now). Nothing happened to the
        guest, so its vm_state stays.
        """
        LOG.error('Evacuation refused: %s', exc, instance=instance)
        evacuation_states.end_evacuation(
            context, instance, self.request.migration, exc, self.host,
            evacuation_states.TARGET,
            task_states_expected=(task_states.REBUILDING,))
        raise exc

    def _evacuate(self, context, instance):
        """The body: decide, clean leftovers, bind ports, spawn; each
        side effect only while this attempt holds the token."""
        crashpoint.reached('evacuate.after_claim')
        self.compute.check_storage_writable()
        # Not a side effect, but what it reads may be another attempt's
        # by now: an attempt that lost its token stops before it judges.
        self.token.check('decide')
        shared, verdict = self._decide_shared(context, instance)
        image_meta = _image_meta(
            self.image_meta, context, instance.image_ref,
            required=verdict.action != disk_ownership.REUSE)
        self._remove_leftovers(context, instance, instance.network_info,
                               verdict)
        # Port bindings: only once no leftover VIF of the instance is
        # plugged here, so that this host's agent reports spawn's plug.
        self.token.check('ports')
        self.binding = port_bindings.bind_here(
            self.network_api, self.host, context, instance)
        crashpoint.reached('evacuate.after_ports_bound')
        self.rebuild_impl(
            context, instance, image_meta, recreate=True,
            on_shared_storage=shared, network_info=self.binding.network_info,
            power_on=self._power_on(instance), attempt=self.token.attempt)
        crashpoint.reached('evacuate.before_instance_moves')

    def _evacuation_failed(self, context, instance, exc, transition,
                           original_vm_state):
        """End a claimed evacuation that failed or was refused: what this
        attempt made here goes (unless the database records it landed),
        the ports go back to the instance's host, the migration
        ``failed`` and the instance ERROR on its source with a fault that
        says why and what unblocks it (Nova's failed evacuations end in
        ERROR; a refusal ends the same way, so that ``nova show`` and
        ``nova migration-list`` tell the operator). The vm_state it had is
        kept in its system metadata for the next evacuation.

        An attempt that lost its token (reset-state, a delete, a newer
        claim) undoes what it made and touches nothing else: the ports
        and the instance are the new owner's.
        """
        superseded = isinstance(exc, exception.AttemptSuperseded)
        if not superseded:
            try:
                self.token.check('failure')
            except exception.AttemptSuperseded:
                superseded = True
            except exception.AttemptCheckFailed:
                pass
        attempts.undo_unless_landed(self.compute, context, instance,
                                    self.token.attempt)
        if superseded:
            LOG.warning('Evacuation attempt %s stopped: it no longer holds '
                        'the instance; not touching its ports or state',
                        self.token.id, instance=instance)
            self.token.given_up()
            evacuation_states.end_evacuation(
                context, None, self.migration, None, self.host,
                evacuation_states.TARGET)
            return
        if original_vm_state != vm_states.ERROR:
            instance.system_metadata[
                evacuation_states.OLD_VM_STATE] = original_vm_state
        port_bindings.rebind_to_owner(self.network_api, self.host, context,
                                      instance, self.binding)
        evacuation_states.end_evacuation(
            context, instance, self.migration, exc, self.host,
            evacuation_states.TARGET, vm_state=vm_states.ERROR,
            token=self.token)

    def _finish_evacuation(self, context, instance, original_vm_state):
        """Move the instance here and mark the migration done, in one
        transaction, all by compare-and-swap: the instance must still be
        ``rebuild_spawning`` on the source and hold this attempt's token
        (recorded ``landed`` in the same write), and this attempt's
        migration still ``pre-migrating``. A stale attempt (reset-state
        gave up on it, the instance being evacuated elsewhere now) moves
        nothing, and the caller undoes what it made here.
        """
        migration = self.migration
        source = instance.host
        instance.host = self.host
        instance.node = migration.dest_node
        instance.power_state = operation.current_power_state(self.driver,
                                                             instance)
        instance.vm_state = states.get(
            self._evacuate_operation().transition).vm_state_after(
                True, _state_before(instance, original_vm_state))
        instance.system_metadata.pop(evacuation_states.OLD_VM_STATE,
                                     None)
        instance.task_state = None
        instance.network_info = port_bindings.after_spawn(
            self.network_api, context, instance, self.binding)
        try:
            instance.save(expected_task_state=[task_states.REBUILD_SPAWNING],
                          expected_host=[source],
                          and_migration=evacuation_states.step_for_final_save(
                              migration),
                          **self.token.landing(instance))
        except Exception:
            with excutils.save_and_reraise_exception():
                # Someone else changed the instance or the migration
                # meanwhile (reset-state, delete, another attempt): it is
                # not ours, so what this attempt made here goes, and only
                # that (the caller undoes the attempt).
                LOG.error('Instance or migration changed during the '
                          'evacuation; removing what this attempt made '
                          'here', instance=instance)
                instance.refresh()
        crashpoint.reached('evacuate.after_instance_moves')
        self.driver.complete_attempt(instance, self.token.attempt)
        LOG.info('Evacuated from %s', migration.source_compute,
                 instance=instance)

    # -- rebuild on the same host -----------------------------------------

    def _claim_rebuild(self, instance, transition, event):
        if instance.host != self.host:
            raise exception.InvalidInput(
                reason='instance %s is on host %s, not %s' % (
                    instance.uuid, instance.host, self.host))
        if self.request.preserve_ephemeral:
            raise exception.InvalidInput(
                reason='preserve_ephemeral is not supported')
        if instance.task_state != task_states.REBUILDING:
            raise exception.InstanceInvalidState(
                instance_uuid=instance.uuid, attr='task_state',
                state=instance.task_state, method='rebuild')
        operation.claim(instance, transition, self.host, self.token, event)

    def _rebuild(self, context, instance):
        request = self.request
        image_ref = request.image_ref or instance.image_ref
        self.compute.check_storage_writable()
        image_meta = _image_meta(self.image_meta, context, image_ref)
        self.rebuild_impl(
            context, instance, image_meta, recreate=False,
            on_shared_storage=False, network_info=instance.network_info,
            power_on=instance.vm_state != vm_states.STOPPED,
            attempt=self.token.attempt)
        instance.image_ref = image_ref

    def _rebuild_failed(self, context, instance, exc, transition,
                        original_vm_state):
        """The new disks this attempt made go (spawn's own cleanup, or
        its journal if it got further), unless the database records it
        landed; then the table's failure end."""
        attempts.undo_unless_landed(self.compute, context, instance,
                                    self.token.attempt)
        if isinstance(exc, (exception.UnexpectedDeletingTaskStateError,
                            exception.InstanceNotOnThisHost,
                            exception.AttemptSuperseded)):
            self.token.given_up()
            return      # someone else owns the instance now
        self.runner.record_failure(context, instance, exc,
                                   transition, original_vm_state, self.token)
