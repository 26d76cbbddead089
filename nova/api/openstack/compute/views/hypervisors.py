"""How a hypervisor looks in the API, by microversion.

The list shows id, name, state and status; the detail and show add the
host's service and the node's figures: capacity as its compute host
recorded it, use as the database counts it now (``nova.compute.
hypervisors``). From 2.28 ``cpu_info`` is an object (a string before);
from 2.53 the ids are UUIDs and ``servers`` is shown on request
(``with_servers``: when the node has any, and from 2.75 always); from
2.88 the figures are gone and show gives ``uptime``.

Figures compute_nodes does not record are shown as the reference allows
for an unknown value: ``hypervisor_version`` 0, ``cpu_info`` empty,
``host_ip`` and ``disk_available_least`` null (doc/source/api.rst).
"""

from nova.compute import hypervisors


def _id(req, hypervisor: hypervisors.Hypervisor):
    return hypervisor.uuid if req.is_version('2.53') else hypervisor.id


def servers(hypervisor: hypervisors.Hypervisor) -> list[dict]:
    return [{'uuid': s.uuid, 'name': s.name} for s in hypervisor.servers]


def _figures(req, h: hypervisors.Hypervisor) -> dict:
    return {
        'vcpus': h.capacity.vcpus,
        'memory_mb': h.capacity.memory_mb,
        'local_gb': h.capacity.local_gb,
        'vcpus_used': h.used.vcpus,
        'memory_mb_used': h.used.memory_mb,
        'local_gb_used': h.used.disk_gb,
        'free_ram_mb': h.free_ram_mb,
        'free_disk_gb': h.free_disk_gb,
        'current_workload': h.current_workload,
        'running_vms': h.running_vms,
        'disk_available_least': None,
        'cpu_info': {} if req.is_version('2.28') else '{}',
    }


def shown(req, h: hypervisors.Hypervisor, detail: bool,
          with_servers: bool = False) -> dict:
    view = {
        'id': _id(req, h),
        'hypervisor_hostname': h.hostname,
        'state': 'up' if h.is_up else 'down',
        'status': 'disabled' if h.service.disabled else 'enabled',
    }
    if detail:
        view.update({
            'hypervisor_type': h.capacity.hypervisor_type or '',
            'hypervisor_version': 0,
            'host_ip': None,
            'service': {
                'host': h.host,
                'id': (h.service.uuid if req.is_version('2.53')
                       else h.service.id),
                'disabled_reason': h.service.disabled_reason,
            },
        })
        if not req.is_version('2.88'):
            view.update(_figures(req, h))
    if with_servers and (h.servers or req.is_version('2.75')):
        view['servers'] = servers(h)
    return view


def statistics(totals: hypervisors.Statistics) -> dict:
    return {'hypervisor_statistics': {
        'count': totals.count,
        'vcpus': totals.vcpus,
        'memory_mb': totals.memory_mb,
        'local_gb': totals.local_gb,
        'vcpus_used': totals.vcpus_used,
        'memory_mb_used': totals.memory_mb_used,
        'local_gb_used': totals.local_gb_used,
        'free_ram_mb': totals.free_ram_mb,
        'free_disk_gb': totals.free_disk_gb,
        'current_workload': totals.current_workload,
        'running_vms': totals.running_vms,
        'disk_available_least': None,
    }}
