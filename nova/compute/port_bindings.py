"""Port bindings of an evacuation.

The network agent of a host reports only the ports bound to that host. So
the ports move to the target *before* it spawns (its agent then sends the
network-vif-plugged events spawn waits for), and go back to the host the
database places the instance on when the evacuation fails, in a living
process (``rebuild.py``) or after a crash cut it short
(``evacuation.fail_interrupted_evacuations``): the source's agent reports
them again once that host plugs them.

Example (on the target)::

    binding = port_bindings.bind_here(network_api, host, ctx, instance)
    ...         # spawn with binding.network_info
    port_bindings.rebind_to_owner(network_api, host, ctx, instance,
                                  binding)
"""

import dataclasses

from oslo_log import log as logging

from nova import exception
from nova.model import network as network_model
from nova.network import api as network_api_mod
from nova import objects

LOG = logging.getLogger(__name__)


def default_api():
    return network_api_mod.API()


@dataclasses.dataclass(frozen=True)
class Binding:
    """What ``bind_here`` did, handed along the rest of the operation so
    that nothing reads the ports again to find it out: the host, the
    ports as bound there (with their networks), and the VIFs to plug."""
    host: str
    ports: network_api_mod.InstancePorts
    network_info: network_model.NetworkInfo


def bind_here(network_api, host, context, instance) -> Binding:
    """Bind the instance's ports to ``host``; its VIFs as that host will
    plug them (not active yet: the driver waits for their events).

    An instance whose VIFs have no ports in the network backend (tests
    hand VIFs in directly) keeps its VIFs, made inactive the same way.
    """
    ports = network_api.bind(context, instance, host)
    if ports.ports:
        network_info = ports.network_info()
    else:
        network_info = network_model.NetworkInfo(
            dataclasses.replace(vif, active=False)
            for vif in instance.network_info)
    return Binding(host, ports, network_info)


def after_spawn(network_api, context, instance, binding: Binding):
    """The VIFs as the ports are now: active where this host's agent
    reported them plugged (a later reboot here must not wait for events
    that will not come again). The binding's VIFs when there are no
    ports, or when they cannot be read (the guest runs: do not fail for
    this).

    NOTE: the ports are read again, because the agent changed their
    status since the binding; their networks are the binding's.
    """
    try:
        current = network_api.get_ports(context, instance,
                                        networks=binding.ports.networks)
    except Exception:
        LOG.exception('Could not read the ports; keeping the VIFs as '
                      'bound', instance=instance)
        return binding.network_info
    if current.ports:
        return current.network_info()
    return binding.network_info


def bind_to_owner(network_api, context, instance):
    """After reset-state: the ports go to the host the database now
    places the instance on, if any of them is bound elsewhere (an
    evacuation given up on had bound them to its target). Ports of an
    instance on no host stay as they are. Never raises."""
    _give_back(network_api, context, instance,
               lambda owner, ports: not ports.all_bound_to(owner),
               'Could not bind the ports to the instance\'s host')


def rebind_to_owner(network_api, host, context, instance,
                    binding: Binding | None = None):
    """After a failed evacuation to ``host``: the ports it bound there go
    back to the instance's host as the database records it (the source,
    unless ``host`` took the instance over before the failure). Ports it
    never moved are left as they are. Never raises.

    ``binding``: what this evacuation bound (``bind_here``), so the
    ports are not read again; without it (the evacuation failed before
    binding, or a restarted host ends one a crash cut short) they are
    read, once.
    """
    ports = binding.ports if binding is not None and \
        binding.host == host else None
    _give_back(network_api, context, instance,
               lambda owner, ports: owner != host and ports.any_bound_to(
                   host),
               'Could not bind the ports back to the instance\'s host',
               ports=ports)


def _give_back(network_api, context, instance, misplaced, failure,
               ports=None):
    """Bind the ports to the instance's host as the database records it,
    when it has one and ``misplaced(owner, ports)``; ``ports`` as this
    operation read them, else read now. Logs ``failure`` instead of
    raising."""
    try:
        owner = objects.Instance.get_by_uuid(context, instance.uuid).host
        if not owner:
            return
        if ports is None:
            ports = network_api.get_ports(context, instance)
        if misplaced(owner, ports):
            network_api.bind(context, instance, owner, ports=ports)
            LOG.info('Bound the ports back to %s', owner, instance=instance)
    except exception.InstanceNotFound:
        pass        # deleted meanwhile: its delete freed the ports
    except Exception:
        LOG.exception(failure, instance=instance)
