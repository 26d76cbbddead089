"""``GET /servers/{server_id}/diagnostics``: what the hypervisor says of
a running server now (admin only), read by its compute host over RPC.

From 2.48 the answer is the reference's standard format; below, Nova
answered each driver's own keys, and this project answers a flat form of
the same figures (``cpu0_time``, ``memory``, ``disk0_read``, ...). A
server that is not running is a 409.
"""

from nova.api.openstack import common
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.model import diagnostics as diagnostics_mod

RULE = 'os_compute_api:os-server-diagnostics'


def standard(diagnostics: diagnostics_mod.Diagnostics) -> dict:
    return {
        'state': diagnostics.state,
        'driver': diagnostics.driver,
        'hypervisor': diagnostics.hypervisor,
        'hypervisor_os': diagnostics.hypervisor_os,
        'uptime': diagnostics.uptime,
        'config_drive': diagnostics.config_drive,
        'num_cpus': len(diagnostics.cpu_details),
        'num_disks': len(diagnostics.disk_details),
        'num_nics': len(diagnostics.nic_details),
        'memory_details': {'maximum': diagnostics.memory_maximum,
                           'used': diagnostics.memory_used},
        'cpu_details': [{'id': c.id, 'time': c.time,
                         'utilisation': c.utilisation}
                        for c in diagnostics.cpu_details],
        'nic_details': [{
            'mac_address': n.mac_address,
            'rx_octets': n.rx_octets, 'rx_errors': n.rx_errors,
            'rx_drop': n.rx_drop, 'rx_packets': n.rx_packets,
            'rx_rate': n.rx_rate, 'tx_octets': n.tx_octets,
            'tx_errors': n.tx_errors, 'tx_drop': n.tx_drop,
            'tx_packets': n.tx_packets, 'tx_rate': n.tx_rate,
        } for n in diagnostics.nic_details],
        'disk_details': [{
            'read_bytes': d.read_bytes, 'read_requests': d.read_requests,
            'write_bytes': d.write_bytes,
            'write_requests': d.write_requests,
            'errors_count': d.errors_count,
        } for d in diagnostics.disk_details],
    }


def legacy(diagnostics: diagnostics_mod.Diagnostics) -> dict:
    """The figures as one flat object (before 2.48), memory in KiB as
    libvirt's legacy keys were."""
    flat: dict = {}
    for n, cpu in enumerate(diagnostics.cpu_details):
        flat['cpu%d_time' % n] = cpu.time
    if diagnostics.memory_maximum is not None:
        flat['memory'] = diagnostics.memory_maximum * 1024
    for n, disk in enumerate(diagnostics.disk_details):
        flat.update({'disk%d_read' % n: disk.read_bytes,
                     'disk%d_read_req' % n: disk.read_requests,
                     'disk%d_write' % n: disk.write_bytes,
                     'disk%d_write_req' % n: disk.write_requests,
                     'disk%d_errors' % n: disk.errors_count})
    for n, nic in enumerate(diagnostics.nic_details):
        flat.update({'nic%d_rx' % n: nic.rx_octets,
                     'nic%d_rx_packets' % n: nic.rx_packets,
                     'nic%d_rx_errors' % n: nic.rx_errors,
                     'nic%d_rx_drop' % n: nic.rx_drop,
                     'nic%d_tx' % n: nic.tx_octets,
                     'nic%d_tx_packets' % n: nic.tx_packets,
                     'nic%d_tx_errors' % n: nic.tx_errors,
                     'nic%d_tx_drop' % n: nic.tx_drop})
    return flat


class ServerDiagnosticsController:
    def __init__(self, compute_api):
        self.compute_api = compute_api

    def routes(self) -> list[Route]:
        return [Route('GET', '/servers/{server_id}/diagnostics', self.show)]

    def show(self, req, server_id):
        policy.authorize(req.context, RULE)
        instance = common.get_instance(self.compute_api, req.context,
                                       server_id)
        diagnostics = self.compute_api.get_diagnostics(req.context, instance)
        if req.is_version('2.48'):
            return standard(diagnostics)
        return legacy(diagnostics)
