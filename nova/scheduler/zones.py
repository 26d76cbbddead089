"""Which availability zone each compute host and service is in.

A compute host is in the zone of the aggregates it belongs to
(``availability_zone`` metadata; ``nova.compute.aggregates`` keeps that to
one zone a host), else in ``[DEFAULT] default_availability_zone``. Every
other service is in ``internal_service_availability_zone``, where servers
never run. Read here, below the compute layer, since placement and the
evacuation target choice (``target.py``) keep servers to their zone.

Example::

    zones = ZoneMap.read(ctx)
    zones.of_host('compute1')            # 'az1' or 'nova'
    zones.compute_hosts_in(ctx, 'az1')   # {'compute1'}
"""

import dataclasses

from nova.conf import CONF
from nova.model import binaries
from nova import objects
from nova.objects import aggregate as aggregate_obj


def default_zone() -> str:
    return CONF.default_availability_zone


def internal_zone() -> str:
    return CONF.internal_service_availability_zone


@dataclasses.dataclass(frozen=True)
class ZoneMap:
    """The zones of the hosts in aggregates with one, read once (a listing
    asks for many hosts)."""
    by_host: dict[str, list[str]]

    @classmethod
    def read(cls, context) -> 'ZoneMap':
        return cls(aggregate_obj.host_zones(context))

    def of_host(self, host: str | None) -> str:
        """The zone of compute host ``host``."""
        # NOTE: joined as the reference shows a host in several zones;
        # the aggregate workflow refuses to make one, but rows written
        # around it (two racing API processes) are shown, not hidden.
        return ','.join(self.by_host.get(host or '', [default_zone()]))

    def of_service(self, service) -> str:
        if service.binary != binaries.COMPUTE:
            return internal_zone()
        return self.of_host(service.host)

    def compute_hosts_in(self, context, zone: str) -> set[str]:
        return {service.host or '' for service in objects.Service.get_all(
            context, binary=binaries.COMPUTE)
            if self.of_host(service.host) == zone}
