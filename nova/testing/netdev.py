"""Linux bridges made by tests, and what tests look at in ``ip link``.

The bridge is the host's side of a network: the linuxbridge VIF driver
attaches a tap per port to it and fails when it is missing, which is how
integration tests make a real plug failure (``remove()`` the bridge).

Example::

    with netdev.LinuxBridge(netdev.unique_name('nvbr')) as br:
        ...                     # br.ports() lists the taps plugged into it
"""

import os
import uuid

from oslo_concurrency import processutils

SYS_NET = '/sys/class/net'
IFNAMSIZ = 15


def unique_name(prefix):
    """An interface name no other test uses (Linux allows 15 chars)."""
    return (prefix + uuid.uuid4().hex)[:IFNAMSIZ]


def link_exists(name):
    return os.path.exists(os.path.join(SYS_NET, name))


def tap_devices(prefix='tap'):
    """Names of tun/tap devices on the host starting with ``prefix``."""
    return sorted(
        name for name in os.listdir(SYS_NET)
        if name.startswith(prefix)
        and os.path.exists(os.path.join(SYS_NET, name, 'tun_flags')))


def delete_link(name):
    """Delete one device by name (one the test knows it owns)."""
    processutils.execute('ip', 'link', 'del', name)


def master(name):
    """The bridge a device is attached to, or None."""
    link = os.path.join(SYS_NET, name, 'master')
    if not os.path.islink(link):
        return None
    return os.path.basename(os.readlink(link))


def bridge_ports(bridge):
    try:
        return sorted(os.listdir(os.path.join(SYS_NET, bridge, 'brif')))
    except FileNotFoundError:
        return []


class LinuxBridge:
    """A bridge this test creates and removes (and nothing else)."""

    def __init__(self, name):
        if len(name) > IFNAMSIZ:
            raise ValueError('interface name too long: %s' % name)
        self.name = name
        self._created = False

    def create(self):
        processutils.execute('ip', 'link', 'add', self.name, 'type',
                             'bridge')
        self._created = True
        processutils.execute('ip', 'link', 'set', self.name, 'up')
        return self

    def remove(self):
        """Delete the bridge if this object created it and it exists."""
        if self._created and link_exists(self.name):
            delete_link(self.name)
        self._created = False

    def exists(self):
        return link_exists(self.name)

    def ports(self):
        return bridge_ports(self.name)

    def __enter__(self):
        return self.create()

    def __exit__(self, *exc_info):
        self.remove()
