"""nova-api: the REST API (Compute API v2.1 subset) as its own process.

    nova-api [--config-file F ...]

Listens on ``[api] listen``:``listen_port`` (with ``[DEFAULT]
osapi_compute_workers``, serves from that many processes of its own on
the socket it binds: ``nova.api.workers``), talks to the database
(``[database] connection``) and casts to computes and the conductor over
``transport_url``. Stops on SIGTERM or SIGINT.
"""

import sys

from nova.api import wsgi as api_wsgi
from nova.compute import api as compute_api_mod
from nova.compute import rpcapi as compute_rpcapi
from nova.conductor import rpcapi as conductor_rpcapi
from nova import conf as nova_conf
from nova.conf import CONF
from nova.model import binaries
from nova.network import api as network_api_mod
from nova import rpc
from nova import service

BINARY = binaries.API


class APIServerService:
    """The REST API server as a start/stop service for ``service.run``."""

    def __init__(self, compute_api, host=None, port=None):
        self.compute_api = compute_api
        self.host = host
        self.port = port
        self.server = None

    def __repr__(self):
        return '<APIServerService %s>' % (
            self.server.url if self.server else 'stopped')

    def start(self):
        app = api_wsgi.make_app(self.compute_api)
        self.server = api_wsgi.serve(app, self.host, self.port)

    def stop(self):
        if self.server is not None:
            self.server.stop()
            self.server = None


def build_compute_api():
    """The compute API this process serves: casts to the computes and the
    conductor, and the built-in network backend (ports and fixed
    addresses in the shared database), as ``nova-all`` has it."""
    return compute_api_mod.API(compute_rpcapi.ComputeAPI(),
                               conductor_rpcapi.ConductorAPI(),
                               network_api=network_api_mod.API())


def main(argv=None) -> int:
    # Only the processes that serve the API register [keystone_authtoken]
    # (it imports keystonemiddleware); registered before the files are
    # parsed, as every other option is. make_app checks its values.
    nova_conf.register_api_opts()
    service.prepare_service(BINARY, argv)
    try:
        workers = CONF.osapi_compute_workers
        if workers:
            # Processes of their own on the port this one binds; they use
            # the transport the files configure, as this process would.
            from nova.api import workers as workers_mod
            server = workers_mod.APIWorkers(
                CONF.api.listen, CONF.api.listen_port, workers,
                sys.argv[1:] if argv is None else argv)
        else:
            server = APIServerService(build_compute_api())
        service.run([server])
    finally:
        rpc.cleanup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
