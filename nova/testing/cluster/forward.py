"""Controller services on loopback, reachable from each host's namespace.

RabbitMQ and nova-api listen on ``127.0.0.1`` of the machine's own network
namespace (the "controller"). A compute host lives in its own network
namespace, whose loopback is its own, so it would not reach them. A
``LoopbackForwarder`` listens on ``127.0.0.1:<port>`` inside a host's
namespace and relays every connection to ``127.0.0.1:<port>`` outside, so
a host's nova.conf names the controller exactly as a controller process's
does. In a real deployment this is the management network and the
controller's address.

Each listening socket is created by a thread that entered the host's
namespace (a socket stays in the namespace it was made in); accepting and
relaying happen in ordinary threads, and the connection to the service is
made in the machine's namespace. Two threads relay each connection (one a
direction); the few dozen connections of a test cluster cost nothing.

The other way, a ``UnixRelay`` lets the controller reach a host's
libvirtd socket (the monitor's probe) until the harness cuts it: a
partition takes the host off the management network, not only its
nova-compute.

Example::

    forwarder = LoopbackForwarder()
    forwarder.add('/run/netns/nvc1a2b3c-compute1', 5672)
    ...
    forwarder.stop()

    relay = UnixRelay(DIR + '/mgmt/compute1-libvirt.sock',
                      host.hypervisor.socket)
    relay.start()
    relay.stop()       # cut: connections in progress end too
"""

import os
import socket
import threading

from oslo_log import log as logging

from nova.testing.cluster import net as cluster_net

LOG = logging.getLogger(__name__)

LOOPBACK = '127.0.0.1'
_CHUNK = 65536
_ACCEPT_POLL = 0.5


class _Listener:
    """One listening socket; ``connect()`` opens the other end of each
    connection it accepts."""

    def __init__(self, sock, connect, what, netns_path=None, port=None):
        self.netns_path = netns_path
        self.port = port
        self.sock = sock
        self.connect = connect
        self.what = what
        self.stopping = threading.Event()
        self.connections = set()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=_accept_loop, args=(self,),
                                       daemon=True, name='forward-' + what)

    def close(self):
        """Stop accepting and cut the connections in progress."""
        self.stopping.set()
        try:
            # Wakes the accept() in progress at once.
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        with self.lock:
            connections = list(self.connections)
        for sock in connections:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def join(self):
        self.thread.join(_ACCEPT_POLL * 4)


def _accept_loop(listener):
    while not listener.stopping.is_set():
        try:
            client, _addr = listener.sock.accept()
        except socket.timeout:
            continue
        except OSError:
            break
        client.settimeout(None)
        try:
            upstream = listener.connect()
            upstream.settimeout(None)
        except OSError as e:
            LOG.warning('Forwarder: %s unreachable: %s', listener.what, e)
            client.close()
            continue
        threading.Thread(target=_relay, args=(listener, client, upstream),
                         daemon=True).start()
    listener.sock.close()


def _relay(listener, client, upstream):
    with listener.lock:
        listener.connections.update((client, upstream))
    back = threading.Thread(target=_pump, args=(upstream, client),
                            daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    with listener.lock:
        listener.connections.difference_update((client, upstream))
    client.close()
    upstream.close()


def _listen(port):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((LOOPBACK, port))
    sock.listen(64)
    sock.settimeout(_ACCEPT_POLL)
    return sock


def _pump(source, dest):
    """Copy source to dest until EOF, then half-close dest."""
    try:
        while True:
            data = source.recv(_CHUNK)
            if not data:
                break
            dest.sendall(data)
    except OSError:
        pass
    try:
        dest.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class LoopbackForwarder:
    """Relays ``127.0.0.1:port`` in namespaces to ``127.0.0.1:port`` here."""

    def __init__(self):
        self._listeners = []
        self._lock = threading.Lock()

    def add(self, netns_path, port):
        sock = cluster_net.run_in_netns(netns_path, _listen, port)
        listener = _Listener(
            sock, lambda: socket.create_connection((LOOPBACK, port),
                                                   timeout=5),
            '%s:%d' % (LOOPBACK, port), netns_path=netns_path, port=port)
        with self._lock:
            self._listeners.append(listener)
        listener.thread.start()
        LOG.debug('Forwarding %s:%d in %s', LOOPBACK, port, netns_path)

    def ports(self, netns_path):
        with self._lock:
            return sorted(li.port for li in self._listeners
                          if li.netns_path == netns_path)

    def remove(self, netns_path=None, port=None):
        """Stop forwarding into ``netns_path`` (every namespace if None),
        only ``port`` if given, closing the connections in progress."""
        with self._lock:
            chosen = [li for li in self._listeners
                      if netns_path in (None, li.netns_path)
                      and port in (None, li.port)]
            self._listeners = [li for li in self._listeners
                               if li not in chosen]
        for listener in chosen:
            listener.close()
        for listener in chosen:
            listener.join()

    def stop(self):
        self.remove(None)


class UnixRelay:
    """The Unix socket ``path`` relayed to the Unix socket ``target``,
    while started: a way to a host's daemon that the harness can cut (as
    a partition cuts the network) and restore, whatever the daemon
    does."""

    def __init__(self, path, target):
        self.path = path
        self.target = target
        self._listener = None

    def start(self):
        if self._listener is not None:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        if os.path.exists(self.path):
            os.unlink(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(self.path)
        sock.listen(16)
        sock.settimeout(_ACCEPT_POLL)
        self._listener = _Listener(sock, self._connect, self.target)
        self._listener.thread.start()

    def _connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(5)
        try:
            sock.connect(self.target)
        except OSError:
            sock.close()
            raise
        return sock

    def stop(self):
        """Cut: nothing listens at ``path`` and every connection through
        it is closed."""
        listener, self._listener = self._listener, None
        if listener is None:
            return
        listener.close()
        listener.join()
        if os.path.exists(self.path):
            os.unlink(self.path)

    @property
    def running(self):
        return self._listener is not None
