"""nova-api: the REST API (Compute API v2.1 subset) as its own process.

    nova-api [--config-file F ...]

Listens on ``[api] listen``:``listen_port``, talks to the database
(``[database] connection``) and casts to computes and the conductor over
``transport_url``. Stops on SIGTERM or SIGINT.
"""

import signal
import sys
import threading

from oslo_log import log as logging

from nova.api import wsgi as api_wsgi
from nova.compute import api as compute_api_mod
from nova.compute import rpcapi as compute_rpcapi
from nova.conductor import rpcapi as conductor_rpcapi
from nova.conf import CONF
from nova import rpc

LOG = logging.getLogger(__name__)


def build_compute_api():
    return compute_api_mod.API(compute_rpcapi.ComputeAPI(),
                               conductor_rpcapi.ConductorAPI())


def run_until_signalled(server,
                        signals=(signal.SIGTERM, signal.SIGINT)) -> None:
    """Wait on the main thread until a stop signal, then stop ``server``."""
    stopping = threading.Event()

    def _on_signal(signum, _frame):
        LOG.info('Caught signal %s, stopping', signal.Signals(signum).name)
        stopping.set()

    previous = {sig: signal.signal(sig, _on_signal) for sig in signals}
    try:
        # A timed wait lets the signal handler run promptly.
        while not stopping.wait(1.0):
            pass
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def main(argv=None) -> int:
    rpc.register_transport_opts(CONF)
    logging.register_options(CONF)
    CONF(sys.argv[1:] if argv is None else argv, project='nova',
         prog='nova-api')
    logging.setup(CONF, 'nova')
    rpc.init(CONF)
    try:
        app = api_wsgi.make_app(build_compute_api())
        server = api_wsgi.serve(app)
        run_until_signalled(server)
    finally:
        rpc.cleanup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
