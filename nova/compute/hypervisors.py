"""The hypervisors the API shows: each compute node with its service, its
use and its servers.

A node's capacity is what its compute host recorded in ``compute_nodes``
(``nova/compute/resources.py``); its use is read from the database now,
with the formula the evacuation target choice counts
(``nova.scheduler.usage``), not the ``*_used`` values stored with the
capacity, which are as old as the host's last periodic update. So what an
operator reads before an evacuation is what the choice will see.

Example::

    for hypervisor in hypervisors.get_all(context):
        print(hypervisor.hostname, hypervisor.free_ram_mb)
"""

import dataclasses
import uuid

from nova.conf import CONF
from nova import exception
from nova.model import hardware
from nova import objects
from nova.objects import service as service_obj
from nova.scheduler import usage

# NOTE: compute_nodes has no UUID column; from microversion 2.53 a node
# is named by this name-based UUID of its (host, node name) key instead,
# stable as long as the key is (a host writes its row again in place).
_NAMESPACE = uuid.UUID('0e3f2a56-5d36-4b8e-9f43-8b9c1b2f6d71')


def node_uuid(host: str, hypervisor_hostname: str) -> str:
    key = '%s/%s' % (host, hypervisor_hostname)
    return str(uuid.uuid5(_NAMESPACE, key))


@dataclasses.dataclass(frozen=True)
class Server:
    uuid: str
    name: str


@dataclasses.dataclass(frozen=True)
class Hypervisor:
    id: int
    host: str
    # What the host recorded: capacity (its *_used values are not read).
    capacity: hardware.HostResources
    service: objects.Service
    used: usage.Need
    servers: tuple[Server, ...]
    # Servers with an operation in progress (a task state set).
    current_workload: int

    @property
    def uuid(self) -> str:
        return node_uuid(self.host, self.hostname)

    @property
    def hostname(self) -> str:
        return self.capacity.hypervisor_hostname

    @property
    def is_up(self) -> bool:
        return self.service.is_up(CONF.service_down_time)

    @property
    def running_vms(self) -> int:
        return len(self.servers)

    @property
    def free_ram_mb(self) -> int:
        return self.capacity.memory_mb - self.used.memory_mb

    @property
    def free_disk_gb(self) -> int:
        return self.capacity.local_gb - self.used.disk_gb


def _compute_services(context) -> dict[str, objects.Service]:
    return {s.host or '': s for s in objects.Service.get_all(
        context, binary=service_obj.COMPUTE_BINARY)}


def _describe(context, node_id: int, host: str,
              capacity: hardware.HostResources, service,
              node_count: int) -> Hypervisor:
    instances = objects.Instance.get_by_host(context, host)
    nodename = capacity.hypervisor_hostname
    if node_count > 1:
        # One node (libvirt) owns every instance of its host, even one
        # whose recorded node name is stale; several split them by name.
        instances = [i for i in instances if i.node == nodename]
    return Hypervisor(
        id=node_id, host=host, capacity=capacity, service=service,
        used=usage.of_node(context, host, nodename, node_count),
        servers=tuple(Server(uuid=i.uuid or '', name=i.display_name or '')
                      for i in instances),
        current_workload=sum(1 for i in instances if i.task_state))


def get_all(context, hostname_pattern: str | None = None
            ) -> list[Hypervisor]:
    """Every node whose compute service exists, by id; with a pattern,
    those whose name contains it (as Nova's SQL ``LIKE '%pattern%'``)."""
    services = _compute_services(context)
    nodes = objects.ComputeNode.get_all(context)
    per_host: dict[str, int] = {}
    for node in nodes:
        per_host[node.host or ''] = per_host.get(node.host or '', 0) + 1
    found = []
    for node in sorted(nodes, key=lambda n: n.id or 0):
        host = node.host or ''
        capacity = node.to_host_resources()
        service = services.get(host)
        if service is None:
            continue        # a node whose service was deleted: not shown
        if hostname_pattern is not None and \
                hostname_pattern not in capacity.hypervisor_hostname:
            continue
        found.append(_describe(context, node.id or 0, host, capacity,
                               service, per_host[host]))
    return found


def get(context, hypervisor_id: str, by_uuid: bool) -> Hypervisor:
    """The node ``hypervisor_id`` names (its UUID from 2.53, its integer
    id before); ``HypervisorNotFound`` otherwise."""
    for hypervisor in get_all(context):
        key = hypervisor.uuid if by_uuid else str(hypervisor.id)
        if key == hypervisor_id:
            return hypervisor
    raise exception.HypervisorNotFound(hypervisor_id=hypervisor_id)


@dataclasses.dataclass(frozen=True)
class Statistics:
    """The nodes summed (``GET /os-hypervisors/statistics``)."""
    count: int = 0
    vcpus: int = 0
    memory_mb: int = 0
    local_gb: int = 0
    vcpus_used: int = 0
    memory_mb_used: int = 0
    local_gb_used: int = 0
    free_ram_mb: int = 0
    free_disk_gb: int = 0
    current_workload: int = 0
    running_vms: int = 0


def statistics(context) -> Statistics:
    totals = Statistics()
    for h in get_all(context):
        totals = Statistics(
            count=totals.count + 1,
            vcpus=totals.vcpus + h.capacity.vcpus,
            memory_mb=totals.memory_mb + h.capacity.memory_mb,
            local_gb=totals.local_gb + h.capacity.local_gb,
            vcpus_used=totals.vcpus_used + h.used.vcpus,
            memory_mb_used=totals.memory_mb_used + h.used.memory_mb,
            local_gb_used=totals.local_gb_used + h.used.disk_gb,
            free_ram_mb=totals.free_ram_mb + h.free_ram_mb,
            free_disk_gb=totals.free_disk_gb + h.free_disk_gb,
            current_workload=totals.current_workload + h.current_workload,
            running_vms=totals.running_vms + h.running_vms)
    return totals
