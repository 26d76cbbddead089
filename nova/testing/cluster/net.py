"""One network namespace per simulated compute host.

Why: taps, bridges and ``/sys/class/net`` belong to a network namespace.
If every host shared the machine's, a bridge removed "on host B" would be
gone on every host, and a tap left by host A after it died would be found
(and reused) by host B plugging the same port, so "B has no tap" could not
even be asked. A real deployment has one network stack per host; so does
this cluster. A host's libvirtd, QEMU processes and nova-compute all live
in its namespace; the controller services stay in the machine's own, and
``cluster_forward`` makes them reachable from each host at the same
loopback address.

Example::

    ns = NetworkNamespace('nvc1a2b3c-compute1').create()
    ns.add_bridge('br-nova')
    ns.taps()                       # ['tap6c0d2e4f-1a']
    run_in_netns(ns.path, host.start)   # processes it starts live there
    ns.delete()
"""

import ctypes
import json
import os
import threading

from oslo_concurrency import processutils

NETNS_DIR = '/run/netns'
CLONE_NEWNET = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)


def _setns(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, 'setns(%s): %s' % (path, os.strerror(err)))
    finally:
        os.close(fd)


def run_in_netns(path, function, *args, **kwargs):
    """Call ``function`` in a thread living in the namespace at ``path``.

    Namespaces are per thread in Linux, and a process forked by a thread
    starts in that thread's namespaces: everything ``function`` starts
    (``subprocess``) lives in the namespace. The calling thread's own
    namespace is never changed. Returns what ``function`` returns and
    raises what it raises.
    """
    outcome = {}

    def target():
        try:
            _setns(path)
            outcome['value'] = function(*args, **kwargs)
        except BaseException as e:      # re-raised in the caller
            outcome['error'] = e

    thread = threading.Thread(target=target, name='netns-%s'
                              % os.path.basename(path))
    thread.start()
    thread.join()
    if 'error' in outcome:
        raise outcome['error']
    return outcome.get('value')


def existing(prefix):
    """Names of the network namespaces whose name starts with ``prefix``."""
    try:
        return sorted(n for n in os.listdir(NETNS_DIR)
                      if n.startswith(prefix))
    except FileNotFoundError:
        return []


class NetworkNamespace:
    """A named network namespace (``ip netns``) and what is in it."""

    def __init__(self, name):
        if not name or '/' in name or name.startswith('.'):
            raise ValueError('bad network namespace name %r' % name)
        self.name = name

    @property
    def path(self):
        return os.path.join(NETNS_DIR, self.name)

    def exists(self):
        return os.path.exists(self.path)

    def create(self):
        """Create it with loopback up; an existing one is reused."""
        if not self.exists():
            processutils.execute('ip', 'netns', 'add', self.name)
        self.ip('link', 'set', 'lo', 'up')
        return self

    def delete(self):
        """Remove it (idempotent). Its devices go with its last user."""
        if self.exists():
            processutils.execute('ip', 'netns', 'delete', self.name)

    def ip(self, *args):
        out, _err = processutils.execute('ip', '-n', self.name, *args)
        return out

    def links(self):
        """{name: kind} of every device ('' for plain ones, 'tun',
        'bridge' ...), from ``ip -d -j link``."""
        data = json.loads(self.ip('-d', '-j', 'link', 'show') or '[]')
        return {link['ifname']: link.get('linkinfo', {}).get('info_kind', '')
                for link in data}

    def taps(self):
        return sorted(n for n, kind in self.links().items() if kind == 'tun')

    def has_bridge(self, bridge):
        return self.links().get(bridge) == 'bridge'

    def add_bridge(self, bridge):
        """Create ``bridge`` (up) unless it exists."""
        if not self.has_bridge(bridge):
            self.ip('link', 'add', bridge, 'type', 'bridge')
        self.ip('link', 'set', bridge, 'up')

    def remove_bridge(self, bridge):
        if bridge in self.links():
            self.ip('link', 'delete', bridge)

    def bridge_ports(self, bridge):
        data = json.loads(self.ip('-j', 'link', 'show', 'master', bridge)
                          or '[]') if self.has_bridge(bridge) else []
        return sorted(link['ifname'] for link in data)

    def delete_taps(self):
        """Remove every tap: what a host loses when it loses power."""
        removed = self.taps()
        for tap in removed:
            self.ip('link', 'delete', tap)
        return removed

    def describe(self):
        links = self.links()
        return ', '.join('%s(%s)' % (n, k) if k else n
                         for n, k in sorted(links.items()))
