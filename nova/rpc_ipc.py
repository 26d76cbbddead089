"""RPC from a child process into ``nova-all``'s ``inproc://`` bus, over a
Unix socket, with no broker.

``nova-all`` serves its REST API from processes of their own (``[DEFAULT]
osapi_compute_workers``), so that the API's work runs on another core than
the conductor's and the computes'. Those processes only send: the API
casts builds and actions and calls for answers, but serves no RPC topic.
So the bus stays where it was, in ``nova-all``'s ``inproc://`` driver,
and two small pieces carry the children's messages into it:

* ``Hub`` (in ``nova-all``) listens on a Unix socket, ``0600`` in
  ``state_path`` (or in a private directory of its own when that path is
  too long for a Unix socket), and puts each message it reads on the in-process
  exchange as a local send would; a call's reply (or the endpoint's
  exception, serialised as oslo.messaging's drivers serialise it) goes
  back on the connection it came from.
* ``IPCDriver``, the oslo.messaging driver ``ipc://<socket path>``
  (``setup.cfg``), is what a child's transport is: ``send`` writes the
  message and, for a call, waits for its reply with the call's timeout.
  ``listen`` is refused: nothing serves a topic over this socket.

On the wire each frame is a 4-byte big-endian length and a JSON object.
A child sends ``{"id", "target": {exchange, topic, server, fanout},
"ctxt", "message", "reply"}``; the hub answers a call with ``{"id",
"result"}`` or ``{"id", "failure"}``.

NOTE: a call in flight when the connection drops fails with
``MessageDeliveryFailure``: it may or may not have run, as a call whose
broker went away. The next send connects again.

Example::

    hub = Hub(inproc_driver, '/var/lib/nova/rpc.sock').start()
    # in the child: transport_url = ipc:///var/lib/nova/rpc.sock
    hub.stop()
"""

import itertools
import os
import queue
import socket
import stat
import struct
import tempfile
import threading

from oslo_log import log as logging
import oslo_messaging
from oslo_messaging._drivers import base
from oslo_messaging._drivers import common as driver_common
from oslo_serialization import jsonutils

LOG = logging.getLogger(__name__)

_LENGTH = struct.Struct('!I')
# A frame larger than this is a bug or garbage, not a message.
MAX_FRAME = 64 * 1024 * 1024
# How long a send waits to connect to a hub that is not there yet.
CONNECT_TIMEOUT = 10.0
# Longest path a Unix socket is bound to here (the kernel's limit is 107
# bytes).
MAX_PATH = 100


class ConnectionLost(Exception):
    """The other end closed the socket."""


def write_frame(sock, lock, obj) -> None:
    data = jsonutils.dump_as_bytes(obj)
    with lock:
        sock.sendall(_LENGTH.pack(len(data)) + data)


def _read_exactly(sock, size) -> bytes:
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise ConnectionLost()
        chunks.append(chunk)
        size -= len(chunk)
    return b''.join(chunks)


def read_frame(sock):
    (size,) = _LENGTH.unpack(_read_exactly(sock, _LENGTH.size))
    if size > MAX_FRAME:
        raise ConnectionLost()
    return jsonutils.loads(_read_exactly(sock, size))


def _target_of(fields) -> oslo_messaging.Target:
    return oslo_messaging.Target(
        exchange=fields.get('exchange'), topic=fields['topic'],
        server=fields.get('server'), fanout=bool(fields.get('fanout')))


class _Reply:
    """Where the in-process server puts a call's reply (it calls
    ``put((reply, exception))`` as on a local reply queue): straight back
    onto the child's connection."""

    def __init__(self, connection, message_id):
        self._connection = connection
        self._id = message_id

    def put(self, item):
        reply, failure = item
        if failure is None:
            try:
                self._connection.write({'id': self._id, 'result': reply})
                return
            except (TypeError, ValueError) as e:
                # A reply JSON cannot carry fails the call, as it would
                # over a broker, rather than leaving it to time out.
                failure = e
        self._connection.write(
            {'id': self._id,
             'failure': driver_common.serialize_remote_exception(
                 (type(failure), failure, failure.__traceback__))})


