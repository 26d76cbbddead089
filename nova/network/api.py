"""The built-in network backend, as the compute layer calls it.

Networks and ports live in the database (``objects.Network``,
``objects.Port``); a network is a Linux bridge by name, with an optional
subnet (``cidr``). A port is created ``DOWN`` for an instance, with a
fixed IP address from its network's subnet, bound to the host that will
plug it, and marked ``ACTIVE`` (or ``ERROR``) by that host's network agent
(``nova.network.agent``), which then sends ``network-vif-plugged`` through
the external events path, as Neutron does for Nova.

Fixed addresses: the lowest free host address of the subnet, never the
network or broadcast address, nor the first host address (the gateway's,
as Neutron reserves it). The database's unique (network, address) key
decides between two concurrent allocations; the loser takes the next free
one. A full subnet raises ``NoMoreFixedIps`` (409) and creates no port.
Deleting a port frees its address.

Example::

    network_api = API()
    network_api.ensure_network(ctx, 'public', 'br-public', '172.24.4.0/24')
    networks = network_api.validate_networks(ctx, ['public'])  # or raises
    nw_info = network_api.allocate_for_instance(ctx, instance, networks)
    nw_info[0].ips                                        # ('172.24.4.2',)
    network_api.bind_ports(ctx, instance, 'compute1')     # DOWN, bound
    ...                                  # the driver plugs, the agent reports
    network_api.get_instance_nw_info(ctx, instance)       # active=True
    network_api.deallocate_for_instance(ctx, instance)    # addresses freed
"""

import collections
import contextlib
import dataclasses
import ipaddress
import random
import socket
import threading
import types
from typing import Mapping

from oslo_log import log as logging
from oslo_utils import excutils
from oslo_utils import uuidutils

from nova import exception
from nova.model import network as network_model
from nova import objects
from nova.objects import network as network_obj

LOG = logging.getLogger(__name__)

# Nova's default base_mac: 'fa:16:3e' then three random octets.
MAC_PREFIX = 'fa:16:3e'
DEVICE_OWNER = 'compute:nova'
# Compute API forms of "no network request".
AUTO = 'auto'
NONE = 'none'
_MAC_ATTEMPTS = 16
# Concurrent allocations that may take the address this one chose, one
# after the other, before it gives up (each retry reads the free ones
# again).
_IP_ATTEMPTS = 64


def random_mac(rand=random):
    return '%s:%02x:%02x:%02x' % ((MAC_PREFIX,) + tuple(
        rand.randrange(256) for _ in range(3)))


def canonical_cidr(cidr):
    """``cidr`` as ``ipaddress`` writes it, or ``InvalidInput``.

    Host bits must be zero ('172.24.4.0/24', not '172.24.4.1/24').
    """
    try:
        return str(ipaddress.ip_network(cidr, strict=True))
    except (TypeError, ValueError) as e:
        raise exception.InvalidInput(
            reason='%r is not a network in CIDR notation: %s' % (cidr, e))


def gateway_address(cidr):
    """The address reserved for the gateway: the first host address."""
    for address in ipaddress.ip_network(cidr).hosts():
        return str(address)
    return None


def free_address(cidr, taken):
    """The lowest host address of ``cidr`` that is neither in ``taken``
    nor the gateway's, or None when there is none.

    ``hosts()`` already leaves out the network and broadcast addresses
    (for IPv6, the subnet-router anycast address). It is walked lazily,
    so a /64 costs no more than the addresses taken.
    """
    network = ipaddress.ip_network(cidr)
    if network.version == 4:
        return _free_ipv4(network, taken)
    hosts = iter(network.hosts())
    next(hosts, None)       # the gateway
    for address in hosts:
        text = str(address)
        if text not in taken:
            return text
    return None


def _free_ipv4(network, taken):
    """``free_address`` of an IPv4 network, on integers: the same
    addresses as ``hosts()`` in the same order, formatted as ``str()`` of
    an ``IPv4Address``. Making an address object for each address walked
    cost 4.7 ms past 1,000 taken addresses, once per port created; this
    costs a fifth of that."""
    first = int(network.network_address)
    last = int(network.broadcast_address)
    if network.prefixlen < 31:
        # Neither the network's address nor its broadcast (RFC 3021: a
        # /31 or /32 has no such addresses to leave out).
        first, last = first + 1, last - 1
    used = set()
    for text in taken:
        try:
            used.add(int.from_bytes(socket.inet_aton(text), 'big'))
        except OSError:
            pass        # not an IPv4 address: cannot be one of these
    for value in range(first + 1, last + 1):     # first: the gateway
        if value not in used:
            return socket.inet_ntoa(value.to_bytes(4, 'big'))
    return None


