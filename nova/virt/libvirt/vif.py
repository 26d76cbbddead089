"""VIF drivers: the host side of an instance's network ports.

A driver plugs a ``model.network.VIF`` (makes whatever the host needs),
unplugs it (idempotently) and says which ``<interface>`` the guest gets.

* ``LinuxBridgeVIFDriver``: a tap device per port, made over netlink
  (pyroute2: one socket and two messages, 2-3 ms, where four ``ip`` runs
  took 10-14 ms of every boot) and attached to the network's Linux bridge;
  libvirt is handed the tap as ``<interface type='ethernet'><target
  dev='tap...' managed='no'/>``. Plug fails with
  ``VirtualInterfacePlugException`` naming the bridge when it does not
  exist on this host.
* ``NoopVIFDriver``: for libvirt's test driver. Makes nothing, but still
  fails when the network's bridge is not in ``HostSettings.bridges``: a
  simulated host that lacks the port's bridge, which is how tests get a
  real, reproducible plug failure.

``get_vif_driver(settings)`` picks one from ``settings.vif_driver``
(``auto``: noop for ``test://`` URIs, linuxbridge otherwise).
"""

import abc
import os
import threading

from oslo_log import log as logging

from nova import exception
from nova.virt import driver as driver_base
from nova.virt.libvirt import config

LOG = logging.getLogger(__name__)

SYS_CLASS_NET = '/sys/class/net'


class VIFDriver(abc.ABC):
    def __init__(self, settings):
        self.settings = settings

    @abc.abstractmethod
    def plug(self, instance, vif) -> None:
        """Make the host side of ``vif``; raise VirtualInterfacePlugException.
        """

    @abc.abstractmethod
    def unplug(self, instance, vif) -> None:
        """Remove the host side of ``vif``; nothing there is fine."""

    @abc.abstractmethod
    def plugged_vifs_by_instance(self) -> dict[str, set[str]]:
        """The port ids plugged on this host now, by instance uuid."""

    def close(self) -> None:
        """Give back what the driver keeps open (nothing by default)."""

    def plugged_vif_ids(self, instance_uuid=None) -> set[str]:
        """Port ids plugged on this host now (of one instance, if given).
        """
        return driver_base.ports_plugged(self.plugged_vifs_by_instance(),
                                         instance_uuid)

    def get_config(self, instance, vif) -> config.Interface:
        return config.Interface(net_type='ethernet',
                                mac_address=vif.address,
                                target_dev=vif.devname, managed=False,
                                model='virtio')

    def _no_bridge(self, vif, how):
        return exception.VirtualInterfacePlugException(
            reason='Cannot plug port %(port)s: bridge %(bridge)s of network '
                   '%(net)s %(how)s on host %(host)s'
                   % {'port': vif.id, 'bridge': vif.network.bridge,
                      'net': vif.network.label or vif.network.id,
                      'how': how, 'host': self.settings.host})


class NoopVIFDriver(VIFDriver):
    """Plugs nothing on the host, but keeps account.

    ``bridges`` is the simulated host's set of bridges (from
    ``settings.bridges``); a test removes one to make the host lack it.
    ``plugged_vif_ids`` answers from the ports plugged and not unplugged
    since (kept in memory: a new driver starts with none).
    """

    def __init__(self, settings):
        super().__init__(settings)
        self.bridges = set(settings.bridges)
        # instance uuid -> its port ids: a look at one instance costs that
        # instance's ports, not every port plugged on the host.
        self._plugged: dict[str | None, set[str]] = {}
        self._lock = threading.Lock()

    def plug(self, instance, vif):
        if vif.network.bridge not in self.bridges:
            raise self._no_bridge(vif, 'is not available')
        with self._lock:
            self._plugged.setdefault(getattr(instance, 'uuid', None),
                                     set()).add(vif.id)
        LOG.debug('Plugged VIF %s (noop)', vif.id, instance=instance)

    def unplug(self, instance, vif):
        owner = getattr(instance, 'uuid', None)
        with self._lock:
            ports = self._plugged.get(owner, set())
            ports.discard(vif.id)
            if not ports:
                self._plugged.pop(owner, None)
        LOG.debug('Unplugged VIF %s (noop)', vif.id, instance=instance)

    def restore(self, plugged) -> None:
        """Count ``plugged`` ((instance uuid, port id) pairs) as plugged:
        what a real host still holds when its compute service restarts
        (its taps), which this driver's memory does not outlive."""
        with self._lock:
            for owner, port in plugged:
                self._plugged.setdefault(owner, set()).add(port)

    def plugged_vifs_by_instance(self):
        with self._lock:
            return {owner: set(ports)
                    for owner, ports in self._plugged.items()}

    def plugged_vif_ids(self, instance_uuid=None):
        with self._lock:
            return driver_base.ports_plugged(self._plugged, instance_uuid)


def device_exists(name: str) -> bool:
    return os.path.exists(os.path.join(SYS_CLASS_NET, name))


def bridge_exists(name: str) -> bool:
    return bool(name) and os.path.isdir(
        os.path.join(SYS_CLASS_NET, name, 'bridge'))


