"""A multi-threaded WSGI server for the REST API.

``wsgiref`` serves one request a thread (``ThreadingMixIn``, daemon
threads); ``stop()`` stops accepting, closes the socket and returns once
the serving loop has ended. Requests still running finish on their own
threads. Port 0 picks a free port (``server.port`` tells which).

Example::

    server = APIServer(app, '127.0.0.1', 0).start()
    urllib.request.urlopen(server.url + '/v2.1')
    server.stop()
"""

import socket
import socketserver
import threading
from wsgiref import simple_server

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class _ThreadingWSGIServer(socketserver.ThreadingMixIn,
                           simple_server.WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    # Do not join request threads on close: a stuck client must not hang
    # the shutdown of the service.
    block_on_close = False


class _RequestHandler(simple_server.WSGIRequestHandler):
    # Seconds a client may stay silent before its connection is dropped,
    # so a stalled client never holds a thread for ever.
    timeout = 60

    def log_message(self, format, *args):
        # The application logs every request with its request id; this is
        # only the transport's own line, kept at debug level.
        LOG.debug('%s - %s', self.address_string(), format % args)

    def get_stderr(self):
        return _LogWriter()


class _LogWriter:
    """wsgiref writes tracebacks of broken responses here."""

    def write(self, text):
        if text.strip():
            LOG.error('WSGI server: %s', text.rstrip())

    def flush(self):
        pass


def _serving_on(app, sock: socket.socket) -> _ThreadingWSGIServer:
    """A WSGI server accepting on ``sock``, bound and listening already.

    Non-blocking, because the other workers accept on it too: the one that
    loses the race for a connection goes back to waiting instead of
    blocking in ``accept()`` where ``stop()`` cannot reach it.
    """
    server = _ThreadingWSGIServer(sock.getsockname()[:2], _RequestHandler,
                                  bind_and_activate=False)
    server.socket.close()
    server.socket = sock
    sock.setblocking(False)
    # What HTTPServer.server_bind and WSGIServer.server_bind set after
    # binding.
    server.server_address = sock.getsockname()
    host, port = server.server_address[:2]
    server.server_name = socket.getfqdn(host)
    server.server_port = port
    server.setup_environ()
    server.set_app(app)
    return server


class APIServer:
    """The API on ``host``:``port``, bound here, or on ``sock``: a TCP
    socket already bound and listening (another process's, inherited:
    ``nova.api.workers``)."""

    def __init__(self, app, host: str = '127.0.0.1', port: int = 0,
                 sock: socket.socket | None = None):
        if sock is None:
            self._server = simple_server.make_server(
                host, port, app, server_class=_ThreadingWSGIServer,
                handler_class=_RequestHandler)
        else:
            self._server = _serving_on(app, sock)
        self.host, self.port = self._server.server_address[:2]
        self._thread = None
        self._inherited = sock is not None

    @property
    def url(self) -> str:
        host = self.host if ':' not in self.host else '[%s]' % self.host
        return 'http://%s:%d' % (host, self.port)

    def start(self) -> 'APIServer':
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={'poll_interval': 0.5},
            name='nova-api-%d' % self.port, daemon=True)
        self._thread.start()
        if self._inherited:
            # The process that bound the socket said where it listens.
            LOG.info('REST API worker serving %s', self.url)
        else:
            LOG.info('REST API listening on %s', self.url)
        return self

    def stop(self) -> None:
        if self._thread is not None:
            stopper = threading.Thread(target=self._server.shutdown,
                                       daemon=True)
            stopper.start()
            self._wake()
            stopper.join()
            self._thread.join()
            self._thread = None
        self._server.server_close()
        LOG.info('REST API on %s stopped', self.url)

    def _wake(self) -> None:
        # The serving loop notices shutdown() only when its select()
        # returns; a connection makes it return now instead of after the
        # poll interval. The loop then ends without accepting it.
        try:
            with socket.create_connection((self.host, self.port),
                                          timeout=1):
                pass
        except OSError:
            pass

    def wait(self) -> None:
        """Block until ``stop()`` is called from another thread."""
        thread = self._thread
        while thread is not None and thread.is_alive():
            thread.join(1.0)