def vif_from_port(port, network):
    """The ``VIF`` the compute host needs for one port."""
    return network_model.VIF(
        id=port.uuid, address=port.mac_address,
        network=network_model.Network(id=network.uuid, label=network.name,
                                      bridge=network.bridge),
        active=port.status == network_obj.ACTIVE,
        ips=(port.ip_address,) if port.ip_address else ())


@dataclasses.dataclass(frozen=True)
class InstancePorts:
    """The ports of one instance as one read found them, with their
    networks by UUID: an operation reads them once and hands this along
    (to bind them, to decide whether they moved, to make VIFs)."""
    ports: tuple[objects.Port, ...] = ()
    networks: Mapping[str, objects.Network] = dataclasses.field(
        default_factory=lambda: types.MappingProxyType({}))

    def network_info(self) -> network_model.NetworkInfo:
        return network_model.NetworkInfo(
            vif_from_port(port, self.networks[port.network_uuid])
            for port in self.ports)

    def any_bound_to(self, host) -> bool:
        return any(port.binding_host == host for port in self.ports)

    def all_bound_to(self, host) -> bool:
        return all(port.binding_host == host for port in self.ports)


class _AddressesBeingTaken:
    """The fixed addresses this process chose and is writing, by network.

    Threads of one process allocating on one network at once would all
    choose the same lowest free address and all but one would fail their
    INSERT and read the free ones again: an address chosen here is left
    out by the others until its port is written (or not). The addresses
    taken are read under the same lock, so a port written meanwhile is
    either read or still held here: threads of one process never choose
    the same address. Other processes still meet at the database's unique
    constraint, as before.
    """

    def __init__(self):
        self._lock = threading.Lock()
        # Each address with the number of allocations writing it.
        self._by_network: dict[str, collections.Counter[str]] = {}

    def choose(self, network, read_taken) -> str | None:
        """The lowest free address of ``network`` that is neither taken
        (``read_taken()``) nor being taken here, held until ``done``. When
        only addresses being taken here are left, the lowest of those:
        its write may still fail, and a network is full only when the
        database says so."""
        with self._lock:
            taken = read_taken()
            mine = self._by_network.setdefault(network.uuid,
                                               collections.Counter())
            address = free_address(network.cidr, taken | set(mine))
            if address is None:
                address = free_address(network.cidr, taken)
            if address is not None:
                mine[address] += 1
            return address

    def done(self, network, address: str) -> None:
        with self._lock:
            mine = self._by_network.get(network.uuid)
            if mine is None:
                return
            mine[address] -= 1
            if mine[address] <= 0:
                del mine[address]
            if not mine:
                del self._by_network[network.uuid]


_being_taken = _AddressesBeingTaken()


