"""One API worker's watch of its parent (``nova.cmd.api_worker``), on a
real pipe and a real listening socket."""

import os
import socket
import threading

from nova.api import workers
from nova.cmd import api_worker
from nova.tests import base


class WatchParentTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.read_end, self.write_end = os.pipe()
        self.addCleanup(os.close, self.read_end)
        self.sock = workers.listening_socket('127.0.0.1', 0)
        self.addCleanup(self.sock.close)
        self.port = self.sock.getsockname()[1]
        self.stop_event = threading.Event()
        self.watcher = threading.Thread(
            target=api_worker._watch_parent,
            args=(self.read_end, self.stop_event, self.sock), daemon=True)
        self.watcher.start()

    def test_parent_gone_releases_the_port_and_stops(self):
        # The worker still holds its descriptor of the socket, as an
        # orphan does until its stop ends: the port is free all the same.
        os.close(self.write_end)
        self.watcher.join(10)
        self.assertFalse(self.watcher.is_alive())
        self.assertTrue(self.stop_event.is_set())
        self.assertNotEqual(-1, self.sock.fileno())
        again = workers.listening_socket('127.0.0.1', self.port)
        again.close()

    def test_parent_alive_keeps_the_port(self):
        # Nothing was written and nothing closed: the worker keeps
        # serving, and the port stays taken.
        os.write(self.write_end, b'x')
        self.assertRaises(OSError, workers.listening_socket,
                          '127.0.0.1', self.port)
        with socket.create_connection(('127.0.0.1', self.port), timeout=5):
            pass
        self.assertFalse(self.stop_event.is_set())
        os.close(self.write_end)
        self.watcher.join(10)
        self.assertTrue(self.stop_event.is_set())
