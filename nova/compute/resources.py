"""What a compute host holds, and its record in ``compute_nodes``.

``update_available_resource`` runs at ``init_host`` and as a periodic task
of the manager. For each node the driver serves it records:

* capacity (vCPUs, memory, disk, hypervisor type) from the hypervisor
  (``driver.get_available_resource(nodename)``);
* use (``*_used``) as the database sees it, not the hypervisor: the sum
  of the flavors of the instances the database places on the host, plus
  those of evacuations to it still in flight (``accepted`` or
  ``pre-migrating`` with this ``dest_compute``). Why: the hypervisor's
  view lags behind every claim (a target chosen for an evacuation has no
  guest until its spawn runs; a second evacuation chosen meanwhile would
  overbook it), and a stopped instance keeps its share since it may start
  again at any time. ``usage()`` here is the one formula; the conductor's
  target choice (``nova.conductor.target``) calls it too, at choice time,
  so the stored values are for display and the choice never depends on
  how old they are. The hypervisor's view is logged at debug level.

Nodes of this host that the driver no longer reports are removed, so a
renamed node does not count twice.

Example::

    nodes = resources.update_available_resource(compute, context)
"""

import dataclasses

from oslo_log import log as logging

from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova.virt import hardware

LOG = logging.getLogger(__name__)


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
        swap_gb = -(-int(flavor.swap or 0) // 1024)   # MiB, rounded up
        return cls(vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
                   disk_gb=(flavor.root_gb + (flavor.ephemeral_gb or 0)
                            + swap_gb))

    def __add__(self, other: 'Need') -> 'Need':
        return Need(self.vcpus + other.vcpus,
                    self.memory_mb + other.memory_mb,
                    self.disk_gb + other.disk_gb)


def usage(context, host: str, exclude_instance: str | None = None,
          node: str | None = None) -> Need:
    """Sum of the flavors placed on ``host`` or on their way to it.

    ``node``: only those of that node (for a host with several).
    """
    used = Need()
    seen = set()
    for instance in objects.Instance.get_all(context, host=host):
        if instance.uuid == exclude_instance or (
                node is not None and instance.node != node):
            continue
        seen.add(instance.uuid)
        used = used + Need.of(instance.flavor)
    for migration in objects.Migration.get_by_filters(
            context, dest_compute=host, status=list(migration_obj.IN_PROGRESS),
            migration_type=migration_obj.EVACUATION):
        uuid = migration.instance_uuid
        if uuid in seen or uuid == exclude_instance or (
                node is not None and migration.dest_node != node):
            continue
        seen.add(uuid)
        try:
            instance = objects.Instance.get_by_uuid(context, uuid)
        except exception.InstanceNotFound:
            continue
        used = used + Need.of(instance.flavor)
    return used


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


def update_available_resource(compute, context) -> list:
    """Record every node of ``compute.host`` (see the module docstring).

    Returns the ``objects.ComputeNode`` rows written. A node the driver
    cannot describe is logged and keeps its previous row; a database error
    is raised.
    """
    nodenames = list(compute.driver.get_available_nodes(refresh=True))
    written = []
    failed = set()
    for nodename in nodenames:
        try:
            hypervisor = compute.driver.get_available_resource(nodename)
        except NotImplementedError:
            LOG.warning('Driver %s cannot report the resources of node %s',
                        type(compute.driver).__name__, nodename)
            failed.add(nodename)
            continue
        except Exception:
            LOG.exception('Could not read the resources of node %s',
                          nodename)
            failed.add(nodename)
            continue
        # One node (libvirt): every instance of the host is its own, even
        # one whose recorded node name is stale or empty.
        used = usage(context, compute.host,
                     node=nodename if len(nodenames) > 1 else None)
        LOG.debug('Node %(node)s: hypervisor says %(hv_vcpus)d vCPUs, '
                  '%(hv_mem)d MiB, %(hv_disk)d GiB used; the database '
                  'counts %(used)s',
                  {'node': hypervisor.hypervisor_hostname,
                   'hv_vcpus': hypervisor.vcpus_used,
                   'hv_mem': hypervisor.memory_mb_used,
                   'hv_disk': hypervisor.local_gb_used, 'used': used})
        written.append(objects.ComputeNode.create_or_update(
            context, compute.host, with_usage(hypervisor, used)))
    _remove_stale_nodes(context, compute.host,
                        {n.hypervisor_hostname for n in written} | failed)
    return written


def _remove_stale_nodes(context, host, kept):
    for node in objects.ComputeNode.get_by_host(context, host):
        if node.hypervisor_hostname not in kept:
            LOG.info('Removing the record of node %(node)s: host %(host)s '
                     'no longer reports it',
                     {'node': node.hypervisor_hostname, 'host': host})
            node.destroy()