class _HubConnection:
    def __init__(self, hub, sock):
        self.hub = hub
        self.sock = sock
        self._write_lock = threading.Lock()

    def write(self, frame) -> None:
        try:
            write_frame(self.sock, self._write_lock, frame)
        except OSError as e:
            # The child went away; it fails its own call.
            LOG.debug('RPC hub: reply not delivered: %s', e)

    def serve(self) -> None:
        try:
            while True:
                frame = read_frame(self.sock)
                reply = (_Reply(self, frame['id']) if frame.get('reply')
                         else None)
                self.hub.driver.deliver(_target_of(frame['target']),
                                        frame['ctxt'], frame['message'],
                                        reply)
        except (ConnectionLost, OSError):
            pass
        except Exception:
            LOG.exception('RPC hub: dropping a connection that sent a '
                          'malformed frame')
        finally:
            self.hub.forget(self)
            self.sock.close()


class Hub:
    """The ``inproc://`` bus of this process, served on a Unix socket."""

    def __init__(self, driver, path):
        self.driver = driver
        self.path = path
        self._private_dir = None
        self._listener = None
        self._thread = None
        self._lock = threading.Lock()
        self._connections = set()

    @property
    def url(self) -> str:
        return 'ipc://' + self.path

    def start(self) -> 'Hub':
        if len(os.fsencode(self.path)) > MAX_PATH:
            # Too long for a Unix socket: a private directory of its own
            # (0700), removed at stop.
            self._private_dir = tempfile.mkdtemp(prefix='nova-rpc-')
            self.path = os.path.join(self._private_dir, 'rpc.sock')
        self._remove_socket()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # Only this user may connect: whoever can send here can do what
        # the services can.
        old_umask = os.umask(0o177)
        try:
            listener.bind(self.path)
        finally:
            os.umask(old_umask)
        listener.listen(64)
        self._listener = listener
        self._thread = threading.Thread(target=self._accept,
                                        name='nova-rpc-hub', daemon=True)
        self._thread.start()
        LOG.info('RPC hub listening on %s', self.path)
        return self

    def _remove_socket(self) -> None:
        """Remove the socket at ``path``: a stale one a killed
        ``nova-all`` left, or this hub's at stop. Anything else there is
        not ours to remove."""
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(mode):
            raise FileExistsError('%s exists and is not a socket'
                                  % self.path)
        os.unlink(self.path)

    def _accept(self) -> None:
        while True:
            try:
                sock, _address = self._listener.accept()
            except OSError:
                return      # stop() closed the listener
            connection = _HubConnection(self, sock)
            with self._lock:
                self._connections.add(connection)
            threading.Thread(target=connection.serve, daemon=True,
                             name='nova-rpc-hub-connection').start()

    def forget(self, connection) -> None:
        with self._lock:
            self._connections.discard(connection)

    def stop(self) -> None:
        if self._listener is None:
            return
        # shutdown() wakes the accept() the thread is blocked in.
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        self._thread.join()
        self._listener = None
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        try:
            self._remove_socket()
        except FileExistsError as e:
            LOG.warning('RPC hub: %s; left as it is', e)
        if self._private_dir is not None:
            os.rmdir(self._private_dir)
            self._private_dir = None
        LOG.info('RPC hub on %s stopped', self.path)


