"""The conductor's RPC endpoints: evacuation target choice and
host-evacuate.

``evacuate_instance`` receives an evacuation the API accepted (instance in
task_state ``rebuilding``, migration ``accepted``), chooses and claims a
target unless one was named (``target.TargetChooser``) and casts
``rebuild_instance(recreate=True)`` to it. If no target can be found the
evacuation ends here: migration ``failed``, instance back to no task with
its vm_state unchanged, a fault and an action event saying why.

``host_evacuate`` requests the evacuation of every instance of a failed
host, ``[conductor] host_evacuate_workers`` at a time, and returns one
``EvacuationResult`` per instance; one failure never stops the others.
"""

from concurrent import futures

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from nova.compute import api as compute_api
from nova.compute import evacuation_states
from nova.compute import rebuild_request
from nova.model import task_states
from nova.conductor import results
from nova.conductor import rpcapi as conductor_rpcapi
from nova.scheduler import target as target_mod
from nova.conf import CONF
from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova import manager as nova_manager

LOG = logging.getLogger(__name__)

EVENT = 'conductor_rebuild_server'


class _LocalConductor:
    """Lets host-evacuate reuse ``compute.api.API.evacuate`` and hand the
    accepted evacuation to this very conductor, without an RPC round
    trip."""

    def __init__(self, manager):
        self.manager = manager

    def evacuate_instance(self, ctxt, instance, migration, host=None,
                          on_shared_storage=None, target_state=None):
        self.manager.evacuate_instance(ctxt, instance, migration, host=host,
                                       on_shared_storage=on_shared_storage,
                                       target_state=target_state)


class ConductorManager(nova_manager.Manager):
    """Endpoints of topic ``conductor``."""

    # The RPC version served (conductor/rpcapi.py has the history).
    target = messaging.Target(version=conductor_rpcapi.RPC_API_VERSION)

    def __init__(self, compute_rpcapi, capacity_provider=None,
                 chooser=None):
        self.compute_rpcapi = compute_rpcapi
        self.chooser = chooser or target_mod.TargetChooser(capacity_provider)

    # -- evacuate one instance -----------------------------------------------

    def evacuate_instance(self, ctxt, instance, migration, host=None,
                          on_shared_storage=None, target_state=None):
        """Choose a target (unless ``host``) and rebuild the instance there,
        ending in ``target_state`` (None: the vm_state it had; ``stopped``
        at microversion 2.95).

        Returns the target host; raises (after ending the evacuation) when
        there is none.
        """
        # NOTE: the evacuation is ended only after the action event is
        # finished, so that whoever sees the instance idle again also sees
        # the complete record of why.
        try:
            with objects.InstanceActionEvent.record(
                    ctxt, instance.uuid, EVENT, CONF.host):
                target = self.chooser.choose_and_claim(
                    ctxt, instance, migration, host=host,
                    on_shared_storage=on_shared_storage)
                self.compute_rpcapi.rebuild_instance(
                    ctxt, instance, request=rebuild_request.RebuildRequest(
                        recreate=True, image_ref=instance.image_ref,
                        on_shared_storage=on_shared_storage,
                        migration=migration,
                        scheduled_node=migration.dest_node,
                        target_state=target_state),
                    host=target)
        except Exception as e:
            with excutils.save_and_reraise_exception():
                LOG.error('Evacuation did not reach a target: %s',
                          exception.message_of(e), instance=instance)
                # A target that took the migration (pre-migrating) ends it
                # itself; one still accepted was never handed over.
                fresh = objects.Migration.get_by_id(ctxt, migration.id)
                if fresh.status == migration_obj.ACCEPTED:
                    self._end_evacuation(ctxt, instance, fresh, e)
        return target

    def _end_evacuation(self, ctxt, instance, migration, exc):
        """The evacuation never reached a target: undo the request."""
        evacuation_states.end_evacuation(
            ctxt, instance, migration, exc, CONF.host,
            evacuation_states.CONDUCTOR,
            task_states_expected=(task_states.REBUILDING,))

    # -- host-evacuate -------------------------------------------------------

    def _evacuate_one(self, ctxt, api, instance, target_host,
                      on_shared_storage):
        try:
            migration = api.evacuate(ctxt, instance, host=target_host,
                                     on_shared_storage=on_shared_storage)
        except Exception as e:
            LOG.warning('Not evacuated: %s', exception.message_of(e),
                        instance=instance)
            return results.EvacuationResult(
                instance_uuid=instance.uuid, accepted=False,
                error=exception.message_of(e))
        return results.EvacuationResult(
            instance_uuid=instance.uuid, accepted=True,
            migration_uuid=migration.uuid,
            target_host=migration.dest_compute)

    def host_evacuate(self, ctxt, host, target_host=None,
                      on_shared_storage=None) -> list:
        """Evacuate every instance of ``host``; one result per instance.

        Refused as a whole (``ComputeServiceStillUp``) when the host's
        compute service is up; otherwise each instance gets the same
        checks as a single evacuation.
        """
        service = target_mod.get_compute_service(ctxt, host)
        if service.is_up(CONF.service_down_time):
            raise exception.ComputeServiceStillUp(host=host)
        instances = objects.Instance.get_by_host(ctxt, host)
        api = compute_api.API(self.compute_rpcapi, _LocalConductor(self),
                              host_chooser=self.chooser)
        workers = min(CONF.conductor.host_evacuate_workers,
                      max(1, len(instances)))
        LOG.info('host-evacuate of %(host)s: %(n)d instances, %(w)d at a '
                 'time', {'host': host, 'n': len(instances), 'w': workers})
        with futures.ThreadPoolExecutor(
                max_workers=workers,
                thread_name_prefix='host-evacuate') as pool:
            pending = [pool.submit(self._evacuate_one, ctxt, api, instance,
                                   target_host, on_shared_storage)
                       for instance in instances]
            outcome = [f.result() for f in pending]
        accepted = sum(1 for r in outcome if r.accepted)
        LOG.info('host-evacuate of %(host)s: %(ok)d of %(n)d accepted',
                 {'host': host, 'ok': accepted, 'n': len(outcome)})
        return outcome
