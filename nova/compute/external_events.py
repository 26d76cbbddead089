"""External events about instances: what the network backend reports.

The REST API (``os-server-external-events``) casts them to the host of the
instance. ``network-vif-plugged`` wakes the virt driver waiting for it and,
when it completed, marks the VIF ``active`` in the instance's
network_info: its port is bound on this host, so a later start or reboot
does not wait for it again. Handling takes no instance lock: the operation
waiting for the event holds it.
"""

import dataclasses

from oslo_log import log as logging

from nova.model import external_event
from nova.model import network as network_model

LOG = logging.getLogger(__name__)

VIF_PLUGGED = 'network-vif-plugged'
VIF_UNPLUGGED = 'network-vif-unplugged'
NETWORK_CHANGED = 'network-changed'


def as_event(value):
    """An ``InstanceExternalEvent`` from one, or from its RPC dict form."""
    if isinstance(value, external_event.InstanceExternalEvent):
        return value
    return external_event.InstanceExternalEvent(
        instance_uuid=value.get('instance_uuid') or value['server_uuid'],
        name=value['name'], tag=value.get('tag'),
        status=value.get('status', external_event.STATUS_COMPLETED))


def handle(compute, context, instances, events):
    by_uuid = {instance.uuid: instance for instance in instances}
    for event in (as_event(e) for e in events):
        instance = by_uuid.get(event.instance_uuid)
        if instance is None:
            LOG.warning('Event %s for an instance not in this request',
                        event.name, instance_uuid=event.instance_uuid)
            continue
        LOG.info('Received event %(name)s-%(tag)s (%(status)s)',
                 {'name': event.name, 'tag': event.tag,
                  'status': event.status}, instance=instance)
        if event.name == VIF_PLUGGED:
            compute.virtapi.events.deliver(event)
            if event.status == external_event.STATUS_COMPLETED:
                _mark_vif_active(instance, event.tag)
        elif event.name not in (VIF_UNPLUGGED, NETWORK_CHANGED):
            LOG.warning('Ignoring unknown event %s', event.name,
                        instance=instance)


def _mark_vif_active(instance, port_id):
    vifs = list(instance.network_info)
    changed = False
    for index, vif in enumerate(vifs):
        if vif.id == port_id and not vif.active:
            vifs[index] = dataclasses.replace(vif, active=True)
            changed = True
    if changed:
        instance.network_info = network_model.NetworkInfo(vifs)
        instance.save()
