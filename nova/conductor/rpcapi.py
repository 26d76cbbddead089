"""Client side of the conductor RPC API (topic ``conductor``).

The endpoints are the ``ConductorManager`` methods of the same names. Any
running conductor may serve a message (no server in the target).

Version history:

* 1.0: the initial API.
* 1.1: ``evacuate_instance`` takes ``target_state`` (``stopped``:
  microversion 2.95's evacuation that ends STOPPED), passed on to the
  target's ``rebuild_instance``.
* 1.2: ``run_host_evacuation`` (cast) runs a host-evacuate the API
  recorded; ``host_evacuate`` (a call nothing made any more) is gone.
* 1.3: ``evacuation_ended`` (fanout cast, from the target): wakes the
  host-evacuate that watches that evacuation.
"""

import oslo_messaging as messaging

from nova.compute import rpcapi as compute_rpcapi
from nova import rpc

TOPIC = 'conductor'
RPC_API_VERSION = '1.3'


class ConductorAPI:

    def __init__(self, version_cap=RPC_API_VERSION, timeout=None):
        target = messaging.Target(topic=TOPIC, version=RPC_API_VERSION)
        self.client = rpc.get_client(target, version_cap=version_cap,
                                     timeout=timeout)

    def evacuate_instance(self, ctxt, instance, migration, host=None,
                          on_shared_storage=None, target_state=None):
        """Cast: choose a target (unless ``host``) and rebuild there,
        ending in ``target_state`` (1.1; None keeps the vm_state)."""
        version = compute_rpcapi.check_target_state(self.client,
                                                    target_state)
        extra = {} if target_state is None else {
            'target_state': target_state}
        self.client.prepare(version=version).cast(
            ctxt, 'evacuate_instance', instance=instance,
            migration=migration, host=host,
            on_shared_storage=on_shared_storage, **extra)

    def run_host_evacuation(self, ctxt, evacuation_uuid):
        """Cast: run the recorded host-evacuate ``evacuation_uuid``
        (``nova.objects.host_evacuation``) to its end (1.2)."""
        self.client.prepare(version='1.2').cast(
            ctxt, 'run_host_evacuation', evacuation_uuid=evacuation_uuid)

    def evacuation_ended(self, ctxt, migration_uuid):
        """Fanout cast (1.3): the evacuation of ``migration_uuid`` ended
        on this target, so a host-evacuate watching it reads its rows
        now. Not sent to conductors capped below 1.3: they read them at
        their next poll. Returns whether it was sent."""
        if not self.client.can_send_version('1.3'):
            return False
        self.client.prepare(version='1.3', fanout=True).cast(
            ctxt, 'evacuation_ended', migration_uuid=migration_uuid)
        return True