class API:

    def __init__(self, rand=None):
        self._random = rand or random.Random()

    # -- networks ----------------------------------------------------------

    def create_network(self, context, name, bridge, cidr=None):
        """A new network; ``cidr`` (optional) is the subnet its ports get
        fixed addresses from (``InvalidInput`` when malformed)."""
        if cidr is not None:
            cidr = canonical_cidr(cidr)
        return objects.Network(context, name=name, bridge=bridge,
                               cidr=cidr).create()

    def get_network(self, context, uuid_or_name):
        """A network by UUID or by name (names must then be unique)."""
        if uuidutils.is_uuid_like(uuid_or_name):
            try:
                return objects.Network.get_by_uuid(context, uuid_or_name)
            except exception.NetworkNotFound:
                pass
        matches = [n for n in objects.Network.get_all(context)
                   if n.name == uuid_or_name]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise exception.NetworkAmbiguous(
                reason='several networks are named %s' % uuid_or_name)
        raise exception.NetworkNotFound(network_id=uuid_or_name)

    def ensure_network(self, context, name, bridge, cidr=None):
        """The network called ``name``, created on first use.

        An existing network keeps its bridge and subnet; one that has no
        subnet yet (made before networks had one) gets ``cidr``, so its
        new ports get addresses (its existing ports keep none).
        """
        try:
            network = self.get_network(context, name)
        except exception.NetworkNotFound:
            return self.create_network(context, name, bridge, cidr)
        if network.bridge != bridge:
            LOG.warning('Network %(name)s uses bridge %(have)s, not '
                        '%(want)s; keeping it',
                        {'name': name, 'have': network.bridge,
                         'want': bridge})
        if cidr is not None:
            cidr = canonical_cidr(cidr)
            if network.cidr is None:
                network.cidr = cidr
                network.save()
                LOG.info('Network %(name)s now has subnet %(cidr)s',
                         {'name': name, 'cidr': cidr})
            elif network.cidr != cidr:
                LOG.warning('Network %(name)s has subnet %(have)s, not '
                            '%(want)s; keeping it',
                            {'name': name, 'have': network.cidr,
                             'want': cidr})
        return network

    def validate_networks(self, context, requested_networks=None):
        """The networks of a request, checked, as ``objects.Network``.

        ``None``/``'auto'``: the only network there is, if there is
        exactly one (none if there is none; ``NetworkAmbiguous`` if there
        are several); ``'none'``: none; else a list of UUIDs, names,
        ``{'uuid': ...}`` dicts or ``objects.Network``
        (``NetworkNotFound``, ``NetworkAmbiguous``, ``InvalidInput``).
        Reads only; ``allocate_for_instance`` takes the result.
        """
        if requested_networks == NONE:
            return []
        if requested_networks is None or requested_networks == AUTO:
            networks = objects.Network.get_all(context)
            if len(networks) > 1:
                raise exception.NetworkAmbiguous(
                    reason='%d networks exist; request one'
                           % len(networks))
            return networks
        result = []
        for item in requested_networks:
            if isinstance(item, objects.Network):
                result.append(item)
                continue
            if isinstance(item, dict):
                item = item.get('uuid') or item.get('id') or item.get('name')
            if not item:
                raise exception.InvalidInput(
                    reason='a requested network has no uuid')
            result.append(self.get_network(context, item))
        return result

    # -- ports -------------------------------------------------------------

    def _create_port(self, context, instance, network, host):
        """One ``DOWN`` port, with a fixed address when the network has a
        subnet. A MAC drawn twice is drawn again; an address another
        allocation took meanwhile makes this one take the next free."""
        mac_attempts = ip_attempts = 0
        while True:
            try:
                with self._free_address(context, network) as address:
                    return objects.Port(
                        context, network_uuid=network.uuid,
                        mac_address=random_mac(self._random),
                        ip_address=address, instance_uuid=instance.uuid,
                        binding_host=host, status=network_obj.DOWN,
                        device_owner=DEVICE_OWNER).create()
            except exception.FixedIpAlreadyInUse:
                ip_attempts += 1
                if ip_attempts >= _IP_ATTEMPTS:
                    raise exception.InternalError(
                        err='no address of network %s after %d attempts: '
                            'too many concurrent allocations'
                            % (network.name, _IP_ATTEMPTS))
                LOG.debug('Address %(ip)s of network %(net)s was taken '
                          'meanwhile; taking another',
                          {'ip': address, 'net': network.name},
                          instance=instance)
            except exception.PortExists:
                # A fresh UUID cannot collide; the MAC did. Draw again.
                mac_attempts += 1
                if mac_attempts >= _MAC_ATTEMPTS:
                    raise exception.InternalError(
                        err='no free MAC address after %d attempts'
                            % _MAC_ATTEMPTS)

    @staticmethod
    @contextlib.contextmanager
    def _free_address(context, network):
        """A free address of ``network`` (None without a subnet), held
        from the other allocations of this process for the body."""
        if not network.cidr:
            yield None
            return
        address = _being_taken.choose(
            network, lambda: objects.Port.get_ip_addresses(context,
                                                           network.uuid))
        if address is None:
            raise exception.NoMoreFixedIps(network=network.name)
        try:
            yield address
        finally:
            _being_taken.done(network, address)

    def allocate_for_instance(self, context, instance,
                              requested_networks=None, host=None):
        """Create one ``DOWN`` port per requested network, each with a
        fixed address of its network's subnet (if it has one); return the
        ``NetworkInfo`` (every VIF ``active=False``, ``ips`` set).

        ``requested_networks`` as ``validate_networks`` takes them (or
        its result). ``host`` binds the ports at once (as
        ``bind_ports``); without it they are bound to no host, and no
        agent reports them until ``bind_ports``. On failure
        (``NoMoreFixedIps``, ...) the ports this call created are deleted
        again, freeing their addresses.
        """
        networks = self.validate_networks(context, requested_networks)
        ports = []
        try:
            for network in networks:
                ports.append(self._create_port(context, instance, network,
                                               host))
        except Exception:
            with excutils.save_and_reraise_exception():
                for port in ports:
                    port.destroy()
        LOG.info('Allocated ports %(ports)s', {
            'ports': [p.uuid for p in ports]}, instance=instance)
        return network_model.NetworkInfo(
            vif_from_port(p, n) for p, n in zip(ports, networks))

    def get_ports(self, context, instance,
                  networks: Mapping[str, objects.Network] | None = None
                  ) -> InstancePorts:
        """The ports of ``instance`` as they are now, with their networks
        (each read once; ``networks`` already read are not read again)."""
        known = dict(networks or {})
        ports = tuple(objects.Port.get_by_instance_uuid(context,
                                                        instance.uuid))
        for port in ports:
            if port.network_uuid not in known:
                known[port.network_uuid] = objects.Network.get_by_uuid(
                    context, port.network_uuid)
        return InstancePorts(ports, types.MappingProxyType(known))

    def bind(self, context, instance, host,
             ports: InstancePorts | None = None,
             write: bool = True) -> InstancePorts:
        """Bind every port of ``instance`` to ``host`` and set it ``DOWN``,
        so that host's agent reports it once its VIF is plugged there.

        ``ports``: as this operation read them (``get_ports``), so they
        are not read again; by default they are read now. Returns the
        ports as bound. ``write=False``: the binding is only set on the
        objects, for the caller to write with the instance
        (``Instance.save(and_ports=...)``).
        """
        if ports is None:
            ports = self.get_ports(context, instance)
        for port in ports.ports:
            # NOTE: both fields are written even when they look unchanged,
            # so ports read earlier in the operation bind like fresh ones.
            port.binding_host = host
            port.status = network_obj.DOWN
            if write:
                port.save()
        if write:
            self._bound(instance, ports, host)
        return ports

    @staticmethod
    def _bound(instance, ports: InstancePorts, host) -> None:
        LOG.info('Bound ports %(ports)s to %(host)s',
                 {'ports': [p.uuid for p in ports.ports], 'host': host},
                 instance=instance)

    def bind_ports(self, context, instance, host):
        """``bind``, as the ``NetworkInfo`` the host plugs (every VIF
        ``active=False``)."""
        return self.bind(context, instance, host).network_info()

    def bind_new_instance(self, instance, ports: InstancePorts, host
                          ) -> tuple[objects.Port, ...]:
        """Bind ``ports`` (those of a new ``instance``, as
        ``get_ports`` read them) to ``host`` and set the instance's
        ``network_info`` from them, on the objects only: the caller
        creates the instance with them (``Instance.create(and_ports=)``),
        in one transaction, so that the instance's record of its VIFs and
        their binding never disagree. Returns the ports to write."""
        self.bind(None, instance, host, ports=ports, write=False)
        instance.network_info = ports.network_info()
        return ports.ports

    def bound_new_instance(self, instance, ports: InstancePorts, host):
        """Once the instance is created with ``ports`` bound to ``host``
        (``bind_new_instance``): log it."""
        self._bound(instance, ports, host)

    def get_instance_nw_info(self, context, instance):
        """The ``NetworkInfo`` as the ports are now (``ACTIVE`` ->
        ``active=True``)."""
        return self.get_ports(context, instance).network_info()

    def deallocate_for_instance(self, context, instance):
        """Delete every port of ``instance``. Idempotent."""
        ports = objects.Port.get_by_instance_uuid(context, instance.uuid)
        for port in ports:
            port.destroy()
        if ports:
            LOG.info('Deallocated ports %(ports)s',
                     {'ports': [p.uuid for p in ports]}, instance=instance)

    def get_ports_by_host(self, context, host, instance_uuids=None,
                          uuids=None):
        """Every port bound to ``host``; only those of ``instance_uuids``,
        or those of ``uuids``, when given."""
        return objects.Port.get_by_binding_host(
            context, host, instance_uuids=instance_uuids, uuids=uuids)

    def get_port_states_by_host(self, context, host):
        """The uuid, instance and status of every port bound to ``host``
        (``objects.network.PortState``)."""
        return objects.Port.states_by_binding_host(context, host)
