"""nova.testing.cluster.forward: loopback services seen from a network
namespace (root only: it needs a real namespace)."""

import os
import shutil
import socket
import threading

from nova.testing.cluster import forward as cluster_forward
from nova.testing.cluster import net as cluster_net
from nova.tests import base


def _serve_upper(server):
    """Answer every connection to ``server`` with what it sent,
    upper-cased, in a thread; ``server``."""
    server.listen(4)

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                while True:
                    data = conn.recv(4096)
                    if not data:
                        break
                    conn.sendall(data.upper())
    threading.Thread(target=serve, daemon=True).start()
    return server


def _echo_server():
    server = socket.socket()
    server.bind(('127.0.0.1', 0))
    return _serve_upper(server)


def _exchange(sock, payload):
    """Send ``payload``, then everything the other end answers."""
    with sock:
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        received = b''
        while True:
            data = sock.recv(4096)
            if not data:
                return received
            received += data


def _talk(port, payload):
    return _exchange(socket.create_connection(('127.0.0.1', port),
                                              timeout=5), payload)


class TestLoopbackForwarder(base.TestCase):

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0 or shutil.which('ip') is None:
            self.skipTest('network namespaces need root and iproute2')
        self.ns = cluster_net.NetworkNamespace('nvctest%d-fwd' % os.getpid())
        self.addCleanup(self.ns.delete)
        self.ns.create()
        self.server = _echo_server()
        self.addCleanup(self.server.close)
        self.port = self.server.getsockname()[1]
        self.forwarder = cluster_forward.LoopbackForwarder()
        self.addCleanup(self.forwarder.stop)

    def test_relays_and_stops(self):
        # Without forwarding, the namespace's loopback has nothing there.
        self.assertRaises(ConnectionRefusedError, cluster_net.run_in_netns,
                          self.ns.path, _talk, self.port, b'x')
        self.forwarder.add(self.ns.path, self.port)
        self.assertEqual([self.port], self.forwarder.ports(self.ns.path))
        payload = b'network-vif-plugged ' * 5000
        self.assertEqual(payload.upper(), cluster_net.run_in_netns(
            self.ns.path, _talk, self.port, payload))
        self.forwarder.remove(self.ns.path, self.port)
        self.assertEqual([], self.forwarder.ports(self.ns.path))
        self.assertRaises(ConnectionRefusedError, cluster_net.run_in_netns,
                          self.ns.path, _talk, self.port, b'x')


def _unix_echo_server(path):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    return _serve_upper(server)


def _unix_connect(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(5)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return sock


class TestUnixRelay(base.TestCase):

    def setUp(self):
        super().setUp()
        self.target = os.path.join(self.tmp, 'libvirt-sock')
        self.path = os.path.join(self.tmp, 'mgmt', 'compute1-libvirt.sock')
        self.relay = cluster_forward.UnixRelay(self.path, self.target)
        self.addCleanup(self.relay.stop)

    def test_relays_until_cut_and_again_once_restored(self):
        server = _unix_echo_server(self.target)
        self.addCleanup(server.close)
        self.relay.start()
        self.assertTrue(self.relay.running)
        self.assertEqual(b'LIST', _exchange(_unix_connect(self.path),
                                            b'list'))
        held = _unix_connect(self.path)
        self.addCleanup(held.close)
        held.sendall(b'open')
        self.assertEqual(b'OPEN', held.recv(4096))
        self.relay.stop()
        # Cut: the connection in progress ends, nothing listens any more.
        self.assertEqual(b'', held.recv(4096))
        self.assertFalse(os.path.exists(self.path))
        self.assertRaises(FileNotFoundError, _unix_connect, self.path)
        self.relay.start()
        self.assertEqual(b'AGAIN', _exchange(_unix_connect(self.path),
                                             b'again'))

    def test_a_target_that_is_gone_closes_the_connection(self):
        self.relay.start()
        with _unix_connect(self.path) as sock:
            # Closed at once (a libvirt client's open fails).
            self.assertEqual(b'', sock.recv(4096))
