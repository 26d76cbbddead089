"""What a compute host holds, and its record in ``compute_nodes``.

``update_available_resource`` runs at ``init_host`` and as a periodic task
of the manager. For each node the driver serves it records:

* capacity (vCPUs, memory, disk, hypervisor type) from the hypervisor
  (``driver.get_available_resource(nodename)``);
* use (``*_used``) as the database sees it, not the hypervisor:
  ``nova.scheduler.usage.usage()``, the one formula the target choice
  uses too, at choice time, so the stored values are for display and the
  choice never depends on how old they are. The hypervisor's view is
  logged at debug level.

Nodes of this host that the driver no longer reports are removed, so a
renamed node does not count twice. First, the host's usage counters are
audited against its instances (``nova.objects.host_usage.audit``): a
drift is corrected and logged.

Example::

    nodes = resources.update_available_resource(compute, context)
"""

from oslo_log import log as logging

from nova import objects
from nova.objects import host_usage
from nova.scheduler import usage

LOG = logging.getLogger(__name__)


def update_available_resource(compute, context) -> list:
    """Record every node of ``compute.host`` (see the module docstring).

    Returns the ``objects.ComputeNode`` rows written. A node the driver
    cannot describe is logged and keeps its previous row; a database error
    is raised.
    """
    # The counters placement reads, checked against the instances now
    # and then (every correction is logged).
    host_usage.audit(compute.host)
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
        used = usage.of_node(context, compute.host, nodename,
                             len(nodenames))
        LOG.debug('Node %(node)s: hypervisor says %(hv_vcpus)d vCPUs, '
                  '%(hv_mem)d MiB, %(hv_disk)d GiB used; the database '
                  'counts %(used)s',
                  {'node': hypervisor.hypervisor_hostname,
                   'hv_vcpus': hypervisor.vcpus_used,
                   'hv_mem': hypervisor.memory_mb_used,
                   'hv_disk': hypervisor.local_gb_used, 'used': used})
        written.append(objects.ComputeNode.create_or_update(
            context, compute.host, usage.with_usage(hypervisor, used)))
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
