"""What a compute host has and what its servers take, as ``GET
/os-hosts/{host}`` shows it.

Rows, in the reference's order: ``(total)`` (the capacity its nodes
recorded), ``(used_now)`` (what they recorded in use), ``(used_max)``
(the flavors of the instances the database places there), then one row
a project with instances there. A host whose nodes recorded nothing yet
shows zeros rather than nothing.

Example::

    rows = host_resources.rows(ctx, 'compute1')
    rows[0].project   # '(total)'
"""

import dataclasses

from nova import objects
from nova.scheduler import target
from nova.scheduler import usage


@dataclasses.dataclass(frozen=True)
class ResourceRow:
    host: str
    project: str
    cpu: int
    memory_mb: int
    disk_gb: int


def require_compute_host(context, host: str) -> None:
    """``ComputeHostNotFound`` (404) unless ``host`` has a compute
    service."""
    target.get_compute_service(context, host)


def rows(context, host: str) -> list[ResourceRow]:
    """``ComputeHostNotFound`` when ``host`` has no compute service."""
    require_compute_host(context, host)
    nodes = objects.ComputeNode.get_by_host(context, host)
    result = [
        ResourceRow(host, '(total)', sum(n.vcpus for n in nodes),
                    sum(n.memory_mb for n in nodes),
                    sum(n.local_gb for n in nodes)),
        ResourceRow(host, '(used_now)', sum(n.vcpus_used for n in nodes),
                    sum(n.memory_mb_used for n in nodes),
                    sum(n.local_gb_used for n in nodes)),
    ]
    by_project: dict[str, usage.Need] = {}
    for instance in objects.Instance.get_by_host(context, host):
        project = instance.project_id or ''
        by_project[project] = (by_project.get(project, usage.Need())
                               + usage.Need.of(instance.flavor))
    total = sum(by_project.values(), usage.Need())
    result.append(ResourceRow(host, '(used_max)', total.vcpus,
                              total.memory_mb, total.disk_gb))
    result.extend(ResourceRow(host, project, need.vcpus, need.memory_mb,
                              need.disk_gb)
                  for project, need in sorted(by_project.items()))
    return result
