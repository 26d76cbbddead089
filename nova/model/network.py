"""Typed values describing an instance's network attachments.

A ``VIF`` is one port of the instance as the compute host needs it: the
port id, its MAC, the network (and the Linux bridge that carries it) and the
host device name. ``active`` is false until the network backend has bound
the port on this host; for such VIFs the virt driver waits for a
``network-vif-plugged`` event before letting the guest run.

These values cross the RPC boundary and are stored with the instance, hence
``to_dict``/``from_dict``.
"""

import dataclasses

# Linux limits interface names to 15 characters; Nova's convention is
# 'tap' plus the first 11 characters of the port id.
NIC_NAME_LEN = 14
TAP_PREFIX = 'tap'


@dataclasses.dataclass(frozen=True)
class Network:
    id: str
    label: str
    bridge: str

    def to_dict(self):
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class VIF:
    id: str
    address: str
    network: Network
    active: bool = False
    devname: str = ''
    ips: tuple = ()

    def __post_init__(self):
        if not self.devname:
            object.__setattr__(self, 'devname',
                               (TAP_PREFIX + self.id)[:NIC_NAME_LEN])

    def to_dict(self):
        return {'id': self.id, 'address': self.address,
                'network': self.network.to_dict(), 'active': self.active,
                'devname': self.devname, 'ips': list(self.ips)}

    @classmethod
    def from_dict(cls, values):
        return cls(id=values['id'], address=values['address'],
                   network=Network(**values['network']),
                   active=bool(values.get('active', False)),
                   devname=values.get('devname', ''),
                   ips=tuple(values.get('ips', ())))


class NetworkInfo(tuple):
    """An ordered, immutable list of VIFs."""

    def __new__(cls, vifs=()):
        return super().__new__(cls, tuple(vifs))

    def to_list(self):
        return [vif.to_dict() for vif in self]

    @classmethod
    def from_list(cls, values):
        return cls(VIF.from_dict(v) for v in (values or ()))

    @classmethod
    def coerce(cls, value):
        """A NetworkInfo from one, from a list of VIFs, or from their dict
        form (what RPC and the database carry); None is empty."""
        if isinstance(value, cls):
            return value
        items = list(value or ())
        if all(isinstance(item, VIF) for item in items):
            return cls(items)
        return cls.from_list(items)

    def inactive(self):
        """VIFs whose network-vif-plugged event has to be waited for."""
        return [vif for vif in self if not vif.active]

    def as_active(self):
        return NetworkInfo(dataclasses.replace(vif, active=True)
                           for vif in self)