# A tap's interface alias names its port and instance, so what is plugged
# can be read back from the host itself, after a restart too.
ALIAS_PREFIX = 'nova'


def _alias(instance, vif) -> str:
    return '%s:%s:%s' % (ALIAS_PREFIX, getattr(instance, 'uuid', '') or '',
                         vif.id)


def _read_alias(dev: str) -> tuple[str, str] | None:
    try:
        with open(os.path.join(SYS_CLASS_NET, dev, 'ifalias')) as f:
            parts = f.read().strip().split(':')
    except OSError:
        return None
    if len(parts) != 3 or parts[0] != ALIAS_PREFIX:
        return None
    return parts[1], parts[2]


class _Netlink:
    """One netlink socket (pyroute2's ``IPRoute``) for a driver's plugs and
    unplugs, opened by the first and kept: opening one cost 1-10 ms here,
    as much as the link requests it carries. Threads take turns on it
    (one socket, one request and its answers at a time).

    A request that fails on the socket itself (``OSError``: it was closed
    or broke since its last use) closes it and runs once more on a new
    one, as it would have on the fresh socket each request used to open;
    what the kernel refuses (``NetlinkError``) and what the request
    raises itself leave the socket as it is.
    """

    def __init__(self, factory, refused):
        self._factory = factory
        self._refused = refused
        self._socket = None
        self._lock = threading.Lock()

    def call(self, request):
        """``request(ipr)``, its result."""
        with self._lock:
            for last_try in (False, True):
                fresh = self._socket is None
                if fresh:
                    self._socket = self._factory()
                try:
                    return request(self._socket)
                except self._refused:
                    raise
                except OSError as e:
                    self._close()
                    if fresh or last_try:
                        raise
                    LOG.warning('The netlink socket failed (%s); trying '
                                'again on a new one', e)
        raise AssertionError('not reached')

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        socket, self._socket = self._socket, None
        if socket is not None:
            try:
                socket.close()
            except Exception as e:
                LOG.debug('Closing the netlink socket failed: %s', e)


class LinuxBridgeVIFDriver(VIFDriver):
    def __init__(self, settings):
        super().__init__(settings)
        # NOTE: imported here, once per driver: only a host with real taps
        # needs pyroute2 (about 150 ms and 10 MiB to import), and no boot
        # should pay the import.
        from pyroute2 import IPRoute
        from pyroute2.netlink.exceptions import NetlinkError
        self._netlink = _Netlink(IPRoute, NetlinkError)
        self._netlink_error = NetlinkError

    def close(self) -> None:
        self._netlink.close()

    def plug(self, instance, vif):
        bridge = vif.network.bridge
        if not bridge_exists(bridge):
            raise self._no_bridge(vif, 'does not exist')
        dev = vif.devname
        created = []

        def plug(ipr):
            # The bridge's index before anything is made: a bridge gone
            # since the check above leaves nothing to undo.
            master = ipr.link_lookup(ifname=bridge)
            if not master:
                raise self._no_bridge(vif, 'does not exist')
            if not device_exists(dev):
                ipr.link('add', ifname=dev, kind='tuntap', mode='tap')
                created.append(dev)
            # One message: the alias (what plugged_vifs_by_instance reads
            # back), the bridge and the link up.
            ipr.link('set', ifname=dev, ifalias=_alias(instance, vif),
                     master=master[0], state='up')
        try:
            self._netlink.call(plug)
        except self._netlink_error as e:
            if created:
                self._delete(dev, instance)
            raise exception.VirtualInterfacePlugException(
                reason='Cannot plug port %s into bridge %s on host %s: %s'
                       % (vif.id, bridge, self.settings.host, e))
        LOG.info('Plugged %(dev)s into bridge %(bridge)s',
                 {'dev': dev, 'bridge': bridge}, instance=instance)

    def unplug(self, instance, vif):
        if device_exists(vif.devname):
            self._delete(vif.devname, instance)

    def plugged_vifs_by_instance(self):
        found: dict[str, set[str]] = {}
        for dev in os.listdir(SYS_CLASS_NET):
            owner_port = _read_alias(dev)
            if owner_port is not None:
                owner, port = owner_port
                found.setdefault(owner, set()).add(port)
        return found

    def _delete(self, dev, instance):
        try:
            self._netlink.call(lambda ipr: ipr.link('del', ifname=dev))
        except self._netlink_error as e:
            if device_exists(dev):
                raise exception.VirtualInterfacePlugException(
                    reason='Cannot delete %s: %s' % (dev, e))
        LOG.info('Deleted tap device %s', dev, instance=instance)


DRIVERS = {'noop': NoopVIFDriver, 'linuxbridge': LinuxBridgeVIFDriver}


def get_vif_driver(settings) -> VIFDriver:
    name = settings.vif_driver
    if name == 'auto':
        name = ('noop' if (settings.connection_uri or '').startswith('test:')
                else 'linuxbridge')
    try:
        return DRIVERS[name](settings)
    except KeyError:
        raise exception.InvalidConfiguration(
            reason='unknown vif_driver %r' % settings.vif_driver)
