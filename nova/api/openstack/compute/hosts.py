"""``/os-hosts`` (up to microversion 2.42; 404 from 2.43, as the
reference): the hosts of the cloud's enabled services, and what one
compute host has.

Index lists one row a service (``host_name``, ``service``: its topic,
``zone``), optionally of one zone (``?zone=``; empty: every zone). Show
gives ``nova.compute.host_resources``' rows. Update and the power actions
(``GET .../reboot``, ``.../shutdown``, ``.../startup``) ask the
hypervisor driver for what libvirt's driver never does (enable a host,
maintenance mode, power the host): they answer 501 for a compute host,
as Nova with libvirt answers, after the 404 of an unknown host. Enabling
and disabling a compute service is ``os-services``' job.
"""

from nova.api.openstack import common
from nova.api.openstack.compute.schemas import hosts as schemas
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.compute import availability_zones
from nova.compute import host_resources
from nova import exception
from nova import objects

RULE = 'os_compute_api:os-hosts:%s'
MAX_VERSION = '2.42'


def _unsupported(context, host: str, action: str):
    """404 for an unknown host, else 501: what libvirt's driver answers."""
    host_resources.require_compute_host(context, host)
    raise exception.HostActionNotSupported(action=action, host=host)


class HostsController:
    def routes(self) -> list[Route]:
        return [
            Route('GET', '/os-hosts', self.index, max_version=MAX_VERSION),
            Route('GET', '/os-hosts/{host_name}', self.show,
                  max_version=MAX_VERSION),
            Route('PUT', '/os-hosts/{host_name}', self.update,
                  max_version=MAX_VERSION, body=schemas.update),
            Route('GET', '/os-hosts/{host_name}/reboot', self.reboot,
                  max_version=MAX_VERSION),
            Route('GET', '/os-hosts/{host_name}/shutdown', self.shutdown,
                  max_version=MAX_VERSION),
            Route('GET', '/os-hosts/{host_name}/startup', self.startup,
                  max_version=MAX_VERSION),
        ]

    def index(self, req):
        policy.authorize(req.context, RULE % 'list')
        zone = common.query_value(req, 'zone')
        zones = availability_zones.ZoneMap.read(req.context)
        hosts = []
        for service in objects.Service.get_all(req.context):
            service_zone = zones.of_service(service)
            if service.disabled or (zone and service_zone != zone):
                continue
            hosts.append({
                'host_name': service.host,
                'service': service.topic or service.binary.removeprefix(
                    'nova-'),
                'zone': service_zone,
            })
        return {'hosts': hosts}

    def show(self, req, host_name):
        policy.authorize(req.context, RULE % 'show')
        return {'host': [
            {'resource': {'host': row.host, 'project': row.project,
                          'cpu': row.cpu, 'memory_mb': row.memory_mb,
                          'disk_gb': row.disk_gb}}
            for row in host_resources.rows(req.context, host_name)]}

    def update(self, req, host_name):
        policy.authorize(req.context, RULE % 'update')
        body = req.validated_body()
        action = ('Enabling or disabling' if 'status' in body
                  else 'Maintenance mode')
        _unsupported(req.context, host_name, action)

    def reboot(self, req, host_name):
        policy.authorize(req.context, RULE % 'reboot')
        _unsupported(req.context, host_name, 'Rebooting')

    def shutdown(self, req, host_name):
        policy.authorize(req.context, RULE % 'shutdown')
        _unsupported(req.context, host_name, 'Shutting down')

    def startup(self, req, host_name):
        policy.authorize(req.context, RULE % 'start')
        _unsupported(req.context, host_name, 'Starting up')
