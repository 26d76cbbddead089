"""The kernel's link events, so the network agent looks when a tap comes or
goes instead of waiting for its next poll.

A ``LinkWatcher`` listens on a netlink route socket bound to the link
multicast group, in the network namespace it starts in (its messages
parsed by pyroute2), and calls ``on_change()`` for every ``RTM_NEWLINK``
or ``RTM_DELLINK`` of a device whose name starts with ``prefix`` (``tap``:
the VIFs this project plugs, ``nova/virt/libvirt/vif.py``). A tap made by
the VIF driver shows as several events (created, alias set, attached to
its bridge, up); the agent coalesces them into a look or two.

The watcher only wakes the agent: what is plugged is still read from the
driver, and the agent's polling stays as the fallback and as the periodic
resync (an event lost while the socket's buffer was full, a netlink socket
that cannot be opened: the watcher then says so in the log and the agent
polls as before).

Example::

    watcher = LinkWatcher(agent.wake)
    if watcher.start():
        ...
    watcher.stop()
"""

import select
import socket
import struct
import threading

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

# How often the watching thread looks at its stop flag while no event
# arrives.
_STOP_CHECK = 0.5
_HEADER = struct.Struct('=IH')      # nlmsghdr: length, type (then more)
_RECV_SIZE = 1 << 16


def _open_socket():
    """A netlink route socket of this network namespace, subscribed to
    link events.

    NOTE: the socket is this module's own, and pyroute2 parses what it
    reads: pyroute2's ``IPRoute.get()`` keeps messages it has read from
    the kernel in a queue of its own, where ``select()`` on the socket
    cannot see them, so events that arrive together could wait unseen.
    """
    from pyroute2.netlink import rtnl
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                         socket.NETLINK_ROUTE)
    try:
        sock.bind((0, rtnl.RTMGRP_LINK))
    except OSError:
        sock.close()
        raise
    return sock


def link_names(data: bytes):
    """The device names of the link messages (new or deleted) in one read
    of a netlink route socket."""
    from pyroute2.netlink import rtnl
    from pyroute2.netlink.rtnl import ifinfmsg
    offset = 0
    while offset + _HEADER.size <= len(data):
        length, kind = _HEADER.unpack_from(data, offset)
        if length < _HEADER.size:
            return
        if kind in (rtnl.RTM_NEWLINK, rtnl.RTM_DELLINK):
            message = ifinfmsg.ifinfmsg(data[offset:offset + length])
            message.decode()
            yield message.get_attr('IFLA_IFNAME') or ''
        offset += (length + 3) & ~3     # messages are 4-byte aligned


class LinkWatcher:
    def __init__(self, on_change, prefix: str = 'tap', name: str = ''):
        self.on_change = on_change
        self.prefix = prefix
        self.name = name
        self._socket = None
        self._thread = None
        self._stop = threading.Event()

    def start(self) -> bool:
        """Start watching; False (logged) when netlink cannot be used."""
        try:
            self._socket = _open_socket()
        except Exception as e:
            LOG.warning('Link events unavailable (%s): the network agent '
                        '%s polls only', e, self.name)
            return False
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, daemon=True,
            name='link-events-%s' % self.name if self.name else
            'link-events')
        self._thread.start()
        return True

    def stop(self, timeout=None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def _run(self):
        sock = self._socket
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([sock], [], [], _STOP_CHECK)
                if not ready:
                    continue
                names = list(link_names(sock.recv(_RECV_SIZE)))
            except Exception:
                if self._stop.is_set():
                    return
                # ENOBUFS (events were dropped) or a parse error: the
                # agent's polling covers what was missed; wake it once to
                # resync now.
                LOG.exception('Reading link events failed')
                self._notify()
                self._stop.wait(_STOP_CHECK)
                continue
            if any(name.startswith(self.prefix) for name in names):
                self._notify()

    def _notify(self):
        try:
            self.on_change()
        except Exception:
            LOG.exception('Link event handler failed')
