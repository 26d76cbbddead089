"""nova-compute: the compute service of one host.

    nova-compute [--config-file F ...]

Serves ``[DEFAULT] host`` with the ``compute_driver`` on that host's
settings (``HostSettings.from_conf``), runs the host's network agent, and
heartbeats its service record. RPC over ``transport_url`` (RabbitMQ across
processes). The database schema must exist (``nova-manage db sync``).
Stops on SIGTERM or SIGINT.

With the hypervisor down (libvirtd not running) it neither exits nor
spins: it tries again after 1, 2, 4 ... 30 s, logging one line each time,
does not heartbeat (the service reads as down) and serves no RPC until
libvirt answers; a running service whose libvirtd goes away stops
heartbeating until it is back (``nova.service``).
"""

import sys

from nova.compute import manager as compute_manager
from nova.compute import rpcapi as compute_rpcapi
from nova.conductor import rpcapi as conductor_rpcapi
from nova.conf import CONF
from nova.conf import host_settings
from nova.model import binaries
from nova.network import agent as network_agent
from nova.network import events as network_events
from nova import rpc
from nova import service

BINARY = binaries.COMPUTE
TOPIC = 'compute'


def build_compute_service(settings, compute_driver=None, sender=None,
                          driver=None, **service_kwargs):
    """The ``Service`` of one compute host, with its network agent.

    ``sender`` delivers the agent's events (default:
    ``network.events.build_sender``: REST when ``[network]
    events_api_url`` is set, else RPC to this host).
    """
    compute_driver = compute_driver or CONF.compute_driver
    manager = compute_manager.ComputeManager(
        settings, driver=driver,
        conductor_api=conductor_rpcapi.ConductorAPI())
    if sender is None:
        sender = network_events.build_sender(
            CONF, settings.host, compute_rpcapi=compute_rpcapi.ComputeAPI())
    agent = network_agent.NetworkAgent(settings, manager.driver, sender,
                                       compute_driver=compute_driver)
    return service.Service(settings.host, BINARY, TOPIC, manager,
                           companions=[agent], **service_kwargs)


def main(argv=None):
    service.prepare_service(BINARY, argv)
    try:
        settings = host_settings.HostSettings.from_conf(CONF)
        service.run([build_compute_service(settings)])
    finally:
        rpc.cleanup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
