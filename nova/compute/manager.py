"""The compute manager: the RPC endpoints of one compute host.

A thin facade. Each endpoint validates against the state table, takes the
instance's lock, records the action event and hands off to the workflow
module of that operation (``operation.Runner`` does the first three and
the state changes; see its docstring)::

    build.py      build_and_run_instance
    power.py      start_instance, stop_instance
    reboot.py     reboot_instance
    suspend.py    suspend_instance, resume_instance
    pause.py      pause_instance, unpause_instance
    snapshot.py   snapshot_instance, backup_instance (createImage,
                  createBackup)
    delete.py     terminate_instance
    rebuild.py    rebuild_instance (rebuild, and evacuate to this host)
    host_init.py  init_host: reconcile this host's instances (after
                  evacuation.py dealt with instances evacuated away)
    external_events.py, power_sync.py: events from the network backend
                  and from the hypervisor
    resources.py, periodic_tasks.py: the periodic tasks (the node's
                  resources in compute_nodes, the power state sync)
    reaper.py     the orphan reaper (periodic; its stale file part also
                  at init_host), its parts in reap_evacuated.py and
                  reap_domains.py, its report in reap_report.py

Endpoints take the request context first and keyword arguments, as
``compute/rpcapi.py`` casts them. A failure is recorded (fault, action
event, states) and re-raised; over RPC a cast only logs it.
"""

import threading
import typing

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from nova.compute import attempts
from nova.compute import build
from nova.compute import delete
from nova.compute import disk_leases
from nova.compute import evacuation
from nova.compute import external_events
from nova.compute import host_init
from nova.compute import instance_events
from nova.compute import locks
from nova.compute import operation
from nova.compute import pause
from nova.compute import periodic_tasks
from nova.compute import power
from nova.compute import power_sync
from nova.compute import reaper
from nova.compute import reboot
from nova.compute import rebuild
from nova.compute import rebuild_request
from nova.compute import recovery
from nova.compute import resources
from nova.compute import rpcapi as compute_rpcapi
from nova.compute import snapshot
from nova.compute import storage_report
from nova.compute import suspend
from nova.conf import CONF
from nova import context as nova_context
from nova import crashpoint
from nova import exception
from nova.image import meta as image_meta_mod
from nova.image import source as image_source
from nova import manager as nova_manager
from nova.model import network as network_model
from nova.model import task_states
from nova.network import api as network_api_mod
from nova import objects
from nova import periodic
from nova import phases
from nova.virt import driver as virt_driver
from nova.virt import journal

LOG = logging.getLogger(__name__)


