"""nova-conductor: evacuation target choice and host-evacuate.

    nova-conductor [--config-file F ...]

Serves topic ``conductor`` as ``[DEFAULT] host``; any number may run. Stops
on SIGTERM or SIGINT.
"""

import sys

from nova.compute import rpcapi as compute_rpcapi
from nova.conductor import manager as conductor_manager
from nova.conf import CONF
from nova.model import binaries
from nova import rpc
from nova import service

BINARY = binaries.CONDUCTOR
TOPIC = 'conductor'


def build_conductor_service(host, capacity_provider=None, **service_kwargs):
    """The conductor ``Service``.

    Target capacity comes from the ``compute_nodes`` rows each compute host
    records, unless ``capacity_provider(context, host)`` is given (tests).
    """
    manager = conductor_manager.ConductorManager(
        compute_rpcapi.ComputeAPI(), capacity_provider=capacity_provider)
    return service.Service(host, BINARY, TOPIC, manager, **service_kwargs)


def main(argv=None):
    service.prepare_service(BINARY, argv)
    try:
        service.run([build_conductor_service(CONF.host)])
    finally:
        rpc.cleanup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
