"""An in-process oslo.messaging transport that wakes its servers at once.

``nova-all`` runs every service in one process, and so do the functional
tests. oslo.messaging's ``fake://`` driver serves that case, but its
listeners poll their queues every 50 ms, so every call or cast waits on
average 25 ms before a server even sees it, and a call waits for that
twice over (request, then the next message). This driver, ``inproc://``,
keeps what ``fake://`` does (messages stay in memory, each is checked to
serialise as JSON as every real driver would send it, calls wait for a
reply with their timeout, casts return at once, servers dispatch on
oslo.messaging's own thread pool) and wakes a waiting listener with a
condition variable the moment a message is queued for it.

Registered as the oslo.messaging driver ``inproc`` (``setup.cfg``), so it
is chosen by URL like any other::

    transport_url = inproc://

Clients and servers must share the process (and the one transport of
``nova.rpc``); across processes, use ``rabbit://``.
"""

import collections
import queue
import threading
import time

import oslo_messaging
from oslo_messaging._drivers import base
from oslo_serialization import jsonutils

# How long a listener with no deadline sleeps before it looks at its
# stop flag again (stop() wakes it anyway; this is only a backstop).
_IDLE_WAKE = 1.0


class _Exchange:
    """The queues of one exchange: a queue per (topic, server) for
    messages to one server, and per (topic, None) for messages any server
    of the topic may take. One condition guards them all and wakes every
    listener when a message arrives."""

    def __init__(self):
        self.cond = threading.Condition()
        self._queues = collections.defaultdict(collections.deque)

    def deliver(self, target, item) -> None:
        with self.cond:
            if target.fanout:
                keys = [key for key in self._queues
                        if key[0] == target.topic and key[1] is not None]
            else:
                keys = [(target.topic, target.server)]
            for key in keys:
                self._queues[key].append(item)
            self.cond.notify_all()

    def declare(self, keys) -> None:
        """Make the queues exist, so a fanout reaches a server that has
        not polled yet."""
        with self.cond:
            for key in keys:
                self._queues[key]

    def take(self, keys, deadline, stopped):
        """The first message of the first non-empty queue of ``keys``;
        waits until one arrives, ``deadline`` (``time.monotonic()``)
        passes or ``stopped`` is set (then None)."""
        with self.cond:
            while True:
                for key in keys:
                    waiting = self._queues.get(key)
                    if waiting:
                        return waiting.popleft()
                if stopped.is_set():
                    return None
                wait = _IDLE_WAKE
                if deadline is not None:
                    wait = deadline - time.monotonic()
                    if wait <= 0:
                        return None
                self.cond.wait(min(wait, _IDLE_WAKE))


class _IncomingMessage(base.RpcIncomingMessage):
    def __init__(self, ctxt, message, reply_q):
        super().__init__(ctxt, message)
        self._reply_q = reply_q

    def reply(self, reply=None, failure=None):
        if self._reply_q is not None:
            # ``failure`` is an exc_info tuple; the caller raises the
            # exception itself, as with oslo.messaging's fake driver.
            self._reply_q.put((reply, failure[1] if failure else None))

    def requeue(self):
        pass

    def heartbeat(self):
        pass


class _Listener(base.PollStyleListener):
    def __init__(self, exchange, keys):
        super().__init__()
        self._exchange = exchange
        self._keys = keys
        self._stopped = threading.Event()
        exchange.declare(keys)

    @base.batch_poll_helper
    def poll(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        item = self._exchange.take(self._keys, deadline, self._stopped)
        if item is None:
            return None
        return _IncomingMessage(*item)

    def stop(self):
        self._stopped.set()
        with self._exchange.cond:
            self._exchange.cond.notify_all()


class InProcessDriver(base.BaseDriver):
    """oslo.messaging driver ``inproc://`` (see the module docstring)."""

    def __init__(self, conf, url, default_exchange=None,
                 allowed_remote_exmods=None):
        super().__init__(conf, url, default_exchange, allowed_remote_exmods)
        self._lock = threading.Lock()
        self._exchanges = {}

    def _exchange(self, name) -> _Exchange:
        with self._lock:
            return self._exchanges.setdefault(
                name or self._default_exchange, _Exchange())

    def require_features(self, requeue=True):
        pass

    def send(self, target, ctxt, message, wait_for_reply=None, timeout=None,
             call_monitor_timeout=None, retry=None, transport_options=None):
        # NOTE: every real driver sends the message as JSON; one that
        # cannot be is a bug that must show here too, not only on
        # RabbitMQ.
        jsonutils.dumps(message)
        reply_q = queue.Queue() if wait_for_reply else None
        self.deliver(target, ctxt, message, reply_q)
        if reply_q is None:
            return None
        try:
            reply, failure = reply_q.get(timeout=timeout)
        except queue.Empty:
            raise oslo_messaging.MessagingTimeout(
                'No reply on topic %s' % target.topic)
        if failure:
            raise failure
        return reply

    def deliver(self, target, ctxt, message, reply_q=None) -> None:
        """Queue a message for the servers of ``target``; its reply, for
        a call, is ``reply_q.put((reply, exception or None))``. Also the
        entry of messages from other processes (``nova.rpc_ipc.Hub``)."""
        self._exchange(target.exchange).deliver(
            target, (ctxt, message, reply_q))

    def send_notification(self, target, ctxt, message, version, retry=None):
        # The project sends no notifications; delivered like a cast.
        self.send(target, ctxt, message)

    def listen(self, target, batch_size, batch_timeout):
        # Its own server's queue first, then the topic's shared one.
        listener = _Listener(self._exchange(target.exchange),
                             [(target.topic, target.server),
                              (target.topic, None)])
        return base.PollStyleListenerAdapter(listener, batch_size,
                                             batch_timeout)

    def listen_for_notifications(self, targets_and_priorities, pool,
                                 batch_size, batch_timeout):
        # Not used by the project; served like RPC topics (one queue per
        # "<topic>.<priority>"), and only within one exchange.
        exchanges = {target.exchange for target, _ in targets_and_priorities}
        if len(exchanges) > 1:
            raise oslo_messaging.InvalidTarget(
                'inproc:// listens for notifications of one exchange',
                targets_and_priorities)
        keys = [('%s.%s' % (target.topic, priority), None)
                for target, priority in targets_and_priorities]
        listener = _Listener(self._exchange(exchanges.pop()), keys)
        return base.PollStyleListenerAdapter(listener, batch_size,
                                             batch_timeout)

    def cleanup(self):
        with self._lock:
            self._exchanges.clear()
