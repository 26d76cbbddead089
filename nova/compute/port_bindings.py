"""Port bindings of an evacuation.

The network agent of a host reports only the ports bound to that host. So
the ports move to the target *before* it spawns (its agent then sends the
network-vif-plugged events spawn waits for), and go back to the host the
database places the instance on when the evacuation fails, in a living
process (``rebuild.py``) or after a crash cut it short
(``evacuation.fail_interrupted_evacuations``): the source's agent reports
them again once that host plugs them.

Example (on the target)::

    network_info = port_bindings.bind_here(network_api, host, ctx, instance)
    ...
    port_bindings.rebind_to_owner(network_api, host, ctx, instance)
"""

import dataclasses

from oslo_log import log as logging

from nova import exception
from nova.network import api as network_api_mod
from nova.model import network as network_model
from nova import objects

LOG = logging.getLogger(__name__)


def default_api():
    return network_api_mod.API()


def bind_here(network_api, host, context, instance):
    """Bind the instance's ports to ``host``; its VIFs as that host will
    plug them (not active yet: the driver waits for their events).

    An instance whose VIFs have no ports in the network backend (tests
    hand VIFs in directly) keeps its VIFs, made inactive the same way.
    """
    bound = network_api.bind_ports(context, instance, host)
    if bound:
        return network_model.NetworkInfo(bound)
    return network_model.NetworkInfo(
        dataclasses.replace(vif, active=False)
        for vif in instance.network_info)


def after_spawn(network_api, context, instance, network_info):
    """The VIFs as the ports are now: active where this host's agent
    reported them plugged (a later reboot here must not wait for events
    that will not come again). ``network_info`` when there are no ports,
    or when they cannot be read (the guest runs: do not fail for this).
    """
    try:
        current = network_api.get_instance_nw_info(context, instance)
    except Exception:
        LOG.exception('Could not read the ports; keeping the VIFs as '
                      'bound', instance=instance)
        return network_info
    return network_model.NetworkInfo(current) if current else network_info


def bind_to_owner(network_api, context, instance):
    """After reset-state: the ports go to the host the database now
    places the instance on, if any of them is bound elsewhere (an
    evacuation given up on had bound them to its target). Ports of an
    instance on no host stay as they are. Never raises."""
    try:
        owner = objects.Instance.get_by_uuid(context, instance.uuid).host
        if owner and any(port.binding_host != owner for port in
                         objects.Port.get_by_instance_uuid(context,
                                                           instance.uuid)):
            network_api.bind_ports(context, instance, owner)
            LOG.info('Bound the ports back to %s', owner, instance=instance)
    except exception.InstanceNotFound:
        pass        # deleted meanwhile: its delete freed the ports
    except Exception:
        LOG.exception('Could not bind the ports to the instance\'s host',
                      instance=instance)


def rebind_to_owner(network_api, host, context, instance):
    """After a failed evacuation to ``host``: the ports it bound there go
    back to the instance's host as the database records it (the source,
    unless ``host`` took the instance over before the failure). Ports it
    never moved are left as they are. Never raises."""
    try:
        owner = objects.Instance.get_by_uuid(context, instance.uuid).host
        moved = any(port.binding_host == host for port in
                    objects.Port.get_by_instance_uuid(context,
                                                      instance.uuid))
        if moved and owner and owner != host:
            network_api.bind_ports(context, instance, owner)
            LOG.info('Bound the ports back to %s', owner, instance=instance)
    except exception.InstanceNotFound:
        pass        # deleted meanwhile: its delete freed the ports
    except Exception:
        LOG.exception('Could not bind the ports back to the instance\'s '
                      'host', instance=instance)
