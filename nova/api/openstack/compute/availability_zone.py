"""``/os-availability-zone``: the zones servers may be created in, and
(``/detail``, administrators) every zone with its hosts and services.

A zone is available while some enabled service is in it. The plain list
hides the internal services' zone (no server runs there) and shows no
hosts (``"hosts": null``); the detail shows, for each available zone,
each host's enabled services (API services left out, as the reference
does): ``available`` (up), ``active`` (enabled) and ``updated_at`` (the
last heartbeat). Zones are computed by ``nova.compute.availability_zones``.
"""

from nova.api.openstack import common
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.compute import availability_zones
from nova.conf import CONF
from nova.model import binaries
from nova import objects

LIST_RULE = 'os_compute_api:os-availability-zone:list'
DETAIL_RULE = 'os_compute_api:os-availability-zone:detail'

# Not kept as the other services are (the reference leaves them out).
_API_BINARIES = (binaries.API, 'nova-metadata')


def _zone(state, hosts=None) -> dict:
    return {'zoneName': state.name,
            'zoneState': {'available': state.available},
            'hosts': hosts}


class AvailabilityZoneController:
    def routes(self) -> list[Route]:
        return [
            Route('GET', '/os-availability-zone', self.index),
            Route('GET', '/os-availability-zone/detail', self.detail),
        ]

    def index(self, req):
        policy.authorize(req.context, LIST_RULE)
        states = availability_zones.zone_states(
            req.context, objects.Service.get_all(req.context))
        internal = availability_zones.internal_zone()
        return {'availabilityZoneInfo': [
            _zone(s) for s in states if s.name != internal]}

    def detail(self, req):
        policy.authorize(req.context, DETAIL_RULE)
        services = objects.Service.get_all(req.context)
        zones = availability_zones.ZoneMap.read(req.context)
        states = availability_zones.zone_states(req.context, services)
        hosts: dict[str, dict[str, dict]] = {}
        for service in services:
            if service.disabled or service.binary in _API_BINARIES:
                continue
            zone_hosts = hosts.setdefault(zones.of_service(service), {})
            zone_hosts.setdefault(service.host, {})[service.binary] = {
                'available': service.is_up(CONF.service_down_time),
                'active': True,
                'updated_at': common.dbtime(service.last_seen_up
                                            or service.updated_at),
            }
        return {'availabilityZoneInfo': [
            _zone(s, hosts.get(s.name, {}) if s.available else None)
            for s in states]}
