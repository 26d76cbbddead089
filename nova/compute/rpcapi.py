"""Client side of the compute RPC API (topic ``compute``, server = host).

The endpoints are the ``ComputeManager`` methods of the same names, called
with the request context first and keyword arguments. Every method but
the ``get_*`` ones is a ``cast`` (the caller does not wait); the result
shows in the database.

Version history:

* 1.0: the initial API.
* 1.1: ``rebuild_instance`` takes ``target_state`` (the vm_state an
  evacuation ends in: ``stopped``, microversion 2.95); a message without
  it, or sent as 1.0, keeps the vm_state the instance had.
* 1.2: ``rebuild_instance(instance, request)``: one
  ``rebuild_request.RebuildRequest`` instead of the keyword arguments,
  which carried five values nothing read. A compute serves the 1.0/1.1
  form still, and a client capped below 1.2 sends it.
* 1.3: ``get_host_uptime`` and ``get_instance_diagnostics``, the first
  calls (the caller waits for the answer): what only the host can say
  (``GET /os-hypervisors/{id}/uptime``, ``GET
  /servers/{id}/diagnostics``). A client capped below 1.3 cannot ask.
* 1.4: ``pause_instance`` and ``unpause_instance``. A compute of 1.3 or
  older has no such endpoint, so a client capped below 1.4 refuses
  (``PauseUnsupported``, 409) before sending, rather than leave the
  instance in ``pausing`` for good; the API then releases the task.
* 1.5: ``snapshot_instance`` and ``backup_instance`` (createImage and
  createBackup): the host uploads the root disk into the image the API
  created. A client capped below 1.5 refuses (the API answers 409).
"""

import oslo_messaging as messaging

from nova.compute import rebuild_request
from nova import exception
from nova import rpc

TOPIC = 'compute'
RPC_API_VERSION = '1.5'
# The version the snapshot and backup casts came in.
SNAPSHOT_VERSION = '1.5'
# The version the calls that read from a host came in.
READING_VERSION = '1.3'
# The version rebuild_instance takes a RebuildRequest in.
REBUILD_REQUEST_VERSION = '1.2'
# The version pause_instance and unpause_instance came in.
PAUSE_VERSION = '1.4'


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

    def _reading_cctxt(self, host):
        if not self.client.can_send_version(READING_VERSION):
            raise exception.ComputeServiceUnavailable(host=host)
        return self._cctxt(host, version=READING_VERSION)

    def get_host_uptime(self, ctxt, host) -> str:
        """What ``uptime`` says on ``host``; ``NotImplementedError`` if its
        driver cannot tell."""
        return self._reading_cctxt(host).call(ctxt, 'get_host_uptime')

    def get_instance_diagnostics(self, ctxt, instance):
        """The ``hardware.Diagnostics`` of the instance's guest, as its
        host reads them."""
        return self._reading_cctxt(instance.host).call(
            ctxt, 'get_instance_diagnostics', instance=instance)

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

    def _pausing_cctxt(self, host):
        if not self.client.can_send_version(PAUSE_VERSION):
            raise exception.PauseUnsupported()
        return self._cctxt(host, version=PAUSE_VERSION)

    def pause_instance(self, ctxt, instance):
        self._pausing_cctxt(instance.host).cast(ctxt, 'pause_instance',
                                                instance=instance)

    def unpause_instance(self, ctxt, instance):
        self._pausing_cctxt(instance.host).cast(ctxt, 'unpause_instance',
                                                instance=instance)

    def _snapshot_cctxt(self, instance):
        if not self.client.can_send_version(SNAPSHOT_VERSION):
            raise exception.InstanceInvalidState(
                instance_uuid=instance.uuid, attr='compute service version',
                state='older than %s' % SNAPSHOT_VERSION,
                method='createImage')
        return self._cctxt(instance.host, version=SNAPSHOT_VERSION)

    def snapshot_instance(self, ctxt, instance, image_id):
        self._snapshot_cctxt(instance).cast(
            ctxt, 'snapshot_instance', instance=instance, image_id=image_id)

    def backup_instance(self, ctxt, instance, image_id, backup_type,
                        rotation):
        self._snapshot_cctxt(instance).cast(
            ctxt, 'backup_instance', instance=instance, image_id=image_id,
            backup_type=backup_type, rotation=rotation)

    def terminate_instance(self, ctxt, instance):
        self._cctxt(instance.host).cast(ctxt, 'terminate_instance',
                                        instance=instance)

    def rebuild_instance(self, ctxt, instance,
                         request: rebuild_request.RebuildRequest,
                         host=None):
        """Cast ``request`` to ``host`` (the evacuation target), else
        instance.host.

        As 1.2 when the cap allows it; else in the keyword arguments of
        1.0 (no ``target_state``) or 1.1 (``target_state`` ``stopped``,
        refused below 1.1: ``check_target_state``).
        """
        if self.client.can_send_version(REBUILD_REQUEST_VERSION):
            version = REBUILD_REQUEST_VERSION
            kwargs = {'request': request}
        else:
            version = check_target_state(self.client, request.target_state)
            kwargs = rebuild_request.to_legacy(request)
        self._cctxt(host or instance.host, version=version).cast(
            ctxt, 'rebuild_instance', instance=instance, **kwargs)

    def external_instance_event(self, ctxt, instances, events, host=None):
        """Cast events to one host: ``host`` or the first instance's host.

        The caller groups instances by host (``compute.api.API`` does).
        """
        if not instances:
            return
        self._cctxt(host or instances[0].host).cast(
            ctxt, 'external_instance_event', instances=instances,
            events=events)