class _Link:
    """One connection to the hub, and the calls waiting on it."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(CONNECT_TIMEOUT)
        self.sock.connect(path)
        self.sock.settimeout(None)
        self.write_lock = threading.Lock()
        self.lock = threading.Lock()
        self.waiting = {}
        self.lost = False
        threading.Thread(target=self._read, daemon=True,
                         name='nova-rpc-ipc-reader').start()

    def _read(self) -> None:
        try:
            while True:
                frame = read_frame(self.sock)
                with self.lock:
                    waiter = self.waiting.pop(frame['id'], None)
                if waiter is not None:
                    waiter.put(frame)
        except (ConnectionLost, OSError, ValueError):
            pass
        with self.lock:
            self.lost = True
            waiters, self.waiting = list(self.waiting.values()), {}
        for waiter in waiters:
            waiter.put(None)
        self.sock.close()

    def close(self) -> None:
        """Unusable from now on: the next send connects again (the
        reader fails the calls still waiting)."""
        with self.lock:
            self.lost = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class IPCDriver(base.BaseDriver):
    """oslo.messaging driver ``ipc://<path>`` (see the module docstring):
    sends into the ``inproc://`` bus of the ``nova-all`` serving
    ``<path>``."""

    def __init__(self, conf, url, default_exchange=None,
                 allowed_remote_exmods=None):
        super().__init__(conf, url, default_exchange, allowed_remote_exmods)
        self._path = '/' + (url.virtual_host or '').lstrip('/')
        self._lock = threading.Lock()
        self._link = None
        self._ids = itertools.count(1)

    def require_features(self, requeue=True):
        pass

    def _connected(self) -> _Link:
        with self._lock:
            if self._link is None or self._link.lost:
                try:
                    self._link = _Link(self._path)
                except OSError as e:
                    raise oslo_messaging.MessageDeliveryFailure(
                        'cannot reach the RPC hub at %s: %s'
                        % (self._path, e))
            return self._link

    def send(self, target, ctxt, message, wait_for_reply=None, timeout=None,
             call_monitor_timeout=None, retry=None, transport_options=None):
        link = self._connected()
        message_id = next(self._ids)
        waiter = None
        if wait_for_reply:
            waiter = queue.Queue()
            with link.lock:
                if link.lost:
                    raise oslo_messaging.MessageDeliveryFailure(
                        'RPC hub at %s went away' % self._path)
                link.waiting[message_id] = waiter
        frame = {'id': message_id, 'ctxt': ctxt, 'message': message,
                 'reply': bool(wait_for_reply),
                 'target': {'exchange': target.exchange or
                            self._default_exchange,
                            'topic': target.topic, 'server': target.server,
                            'fanout': target.fanout}}
        try:
            write_frame(link.sock, link.write_lock, frame)
        except OSError as e:
            link.close()
            raise oslo_messaging.MessageDeliveryFailure(
                'RPC hub at %s: %s' % (self._path, e))
        if waiter is None:
            return None
        try:
            answer = waiter.get(timeout=timeout)
        except queue.Empty:
            with link.lock:
                link.waiting.pop(message_id, None)
            raise oslo_messaging.MessagingTimeout(
                'No reply on topic %s' % target.topic)
        if answer is None:
            raise oslo_messaging.MessageDeliveryFailure(
                'RPC hub at %s went away before replying on topic %s'
                % (self._path, target.topic))
        if 'failure' in answer:
            raise driver_common.deserialize_remote_exception(
                answer['failure'], self._allowed_remote_exmods)
        return answer['result']

    def send_notification(self, target, ctxt, message, version, retry=None):
        self.send(target, ctxt, message)

    # A service that serves topics (nova-compute, nova-conductor) given an
    # ipc:// transport_url was configured wrong: it has no bus of its own
    # to serve them on, so it is refused at start as a bad URL.
    def listen(self, target, batch_size, batch_timeout):
        raise oslo_messaging.InvalidTransportURL(
            self._url, 'ipc:// only sends: serve RPC topics in the '
            'nova-all process')

    def listen_for_notifications(self, targets_and_priorities, pool,
                                 batch_size, batch_timeout):
        raise oslo_messaging.InvalidTransportURL(
            self._url, 'ipc:// only sends: serve notifications in the '
            'nova-all process')

    def cleanup(self):
        with self._lock:
            if self._link is not None:
                self._link.close()
                self._link = None
