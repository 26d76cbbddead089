"""The built-in network backend, as the compute layer calls it.

Networks and ports live in the database (``objects.Network``,
``objects.Port``); a network is a Linux bridge by name. A port is created
``DOWN`` for an instance, bound to the host that will plug it, and marked
``ACTIVE`` (or ``ERROR``) by that host's network agent
(``nova.network.agent``), which then sends ``network-vif-plugged`` through
the external events path, as Neutron does for Nova.

Example::

    network_api = API()
    network_api.ensure_network(ctx, 'public', 'br-public')
    nw_info = network_api.allocate_for_instance(ctx, instance, ['public'])
    network_api.bind_ports(ctx, instance, 'compute1')     # DOWN, bound
    ...                                  # the driver plugs, the agent reports
    network_api.get_instance_nw_info(ctx, instance)       # active=True
    network_api.deallocate_for_instance(ctx, instance)
"""

import random

from oslo_log import log as logging
from oslo_utils import excutils
from oslo_utils import uuidutils

from nova import exception
from nova.network import model as network_model
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


def random_mac(rand=random):
    return '%s:%02x:%02x:%02x' % ((MAC_PREFIX,) + tuple(
        rand.randrange(256) for _ in range(3)))


def vif_from_port(port, network):
    """The ``VIF`` the compute host needs for one port."""
    return network_model.VIF(
        id=port.uuid, address=port.mac_address,
        network=network_model.Network(id=network.uuid, label=network.name,
                                      bridge=network.bridge),
        active=port.status == network_obj.ACTIVE)


class API:

    def __init__(self, rand=None):
        self._random = rand or random.Random()

    # -- networks ----------------------------------------------------------

    def create_network(self, context, name, bridge):
        return objects.Network(context, name=name, bridge=bridge).create()

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

    def ensure_network(self, context, name, bridge):
        """The network called ``name``, created on first use."""
        try:
            network = self.get_network(context, name)
        except exception.NetworkNotFound:
            return self.create_network(context, name, bridge)
        if network.bridge != bridge:
            LOG.warning('Network %(name)s uses bridge %(have)s, not '
                        '%(want)s; keeping it',
                        {'name': name, 'have': network.bridge,
                         'want': bridge})
        return network

    def _requested(self, context, requested_networks):
        """The networks of a request: ``None``/``'auto'`` (the only network
        there is, if there is exactly one), ``'none'``, or a list of UUIDs,
        names, ``{'uuid': ...}`` dicts or ``objects.Network``."""
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
        for _attempt in range(_MAC_ATTEMPTS):
            port = objects.Port(context, network_uuid=network.uuid,
                                mac_address=random_mac(self._random),
                                instance_uuid=instance.uuid,
                                binding_host=host,
                                status=network_obj.DOWN,
                                device_owner=DEVICE_OWNER)
            try:
                return port.create()
            except exception.PortExists:
                # A fresh UUID cannot collide; the MAC did. Draw again.
                continue
        raise exception.InternalError(
            err='no free MAC address after %d attempts' % _MAC_ATTEMPTS)

    def allocate_for_instance(self, context, instance,
                              requested_networks=None, host=None):
        """Create one ``DOWN`` port per requested network; return the
        ``NetworkInfo`` (every VIF ``active=False``).

        ``host`` binds the ports at once (as ``bind_ports``). On failure
        the ports this call created are deleted again.
        """
        networks = self._requested(context, requested_networks)
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

    def bind_ports(self, context, instance, host):
        """Bind every port of ``instance`` to ``host`` and set it ``DOWN``,
        so that host's agent reports it once its VIF is plugged there.

        Returns the ``NetworkInfo`` (every VIF ``active=False``).
        """
        vifs = []
        networks = {}
        for port in objects.Port.get_by_instance_uuid(context,
                                                      instance.uuid):
            port.binding_host = host
            port.status = network_obj.DOWN
            port.save()
            network = networks.get(port.network_uuid)
            if network is None:
                network = objects.Network.get_by_uuid(context,
                                                      port.network_uuid)
                networks[port.network_uuid] = network
            vifs.append(vif_from_port(port, network))
        LOG.info('Bound ports %(ports)s to %(host)s',
                 {'ports': [v.id for v in vifs], 'host': host},
                 instance=instance)
        return network_model.NetworkInfo(vifs)

    def get_instance_nw_info(self, context, instance):
        """The ``NetworkInfo`` as the ports are now (``ACTIVE`` ->
        ``active=True``)."""
        networks = {}
        vifs = []
        for port in objects.Port.get_by_instance_uuid(context,
                                                      instance.uuid):
            network = networks.get(port.network_uuid)
            if network is None:
                network = objects.Network.get_by_uuid(context,
                                                      port.network_uuid)
                networks[port.network_uuid] = network
            vifs.append(vif_from_port(port, network))
        return network_model.NetworkInfo(vifs)

    def deallocate_for_instance(self, context, instance):
        """Delete every port of ``instance``. Idempotent."""
        ports = objects.Port.get_by_instance_uuid(context, instance.uuid)
        for port in ports:
            port.destroy()
        if ports:
            LOG.info('Deallocated ports %(ports)s',
                     {'ports': [p.uuid for p in ports]}, instance=instance)

    def get_ports_by_host(self, context, host):
        """Every port bound to ``host``.

        NOTE: ``objects.Port`` has no query by binding host yet, so this
        walks the networks; there are few of them.
        """
        ports = []
        for network in objects.Network.get_all(context):
            ports.extend(p for p in objects.Port.get_by_network_uuid(
                context, network.uuid) if p.binding_host == host)
        return ports
