"""nova.testing.cluster.forward: loopback services seen from a network
namespace (root only: it needs a real namespace)."""

import os
import shutil
import socket
import threading

from nova.testing.cluster import forward as cluster_forward
from nova.testing.cluster import net as cluster_net
from nova.tests import base


def _echo_server():
    server = socket.socket()
    server.bind(('127.0.0.1', 0))
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


def _talk(port, payload):
    with socket.create_connection(('127.0.0.1', port), timeout=5) as sock:
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        received = b''
        while True:
            data = sock.recv(4096)
            if not data:
                return received
            received += data


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
