"""The conductor's RPC endpoints: evacuation target choice and
host-evacuate.

``evacuate_instance`` receives an evacuation the API accepted (instance in
task_state ``rebuilding``, migration ``accepted``), chooses and claims a
target unless one was named (``target.TargetChooser``) and casts
``rebuild_instance(recreate=True)`` to it. If no target can be found the
evacuation ends here: migration ``failed``, instance back to no task with
its vm_state unchanged, a fault and an action event saying why.

``run_host_evacuation`` runs a host-evacuate the API recorded
(``nova.objects.host_evacuation``) in a thread of its own
(``host_evacuation.Runner``): every instance of the failed host, requested
as single evacuations and watched to their end. A conductor that starts
again marks the runs it owned and never ended ``interrupted``; one that
stops ends its runs the same way. ``evacuation_ended`` (a fanout from
the target) wakes the run watching that evacuation.
"""

import threading

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from nova.compute import evacuation_states
from nova.compute import rebuild_request
from nova.conductor import evacuation_ends
from nova.conductor import host_evacuation
from nova.conductor import rpcapi as conductor_rpcapi
from nova.conf import CONF
from nova import context as nova_context
from nova import exception
from nova import manager as nova_manager
from nova.model import task_states
from nova import objects
from nova.objects import host_evacuation as run_obj
from nova.objects import migration as migration_obj
from nova import phases
from nova.scheduler import target as target_mod

LOG = logging.getLogger(__name__)

EVENT = 'conductor_rebuild_server'


class _LocalConductor:
    """Lets host-evacuate reuse ``compute.api.API.evacuate`` and hand the
    accepted evacuation to this very conductor, without an RPC round
    trip; ``exclude``: targets the choice leaves out for this attempt."""

    def __init__(self, manager, exclude=()):
        self.manager = manager
        self.exclude = tuple(exclude)

    def evacuate_instance(self, ctxt, instance, migration, host=None,
                          on_shared_storage=None, target_state=None):
        self.manager._evacuate(ctxt, instance, migration, host=host,
                               on_shared_storage=on_shared_storage,
                               target_state=target_state,
                               exclude=self.exclude)


class ConductorManager(nova_manager.Manager):
    """Endpoints of topic ``conductor``."""

    # The RPC version served (conductor/rpcapi.py has the history).
    target = messaging.Target(version=conductor_rpcapi.RPC_API_VERSION)

    def __init__(self, compute_rpcapi, capacity_provider=None,
                 chooser=None):
        self.compute_rpcapi = compute_rpcapi
        self.chooser = chooser or target_mod.TargetChooser(capacity_provider)
        # Set when the service stops: running host-evacuates stop too.
        self._stopping = threading.Event()
        # What the running host-evacuates watch, woken by the targets.
        self._ends = evacuation_ends.EndSignals()
        self._runs: list[threading.Thread] = []
        self._runs_lock = threading.Lock()

    def init_host(self) -> None:
        """Runs this conductor owned before it stopped never end now:
        say so, rather than leave them ``running`` forever."""
        ctxt = nova_context.get_admin_context()
        for run in run_obj.HostEvacuation.interrupt_owned_by(
                ctxt, CONF.host, run_obj.interrupted_message(CONF.host)):
            LOG.warning('host-evacuate %(run)s of %(host)s was interrupted '
                        'by a restart of this conductor',
                        {'run': run.uuid, 'host': run.source_host})

    def cleanup_host(self) -> None:
        """Stop the running host-evacuates (each marks its run
        ``interrupted``) before the service ends."""
        self._stopping.set()
        self._ends.wake_all()
        with self._runs_lock:
            runs = list(self._runs)
        for thread in runs:
            thread.join()

    # -- evacuate one instance -----------------------------------------------

    def evacuate_instance(self, ctxt, instance, migration, host=None,
                          on_shared_storage=None, target_state=None):
        """Choose a target (unless ``host``) and rebuild the instance there,
        ending in ``target_state`` (None: the vm_state it had; ``stopped``
        at microversion 2.95).

        Returns the target host; raises (after ending the evacuation) when
        there is none.
        """
        return self._evacuate(ctxt, instance, migration, host=host,
                              on_shared_storage=on_shared_storage,
                              target_state=target_state)

    def _evacuate(self, ctxt, instance, migration, host=None,
                  on_shared_storage=None, target_state=None, exclude=()):
        """``evacuate_instance``, the choice leaving out ``exclude``
        (host-evacuate's retries)."""
        # NOTE: the evacuation is ended only after the action event is
        # finished, so that whoever sees the instance idle again also sees
        # the complete record of why.
        phases.mark('conductor.received', ctxt.request_id)
        try:
            with objects.InstanceActionEvent.record(
                    ctxt, instance.uuid, EVENT, CONF.host):
                target = self.chooser.choose_and_claim(
                    ctxt, instance, migration, host=host,
                    on_shared_storage=on_shared_storage, exclude=exclude)
                phases.mark('conductor.target_claimed', ctxt.request_id)
                self.compute_rpcapi.rebuild_instance(
                    ctxt, instance, request=rebuild_request.RebuildRequest(
                        recreate=True, image_ref=instance.image_ref,
                        on_shared_storage=on_shared_storage,
                        migration=migration,
                        scheduled_node=migration.dest_node,
                        target_state=target_state),
                    host=target)
                phases.mark('conductor.rebuild_cast', ctxt.request_id)
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

    def run_host_evacuation(self, ctxt, evacuation_uuid: str) -> None:
        """Take the recorded run and run it in a thread of its own (the
        RPC cast returns at once); a run another conductor took, or that
        ended, is left alone."""
        run = run_obj.HostEvacuation.get_by_uuid(ctxt, evacuation_uuid)
        if not run.take(CONF.host):
            LOG.warning('host-evacuate %(run)s is %(status)s (conductor '
                        '%(owner)s): not run again',
                        {'run': run.uuid, 'status': run.status,
                         'owner': run.conductor})
            return
        runner = host_evacuation.Runner(
            ctxt, run, self.chooser, self.compute_rpcapi,
            lambda exclude: _LocalConductor(self, exclude), self._stopping,
            self._ends)
        thread = threading.Thread(target=runner.run, daemon=True,
                                  name='host-evacuate-%s' % run.uuid)
        with self._runs_lock:
            self._runs = [t for t in self._runs if t.is_alive()]
            self._runs.append(thread)
        thread.start()

    def evacuation_ended(self, ctxt, migration_uuid: str) -> None:
        """A target's word (fanout cast, 1.3) that the evacuation of
        ``migration_uuid`` ended there: the host-evacuate watching it, if
        this conductor runs one, reads its rows now
        (``evacuation_ends``)."""
        self._ends.ended(migration_uuid)
