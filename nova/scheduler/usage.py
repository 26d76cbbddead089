"""What instances take on a host, as the database sees it.

The sum of the flavors of the instances the database places on the host,
plus those of evacuations to it still in flight (``accepted`` or
``pre-migrating`` with this ``dest_compute``). Why the database and not
the hypervisor: the hypervisor's view lags behind every claim (a target
chosen for an evacuation has no guest until its spawn runs; a second
evacuation chosen meanwhile would overbook it), and a stopped instance
keeps its share since it may start again at any time. ``usage()`` is the
one formula: the target choice (``target.py``) calls it at choice time,
and each compute host records it with its capacity
(``nova/compute/resources.py``).

Example::

    used = usage.usage(context, 'compute1')
    used.memory_mb
"""

import dataclasses

from nova.model import hardware
from nova import objects


@dataclasses.dataclass(frozen=True)
class Need:
    """What one or more instances take on a host."""
    vcpus: int = 0
    memory_mb: int = 0
    disk_gb: int = 0

    @classmethod
    def of(cls, flavor) -> 'Need':
        if flavor is None:
            return cls()
        return cls(vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
                   disk_gb=flavor.disk_gb)

    def __add__(self, other: 'Need') -> 'Need':
        return Need(self.vcpus + other.vcpus,
                    self.memory_mb + other.memory_mb,
                    self.disk_gb + other.disk_gb)


def usage(context, host: str, exclude_instance: str | None = None,
          node: str | None = None) -> Need:
    """Sum of the flavors placed on ``host`` or on their way to it.

    ``node``: only those of that node (for a host with several).
    """
    # NOTE: read from the host's usage counters (nova/objects/
    # host_usage.py), one row per node however many instances the host
    # has: placement runs this for every candidate host at every choice,
    # and loading (then summing) each instance made a create cost grow
    # with the number of servers.
    used = Need(*objects.Instance.flavor_totals(
        context, host, node=node, exclude_uuid=exclude_instance))
    return used + _in_flight(context, [host], exclude_instance,
                             node).get(host, Need())


def usages(context, hosts, exclude_instance: str | None = None
           ) -> dict[str, Need]:
    """``usage`` of each of ``hosts``, in two reads whatever their
    number: the target choice weighs every host at each choice, and one
    read per host made an evacuation's cost grow with the region."""
    hosts = list(hosts)
    if not hosts:
        return {}
    totals = objects.Instance.flavor_totals_by_host(
        context, hosts, exclude_uuid=exclude_instance)
    coming = _in_flight(context, hosts, exclude_instance)
    return {host: Need(*totals[host]) + coming.get(host, Need())
            for host in hosts}


def _in_flight(context, hosts: list[str], exclude_instance: str | None,
               node: str | None = None) -> dict[str, Need]:
    """What evacuations still in flight to ``hosts`` add, per host: the
    instances not yet recorded there (each counted once)."""
    added: dict[str, Need] = {}
    seen = set()
    for arriving in objects.Migration.arriving(context, hosts):
        uuid = arriving.instance_uuid
        host = arriving.dest_compute
        if (host, uuid) in seen or uuid == exclude_instance or (
                node is not None and arriving.dest_node != node):
            continue
        seen.add((host, uuid))
        if arriving.host == host and (node is None or arriving.node == node):
            continue        # counted in the host's totals already
        added[host] = added.get(host, Need()) + Need(
            arriving.vcpus, arriving.memory_mb, arriving.disk_gb)
    return added


def of_node(context, host: str, node: str, nodes_of_host: int) -> Need:
    """What the instances of ``node`` take: those recorded on that node
    when ``host`` serves several (``nodes_of_host``), every instance of
    ``host`` when it serves one (libvirt), even one whose recorded node
    name is stale or empty."""
    return usage(context, host, node=node if nodes_of_host > 1 else None)


def with_usage(resources: hardware.HostResources,
               used: Need) -> hardware.HostResources:
    """``resources`` with its ``*_used`` values replaced by ``used``."""
    return dataclasses.replace(resources, vcpus_used=used.vcpus,
                               memory_mb_used=used.memory_mb,
                               local_gb_used=used.disk_gb)


def combined(nodes: list[hardware.HostResources]
             ) -> hardware.HostResources | None:
    """The nodes of one host as one (capacity and use summed)."""
    if not nodes:
        return None
    if len(nodes) == 1:
        return nodes[0]
    return hardware.HostResources(
        hypervisor_hostname=','.join(n.hypervisor_hostname for n in nodes),
        vcpus=sum(n.vcpus for n in nodes),
        memory_mb=sum(n.memory_mb for n in nodes),
        local_gb=sum(n.local_gb for n in nodes),
        vcpus_used=sum(n.vcpus_used for n in nodes),
        memory_mb_used=sum(n.memory_mb_used for n in nodes),
        local_gb_used=sum(n.local_gb_used for n in nodes),
        hypervisor_type=nodes[0].hypervisor_type)
