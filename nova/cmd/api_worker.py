"""One worker process of the REST API (``[DEFAULT] osapi_compute_workers``),
started by ``nova.api.workers.APIWorkers``, never by hand::

    python -m nova.cmd.api_worker --listen-fd N --parent-fd M -- \
        [--config-file F ...]

Serves the API, as ``nova-api`` does, on the listening socket it inherited
as file descriptor N. Stops on SIGTERM or SIGINT, and when descriptor M
(the read end of a pipe whose write end only the parent holds) reaches
end of file: the parent is gone, SIGKILL included, and a worker of no
service must not keep the port.
"""

import argparse
import os
import socket
import sys
import threading

from oslo_log import log as logging

from nova.api import server as server_mod
from nova.api import wsgi as api_wsgi
from nova.cmd import api as api_cmd
from nova import conf as nova_conf
from nova.model import binaries
from nova import rpc
from nova import service

LOG = logging.getLogger(__name__)


class _InheritedSocketServer:
    """The REST API on an inherited listening socket, as a service."""

    def __init__(self, compute_api, sock):
        self.compute_api = compute_api
        self.sock = sock
        self.server = None

    def __repr__(self):
        return '<API worker %d>' % os.getpid()

    def start(self):
        app = api_wsgi.make_app(self.compute_api)
        self.server = server_mod.APIServer(app, sock=self.sock).start()

    def stop(self):
        if self.server is not None:
            self.server.stop()
            self.server = None


def _watch_parent(fd, stop_event, sock) -> None:
    """Return once the parent is gone (``fd`` at end of file), having
    released the port and set ``stop_event``."""
    while True:
        try:
            if not os.read(fd, 4096):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    LOG.warning('API worker %d: the parent process is gone; stopping',
                os.getpid())
    # Stop listening now, for every orphaned worker at once (they share
    # the socket): a nova-all restarted after a SIGKILL can bind the port
    # without waiting for the workers' own stop.
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    stop_event.set()


def parse_args(argv):
    parser = argparse.ArgumentParser(prog='nova.cmd.api_worker')
    parser.add_argument('--listen-fd', type=int, required=True)
    parser.add_argument('--parent-fd', type=int, required=True)
    parser.add_argument('conf_args', nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    conf_args = args.conf_args
    if conf_args[:1] == ['--']:
        conf_args = conf_args[1:]
    return args.listen_fd, args.parent_fd, conf_args


def main(argv=None) -> int:
    listen_fd, parent_fd, conf_args = parse_args(
        sys.argv[1:] if argv is None else argv)
    nova_conf.register_api_opts()
    service.prepare_service(binaries.API, conf_args)
    stop_event = threading.Event()
    sock = socket.socket(fileno=listen_fd)
    threading.Thread(target=_watch_parent,
                     args=(parent_fd, stop_event, sock),
                     daemon=True, name='nova-api-worker-parent').start()
    try:
        service.run([_InheritedSocketServer(api_cmd.build_compute_api(),
                                            sock)],
                    stop_event=stop_event)
    finally:
        rpc.cleanup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