class ComputeManager(nova_manager.Manager):
    """Manages the instances of one host (``settings.host``)."""

    # The RPC version served (compute/rpcapi.py has the history).
    target = messaging.Target(version=compute_rpcapi.RPC_API_VERSION)

    def __init__(self, settings, driver=None, virtapi=None,
                 conductor_api=None):
        """``conductor_api``: the conductors' RPC client
        (``conductor.rpcapi.ConductorAPI``, from the layer that wires the
        service), told when an evacuation ended here; None: they are not
        told, and notice it at their next poll."""
        self.settings = settings
        self.host = settings.host
        self.virtapi = (virtapi or getattr(driver, 'virtapi', None)
                        or instance_events.ComputeVirtAPI())
        self.driver = driver or virt_driver.load_compute_driver(
            self.virtapi, settings, CONF.compute_driver)
        self.storage = storage_report.StorageReporter(self.host, self.driver)
        self.leases = disk_leases.LeaseReporter(self.host, self.driver)
        self.compute = operation.ComputeHost(
            host=self.host, settings=settings, driver=self.driver,
            virtapi=self.virtapi, storage=self.storage)
        # The network backend's API (ports and their bindings).
        self.network_api = network_api_mod.API()
        self.instance_locks = locks.InstanceLocks()
        self.runner = operation.Runner(self.compute, self.instance_locks)
        self._builds = threading.BoundedSemaphore(CONF.max_concurrent_builds)
        # Told when an evacuation ended here (host-evacuate's wake-up).
        self.conductor_api = conductor_api
        self.driver.register_event_listener(self.handle_lifecycle_event)

    # -- host -----------------------------------------------------------

    def init_host(self):
        """Connect the driver, then reconcile this host's instances."""
        self.driver.init_host(host=self.host)
        context = nova_context.get_admin_context()
        # What the storage is now, recorded before anything compares with
        # it (storage_report.py).
        self.storage.record_at_start(context)
        # Which disk leases its libvirt takes, and a warning when it
        # shares storage without them (disk_leases.py).
        try:
            self.leases.record_at_start(context)
        except Exception:
            LOG.exception('Could not record the disk leases of %s',
                          self.host)
        # Then what the previous process left half done (recovery.py), so
        # that nothing below sees a partial disk or a dead attempt's guest.
        recovery.recover_interrupted_attempts(self.compute, context)
        # With those undone, the deletes made while this host was down
        # (pending_deletes.py), and what dead processes left that no
        # journal describes: stale .part- files (reaper.py).
        try:
            reaper.reap_at_start(context, self.settings, self.driver,
                                 self.instance_locks,
                                 dry_run=CONF.reap_orphans_dry_run)
        except Exception:
            LOG.exception('Could not finish pending deletes or remove stale '
                          'temporary files')
        # Evacuations next (evacuation.py): an instance evacuated away, or
        # being evacuated, must never be started here again.
        evacuation.fail_interrupted_evacuations(context, self.host,
                                                self.driver)
        evacuated = evacuation.destroy_evacuated_instances(
            context, self.host, self.driver)
        instances = objects.Instance.get_by_host(context, self.host)
        # Instances another workflow owns right now; reconciliation leaves
        # them alone.
        do_not_touch = set(evacuated.do_not_touch)
        power_states = self.driver.get_power_states()
        host_init.init_instances(self.compute, self.runner, instances,
                                 do_not_touch=do_not_touch,
                                 power_states=power_states)
        host_init.report_foreign_domains(self.compute, context, instances,
                                         domains=power_states)
        # Last, so the usage it records reflects the cleanups above; before
        # the service's first heartbeat, so a host that counts as up has
        # told the conductor its capacity.
        try:
            resources.update_available_resource(self.compute, context)
        except Exception:
            # The host still serves; until the periodic task succeeds the
            # conductor uses the row of an earlier run, or ranks the host
            # as of unknown capacity when there is none.
            LOG.exception('Could not record the resources of %s', self.host)

    @periodic.periodic_task(
        spacing=periodic_tasks.interval('update_resources_interval'))
    def update_available_resource(self, context):
        """Periodic: record this host's nodes in ``compute_nodes``."""
        resources.update_available_resource(self.compute, context)

    @periodic.periodic_task(
        spacing=periodic_tasks.interval('sync_power_state_interval'))
    def _sync_power_states(self, context):
        """Periodic: record the hypervisor's power state of idle instances
        (reports mismatches, never acts on them)."""
        periodic_tasks.sync_power_states(self.compute, self.instance_locks,
                                         context)

    @periodic.periodic_task(
        spacing=periodic_tasks.interval('purge_quarantine_interval'))
    def _purge_quarantine(self, context):
        """Periodic: delete quarantined instance directories older than
        ``quarantine_max_age``."""
        periodic_tasks.purge_quarantine(self.compute)

    @periodic.periodic_task(
        spacing=periodic_tasks.interval('reap_orphans_interval'))
    def _reap_orphans(self, context):
        """Periodic: stop what this host no longer owns and remove stale
        temporary files and unused base images (reaper.py)."""
        reaper.reap(context, self.settings, self.driver, self.instance_locks,
                    dry_run=CONF.reap_orphans_dry_run)

    def update_service_record(self, service):
        """Called by the service before each heartbeat: the storage fields
        of its row, written with the heartbeat (storage_report.py); a new
        storage identity is checked for sharing without disk leases
        (disk_leases.py)."""
        self.storage.update(service)
        try:
            self.leases.update(nova_context.get_admin_context(), service)
        except Exception:
            LOG.exception('Could not check the disk leases of %s', self.host)

    def is_hypervisor_available(self) -> bool:
        return self.driver.is_hypervisor_available()

    def cleanup_host(self):
        self.driver.cleanup_host(host=self.host)

    def stop_waiting_for_events(self):
        """Give up every wait for external events (the service is stopping).

        Called once no new request can arrive. An operation waiting for
        ``network-vif-plugged`` fails at once and cleans up as the cleanup
        contract says (a spawn removes what it made, a start keeps the
        disks), instead of holding the stop for ``vif_plugging_timeout``.
        """
        self.virtapi.events.cancel_everything()

    def get_storage_identity(self, context=None):
        """The identity of this host's instance storage (shared_storage)."""
        return self.driver.get_storage_identity()

    # -- reading what only the host knows (RPC calls, 1.3) ----------------

    def get_host_uptime(self, context):
        """What ``uptime`` says here; ``NotImplementedError`` when the
        driver cannot tell (the API answers 501)."""
        return self.driver.get_host_uptime()

    def get_instance_diagnostics(self, context, instance):
        """The guest's ``Diagnostics``, read from the hypervisor now."""
        return self.driver.get_instance_diagnostics(instance)

    # -- lifecycle --------------------------------------------------------

    def build_and_run_instance(self, context, instance, image_meta=None,
                               network_info=None, image=None):
        """Create and start the guest; ERROR with a fault on failure.

        ``image`` is accepted as another name of ``image_meta`` (Nova's).
        """
        if network_info is not None:
            network_info = network_model.NetworkInfo.coerce(network_info)
        image_meta = image_meta if image_meta is not None else image
        with phases.bound(context.request_id):
            phases.mark('compute.build_received')
            token = attempts.Claim.new(context, instance, self.host,
                                       journal.BUILD)
            with self._builds:
                phases.mark('compute.build_turn')
                build.run(self.runner, self.compute, context, instance,
                          token, network_info, lambda: build.spawn(
                              self.compute, context, instance, image_meta,
                              token.attempt))
            phases.mark('compute.build_returned')

    def start_instance(self, context, instance):
        self.runner.run(context, instance, power.START,
                        lambda: power.start(self.compute, context, instance))

    def stop_instance(self, context, instance, clean_shutdown=True):
        self.runner.run(context, instance, power.STOP,
                        lambda: power.stop(self.compute, instance,
                                           clean_shutdown))

    def reboot_instance(self, context, instance, reboot_type='SOFT'):
        self.runner.run(context, instance, reboot.operation_for(reboot_type),
                        lambda: reboot.reboot(self.compute, context,
                                              instance, reboot_type))

    def suspend_instance(self, context, instance):
        self.runner.run(context, instance, suspend.SUSPEND,
                        lambda: suspend.suspend(self.compute, context,
                                                instance))

    def resume_instance(self, context, instance):
        self.runner.run(context, instance, suspend.RESUME,
                        lambda: suspend.resume(self.compute, context,
                                               instance))

    def pause_instance(self, context, instance):
        self.runner.run(context, instance, pause.PAUSE,
                        lambda: pause.pause(self.compute, instance))

    def unpause_instance(self, context, instance):
        self.runner.run(context, instance, pause.UNPAUSE,
                        lambda: pause.unpause(self.compute, instance))

    def snapshot_instance(self, context, instance, image_id):
        snapshot.run(self.runner, self.compute, context, instance, image_id)

    def backup_instance(self, context, instance, image_id, backup_type,
                        rotation):
        snapshot.run(self.runner, self.compute, context, instance, image_id,
                     snapshot.Rotation(backup_type, int(rotation)))

    def terminate_instance(self, context, instance):
        delete.terminate(self.runner, self.compute, context, instance)

    # -- rebuild and evacuate (workflow: rebuild.py) ------------------------

    def rebuild_instance(
            self, context: nova_context.RequestContext,
            instance: objects.Instance,
            request: rebuild_request.RebuildRequest | None = None,
            **legacy: typing.Any) -> None:
        """Rebuild here as ``request`` (``rebuild_request.RebuildRequest``,
        RPC 1.2); ``recreate`` is an evacuation to this host.

        A message of RPC 1.0/1.1 has no ``request`` but its keyword
        arguments (``legacy``), read by ``rebuild_request.from_legacy``.
        """
        if request is None:
            request = rebuild_request.from_legacy(**legacy)
        elif legacy:
            raise TypeError('rebuild_instance() takes a request or the '
                            'RPC 1.1 arguments, not both: %s'
                            % ', '.join(sorted(legacy)))
        # A rebuild spawns like a build: host-evacuate casts many at once
        # to a target, which builds at most max_concurrent_builds of them.
        with phases.bound(context.request_id):
            phases.mark('compute.rebuild_received')
            try:
                with self._builds:
                    phases.mark('compute.rebuild_turn')
                    rebuild.RebuildWorkflow(
                        request, compute=self.compute, runner=self.runner,
                        rebuild_impl=self._rebuild_default_impl,
                        network_api=self.network_api,
                        image_meta=self.get_image_meta).run(context,
                                                            instance)
            finally:
                if request.recreate and request.migration is not None:
                    self._say_evacuation_ended(context, request.migration)
            phases.mark('compute.rebuild_returned')

    def _say_evacuation_ended(self, context, migration) -> None:
        """Tell the conductors this evacuation ended here, landed or not
        (its rows say which), so that a host-evacuate watching it reads
        them now rather than at its next poll. Only a wake-up: if it is
        lost, that poll still comes."""
        if self.conductor_api is None:
            return
        try:
            self.conductor_api.evacuation_ended(context, migration.uuid)
        except Exception:
            LOG.warning('Could not tell the conductors that evacuation %s '
                        'ended; they notice at their next poll',
                        migration.uuid, exc_info=True)

    def get_image_meta(self, context, image_ref) -> image_meta_mod.ImageMeta:
        """The metadata of ``image_ref`` where this host's images come
        from (its image store, or Glance); ``ImageNotFound`` when there
        is none (``InvalidConfiguration`` when the host has no image
        store)."""
        if not image_ref:
            raise exception.ImageNotFound(image_id=image_ref)
        return image_source.for_host(self.settings).get(image_ref)

    def _rebuild_default_impl(
            self, context: nova_context.RequestContext,
            instance: objects.Instance,
            image_meta: image_meta_mod.ImageMeta | None, *,
            recreate: bool, on_shared_storage: bool | None,
            network_info: network_model.NetworkInfo | None,
            power_on: bool, attempt: journal.Attempt | None) -> None:
        """The driver sequence of a rebuild (Nova's).

        Task state ``rebuild_spawning`` first, by compare-and-swap that
        also expects ``attempt``'s token (a rebuild or evacuation that
        reset-state gave up on, or a newer one replaced, changes nothing
        and raises ``AttemptSuperseded``). Same host: the instance's old
        disks are about to go, which the same write records
        (``disks_exist``); then power off (when there is a domain) and
        destroy the old guest and its disks. Evacuation: its host is
        dead, touch nothing there. Then ``driver.spawn`` as ``attempt``.
        When spawn raises during an evacuation, destroy what is left of
        the guest here, keeping the disks on shared storage (they are the
        instance's only copy), and re-raise (the evacuation-leftovers
        fix, doc/source/cleanup.rst, "Background").
        """
        instance.task_state = task_states.REBUILD_SPAWNING
        if not recreate:
            instance.disks_exist = False
        checks = {}
        if attempt is not None:
            checks['expected_attempt'] = attempt.id
        instance.save(expected_task_state=[task_states.REBUILDING], **checks)
        crashpoint.reached('rebuild.after_spawning')
        if not recreate:
            if self.driver.instance_exists(instance):
                self.driver.power_off(instance,
                                      timeout=self.settings.shutdown_timeout)
            self.driver.destroy(context, instance, network_info,
                                destroy_disks=True)
        try:
            self.driver.spawn(context, instance, image_meta,
                              network_info=network_info,
                              power_on=power_on, attempt=attempt)
        except Exception:
            with excutils.save_and_reraise_exception():
                if recreate:
                    LOG.error('Spawn failed during evacuation; destroying '
                              'the guest here (destroy_disks=%s)',
                              not on_shared_storage, instance=instance)
                    self.driver.destroy(context, instance, network_info,
                                        destroy_disks=not on_shared_storage)

    # -- events -------------------------------------------------------------

    def external_instance_event(self, context, instances, events):
        """Events from the network backend (``network-vif-plugged``)."""
        external_events.handle(self.compute, context, instances, events)

    def handle_lifecycle_event(self, event):
        """A ``virt.event.LifecycleEvent`` from the driver."""
        LOG.debug('Lifecycle event %s', event.name, instance_uuid=event.uuid)
        try:
            power_sync.sync_power_state(
                self.compute, self.instance_locks,
                nova_context.get_admin_context(), event.uuid, event)
        except Exception:
            # An event handler must not break the driver that called it.
            LOG.exception('Could not handle lifecycle event %s', event.name,
                          instance_uuid=event.uuid)
