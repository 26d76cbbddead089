"""Availability zones as the API shows and takes them.

Which zone a host is in is ``nova.scheduler.zones``' (placement keeps to
it too); here: the zone a server is shown in (its host's, or before it
has a host the one its create asked for), the zones listed with whether
they are available, and the check of a zone a create asks for.

Example::

    zones = availability_zones.ZoneMap.read(ctx)
    availability_zones.instance_zone(zones, instance)   # 'az1'
    availability_zones.check_requested(ctx, 'az1')      # or 400
"""

import dataclasses

from nova import exception
from nova.model import binaries
from nova import objects
from nova.scheduler import zones as zones_mod

# The one definition of which zone a host is in, shared with placement.
ZoneMap = zones_mod.ZoneMap
default_zone = zones_mod.default_zone
internal_zone = zones_mod.internal_zone


def instance_zone(zones: ZoneMap, instance) -> str:
    """The zone a server is shown in: its host's, else the one asked for
    ('' when neither)."""
    if instance.host:
        return zones.of_host(instance.host)
    return instance.availability_zone or ''


@dataclasses.dataclass(frozen=True)
class ZoneState:
    name: str
    # Some enabled service is in it (the reference's "available", which
    # says nothing of whether the services are up).
    available: bool


def zone_states(context, services) -> list[ZoneState]:
    """The zones of ``services``: those with an enabled service first,
    then those whose services are all disabled, each in first-seen order
    (``services`` ordered by host)."""
    zones = ZoneMap.read(context)
    available: list[str] = []
    unavailable: list[str] = []
    for service in services:
        zone = zones.of_service(service)
        if not service.disabled and zone not in available:
            available.append(zone)
    for service in services:
        zone = zones.of_service(service)
        if zone not in available and zone not in unavailable:
            unavailable.append(zone)
    return ([ZoneState(zone, True) for zone in available]
            + [ZoneState(zone, False) for zone in unavailable])


def check_requested(context, zone: str) -> None:
    """``InvalidAvailabilityZone`` (400) unless an enabled compute service
    is in ``zone`` (the internal zone never has one)."""
    zones = ZoneMap.read(context)
    enabled = [service for service in objects.Service.get_all(
        context, binary=binaries.COMPUTE) if not service.disabled]
    if not any(zones.of_host(service.host) == zone for service in enabled):
        raise exception.InvalidAvailabilityZone(zone=zone)


@dataclasses.dataclass(frozen=True)
class RequestedZone:
    """What ``availability_zone`` in ``POST /servers`` asks for:
    ``zone``, ``zone:host``, ``zone:host:node`` or ``zone::node`` (an
    empty part: not asked)."""
    zone: str | None = None
    host: str | None = None
    node: str | None = None

    @property
    def names_a_host(self) -> bool:
        """Whether it forces a host or node (administrators only)."""
        return self.host is not None or self.node is not None

    @classmethod
    def parse(cls, value: str | None) -> 'RequestedZone':
        if not value:
            return cls()
        parts = value.split(':')
        if len(parts) > 3:
            raise exception.InvalidInput(
                reason='availability_zone has more than three parts: '
                       'zone:host:node')
        zone, host, node = (parts + [''] * 3)[:3]
        return cls(zone or None, host or None, node or None)
