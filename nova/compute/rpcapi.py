"""Client side of the compute RPC API (topic ``compute``, server = host).

The endpoints are the ``ComputeManager`` methods of the same names, called
with the request context first and keyword arguments. Every method is a
``cast`` (the caller does not wait); the result shows in the database.

Version history:

* 1.0: the initial API.
* 1.1: ``rebuild_instance`` takes ``target_state`` (the vm_state an
  evacuation ends in: ``stopped``, microversion 2.95); a message without
  it, or sent as 1.0, keeps the vm_state the instance had.
"""

import oslo_messaging as messaging

from nova import exception
from nova import rpc

TOPIC = 'compute'
RPC_API_VERSION = '1.1'


def check_target_state(client, target_state, version='1.1') -> str:
    """The version a message with ``target_state`` goes out as.

    None needs nothing new (1.0, the old behaviour); a state (the API
    sends only ``stopped``) needs ``version``, and a client capped below
    it (a rolling upgrade with older services) refuses, rather than let
    the evacuation end in the wrong state.
    """
    if target_state is None:
        return '1.0'
    if not client.can_send_version(version):
        raise exception.EvacuationTargetStateUnsupported(
            target_state=target_state)
    return version


class ComputeAPI:
    """Casts operations to the compute service of the instance's host.

    ``version_cap`` caps the version of the messages sent (for rolling
    upgrades: set it to the oldest version the running computes serve).
    """

    def __init__(self, version_cap=RPC_API_VERSION):
        target = messaging.Target(topic=TOPIC, version=RPC_API_VERSION)
        self.client = rpc.get_client(target, version_cap=version_cap)

    def _cctxt(self, host, version='1.0'):
        # ``version``: the one the message last changed in.
        if not host:
            raise ValueError('no compute host to send to')
        return self.client.prepare(server=host, version=version)

    def build_and_run_instance(self, ctxt, instance, host, image_meta,
                               network_info):
        self._cctxt(host).cast(ctxt, 'build_and_run_instance',
                               instance=instance, image_meta=image_meta,
                               network_info=network_info)

    def start_instance(self, ctxt, instance):
        self._cctxt(instance.host).cast(ctxt, 'start_instance',
                                        instance=instance)

    def stop_instance(self, ctxt, instance):
        self._cctxt(instance.host).cast(ctxt, 'stop_instance',
                                        instance=instance)

    def reboot_instance(self, ctxt, instance, reboot_type):
        self._cctxt(instance.host).cast(ctxt, 'reboot_instance',
                                        instance=instance,
                                        reboot_type=reboot_type)

    def suspend_instance(self, ctxt, instance):
        self._cctxt(instance.host).cast(ctxt, 'suspend_instance',
                                        instance=instance)

    def resume_instance(self, ctxt, instance):
        self._cctxt(instance.host).cast(ctxt, 'resume_instance',
                                        instance=instance)

    def terminate_instance(self, ctxt, instance):
        self._cctxt(instance.host).cast(ctxt, 'terminate_instance',
                                        instance=instance)

    def rebuild_instance(self, ctxt, instance, host, orig_image_ref,
                         image_ref, injected_files, new_pass,
                         orig_sys_metadata, bdms, recreate,
                         on_shared_storage, preserve_ephemeral, migration,
                         scheduled_node, target_state=None):
        """Cast to ``host`` (the evacuation target), else instance.host.

        ``target_state`` (1.1): ``stopped`` makes the evacuation end
        STOPPED; None (sent as 1.0, without it) keeps the vm_state.
        """
        version = check_target_state(self.client, target_state)
        extra = {} if target_state is None else {
            'target_state': target_state}
        self._cctxt(host or instance.host, version=version).cast(
            ctxt, 'rebuild_instance', instance=instance,
            orig_image_ref=orig_image_ref, image_ref=image_ref,
            injected_files=injected_files, new_pass=new_pass,
            orig_sys_metadata=orig_sys_metadata, bdms=bdms,
            recreate=recreate, on_shared_storage=on_shared_storage,
            preserve_ephemeral=preserve_ephemeral, migration=migration,
            scheduled_node=scheduled_node, **extra)

    def external_instance_event(self, ctxt, instances, events, host=None):
        """Cast events to one host: ``host`` or the first instance's host.

        The caller groups instances by host (``compute.api.API`` does).
        """
        if not instances:
            return
        self._cctxt(host or instances[0].host).cast(
            ctxt, 'external_instance_event', instances=instances,
            events=events)
