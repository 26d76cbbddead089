"""The network agent of one compute host, like Neutron's L2 agent.

It watches the ports bound to its host. When the virt driver has plugged a
port's VIF here (``driver.plugged_vif_ids()``), the agent checks that the
host offers the port's network bridge and marks the port ``ACTIVE`` and
sends ``network-vif-plugged`` with status ``completed``, or marks it
``ERROR`` and sends ``failed``. When an ``ACTIVE`` port's VIF is unplugged
it marks the port ``DOWN`` and sends ``network-vif-unplugged``; an
``ERROR`` port whose VIF is gone goes back to ``DOWN`` silently, so the
next attempt to plug it is judged again (a missing bridge that an operator
has since created no longer fails it).

A host offers a bridge when (``bridge_checker``):

* ``noop`` VIF driver (and the fake driver): the bridge is listed in the
  host's ``HostSettings.bridges`` (``[network] bridges``);
* ``linuxbridge``: a Linux bridge of that name exists
  (``/sys/class/net/<name>/bridge``).

The agent looks when it is told that something changed, and polls
(``[network] agent_poll_interval``, 2 s by default) as the fallback and
the periodic resync. It is told by the virt driver, after it plugged or
unplugged VIFs of an instance (``driver.add_vif_listener``), and, on a
host with real taps (the ``linuxbridge`` VIF driver), by the kernel's
link events (``link_events.LinkWatcher``, netlink): a
``network-vif-plugged`` then leaves within milliseconds of the plug
instead of up to a poll interval later. A look reads ports bound to the
host (one query, ``objects.Port.get_by_binding_host``) and asks
``driver.plugged_vif_ids(instance_uuid)`` once per instance among them.
Told by the driver, it reads only the ports of the instances the driver
named since the last look; the poll, and a link event (which names no
instance), read every port bound to the host. A busy host therefore pays
per plug for that instance's ports, not for every port it holds: on the
embedded default booting 100 servers at once, the full looks were a third
of the process's CPU. The full look still runs once per poll interval
however busy the host is, so nothing missed waits longer than that.
The port's status is written (compare-and-swap on the status and binding
it read) before the event is sent, so whoever receives the event reads
the port as the event says. Events that could not be sent are tried
again on the next rounds, a few times.

NOTE: to be told again that a port is plugged, set it ``DOWN`` first
(``network.api.API.bind_ports`` does), then plug. An unplug and replug
quicker than one poll interval shows as nothing at all.

Example::

    agent = NetworkAgent(settings, driver, events.build_sender(
        CONF, host, compute_rpcapi=rpcapi.ComputeAPI()))
    agent.start()          # a thread looking when told, and polling
    ...
    agent.stop()
"""

import dataclasses
import os
import threading
import time

from oslo_log import log as logging

from nova import context as nova_context
from nova import exception
from nova.model import external_event
from nova.network import api as network_api
from nova.network import link_events
from nova import objects
from nova.objects import network as network_obj

LOG = logging.getLogger(__name__)

VIF_PLUGGED = 'network-vif-plugged'
VIF_UNPLUGGED = 'network-vif-unplugged'
# Rounds an unsent event is tried again before it is dropped (logged).
SEND_ATTEMPTS = 5
_WAITING = (network_obj.DOWN, network_obj.BUILD)


class ConfiguredBridges:
    """Bridges a host offers by configuration (``noop`` VIF driver)."""

    def __init__(self, bridges):
        self.bridges = frozenset(bridges)

    def __contains__(self, bridge):
        return bridge in self.bridges

    def __repr__(self):
        return 'ConfiguredBridges(%s)' % sorted(self.bridges)


class LinuxBridges:
    """Bridges that exist as Linux bridge devices on this host."""

    def __init__(self, sysfs='/sys/class/net'):
        self.sysfs = sysfs

    def __contains__(self, bridge):
        if not bridge or '/' in bridge or bridge in ('.', '..'):
            return False
        return os.path.isdir(os.path.join(self.sysfs, bridge, 'bridge'))

    def __repr__(self):
        return 'LinuxBridges(%s)' % self.sysfs


def bridge_checker(settings, compute_driver='libvirt.LibvirtDriver'):
    """What offers bridges on a host with these settings and driver.

    ``vif_driver='auto'`` means ``noop`` for libvirt's test driver
    (``test://`` URIs) and for drivers other than libvirt, else
    ``linuxbridge`` (as ``[libvirt] vif_driver`` says).
    """
    vif_driver = settings.vif_driver
    if vif_driver == 'auto':
        is_libvirt = compute_driver.startswith('libvirt.')
        if not is_libvirt or settings.connection_uri.startswith('test://'):
            vif_driver = 'noop'
        else:
            vif_driver = 'linuxbridge'
    if vif_driver == 'linuxbridge':
        return LinuxBridges()
    return ConfiguredBridges(settings.bridges)


def _is_plugged(port, plugged):
    """Whether ``port`` (a Port or PortState) is plugged for its instance,
    by ``plugged`` ({instance uuid: port ids})."""
    return (bool(port.instance_uuid)
            and port.uuid in plugged.get(port.instance_uuid, ()))


def _out_of_date(status, is_plugged):
    """Whether a port with ``status`` needs a new one: plugged while it
    waits for its plug, or unplugged while ``ACTIVE`` or ``ERROR``."""
    if is_plugged:
        return status in _WAITING
    return status in (network_obj.ACTIVE, network_obj.ERROR)


@dataclasses.dataclass
class _Unsent:
    event: external_event.InstanceExternalEvent
    attempts: int = 0


class NetworkAgent:
    """Reports the ports bound to ``settings.host`` as their VIFs come and
    go (see the module docstring).

    ``driver`` is the host's virt driver (``plugged_vif_ids``); ``sender``
    has ``send(context, events) -> bool`` (``nova.network.events``);
    ``bridges`` supports ``in`` (default: ``bridge_checker(settings)``).
    """

    def __init__(self, settings, driver, sender, bridges=None,
                 poll_interval=None, network_api_=None, compute_driver=None):
        self.host = settings.host
        self.driver = driver
        self.sender = sender
        self.bridges = (bridges if bridges is not None else bridge_checker(
            settings, compute_driver or 'libvirt.LibvirtDriver'))
        if poll_interval is None:
            from nova.conf import CONF
            poll_interval = CONF.network.agent_poll_interval
        self.poll_interval = poll_interval
        self.network_api = network_api_ or network_api.API()
        self._context = nova_context.get_admin_context()
        self._networks = {}
        self._unsent = []
        self._stop = threading.Event()
        self._wake = threading.Event()
        # What the agent was told since its last look: the instances the
        # driver named, or "everything" (a link event, a test).
        self._told_lock = threading.Lock()
        self._told: set[str] = set()
        self._told_all = False
        self._thread = None
        self._poll_lock = threading.Lock()
        self._link_watcher = None
        if isinstance(self.bridges, LinuxBridges):
            self._link_watcher = link_events.LinkWatcher(
                self.wake, name=self.host)
        driver.add_vif_listener(self.wake)

    def __repr__(self):
        return '<NetworkAgent of %s>' % self.host

    # -- running -----------------------------------------------------------

    def start(self):
        if self._thread is not None:
            raise RuntimeError('%r already started' % self)
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name='network-agent-%s' % self.host)
        self._thread.start()
        events = (self._link_watcher is not None
                  and self._link_watcher.start())
        LOG.info('Network agent of %(host)s started (bridges: %(br)r; '
                 'told by the driver%(links)s, polling every %(poll)s s)',
                 {'host': self.host, 'br': self.bridges,
                  'links': ' and by link events' if events else '',
                  'poll': self.poll_interval})

    def stop(self, timeout=None):
        self._stop.set()
        self._wake.set()
        if self._link_watcher is not None:
            self._link_watcher.stop(timeout)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def wake(self, instance_uuid=None):
        """Look now rather than at the next poll: at the ports of
        ``instance_uuid`` (the driver plugged or unplugged its VIFs), or
        at every port bound to the host when None (something changed on
        the host that names no instance)."""
        with self._told_lock:
            if instance_uuid is None:
                self._told_all = True
            else:
                self._told.add(instance_uuid)
        self._wake.set()

    def _take_told(self):
        with self._told_lock:
            told, self._told = self._told, set()
            told_all, self._told_all = self._told_all, False
        return told, told_all

    def _loop(self):
        full_due = time.monotonic()
        while not self._stop.is_set():
            # Cleared before the look: a change during it wakes the next.
            self._wake.clear()
            told, told_all = self._take_told()
            try:
                if told_all or time.monotonic() >= full_due:
                    # Due before the look: a failing database is tried
                    # again a poll interval later, not in a tight loop.
                    full_due = time.monotonic() + self.poll_interval
                    self.poll_once()
                else:
                    # What this misses on failure the next full look has.
                    self.poll_once(instance_uuids=told)
            except Exception:
                # The database may be away for a moment; try next round.
                LOG.exception('Network agent of %s: poll failed', self.host)
            self._wake.wait(max(0.0, full_due - time.monotonic()))

    # -- one round -----------------------------------------------------------

    def poll_once(self, instance_uuids=None):
        """Look once, at every port bound to the host, or at those of
        ``instance_uuids`` when given; return the events sent (tests call
        this directly). Unsent events of earlier looks are sent again
        either way.

        Each port's status is read before whether its VIF is plugged: a
        port set ``DOWN`` to be plugged again (a rebuild, an evacuation)
        is then never marked ``ACTIVE`` because of the plug before."""
        with self._poll_lock:
            if instance_uuids is None:
                ports, plugged = self._ports_out_of_date()
            else:
                ports = self.network_api.get_ports_by_host(
                    self._context, self.host, instance_uuids=instance_uuids)
                plugged = {uuid: self.driver.plugged_vif_ids(uuid)
                           for uuid in {port.instance_uuid for port in ports}
                           if uuid}
            events = []
            for port in ports:
                event = self._update_port(port, _is_plugged(port, plugged))
                if event is not None:
                    events.append(event)
            return self._send(events)

    def _ports_out_of_date(self):
        """The ports bound to the host whose status disagrees with their
        VIF, and what is plugged.

        A full look reads every port's status as columns and what the
        driver has plugged in one call, and builds objects only for the
        ports out of date: building them all and asking the driver once
        per instance (each answer a scan of everything plugged) made each
        look quadratic in the host's ports. A port whose status changed
        between the two reads is left to the next look: its plug state
        was read after the status it had, not after the one it has."""
        states = self.network_api.get_port_states_by_host(self._context,
                                                          self.host)
        plugged = self.driver.plugged_vifs_by_instance()
        stale = {state.uuid: state.status for state in states
                 if _out_of_date(state.status, _is_plugged(state, plugged))}
        if not stale:
            return [], plugged
        ports = self.network_api.get_ports_by_host(self._context, self.host,
                                                   uuids=stale)
        return [port for port in ports
                if port.status == stale[port.uuid]], plugged

    def _network(self, network_uuid):
        network = self._networks.get(network_uuid)
        if network is None:
            network = objects.Network.get_by_uuid(self._context,
                                                  network_uuid)
            self._networks[network_uuid] = network
        return network

    def _update_port(self, port, is_plugged):
        status = port.status
        if not _out_of_date(status, is_plugged):
            return None
        if is_plugged:
            bridge = self._network(port.network_uuid).bridge
            if bridge in self.bridges:
                new_status, event_status = (network_obj.ACTIVE,
                                            external_event.STATUS_COMPLETED)
            else:
                new_status, event_status = (network_obj.ERROR,
                                            external_event.STATUS_FAILED)
                LOG.error('Port %(port)s: host %(host)s has no bridge '
                          '%(bridge)s', {'port': port.uuid,
                                         'host': self.host,
                                         'bridge': bridge},
                          instance_uuid=port.instance_uuid)
            name = VIF_PLUGGED
        elif status == network_obj.ACTIVE:
            new_status, event_status = (network_obj.DOWN,
                                        external_event.STATUS_COMPLETED)
            name = VIF_UNPLUGGED
        else:
            new_status, name = network_obj.DOWN, None
        port.status = new_status
        try:
            # Compare-and-swap on the binding too: a port rebound to
            # another host since it was read (an evacuation binding it to
            # its target, or back to its source) is that host's to report.
            port.save(expected_status=status,
                      expected_binding_host=self.host)
        except (exception.UnexpectedPortStatusError, exception.PortNotFound):
            # Rebound or deleted meanwhile: judge it again next round.
            return None
        LOG.info('Port %(port)s on %(host)s: %(old)s -> %(new)s',
                 {'port': port.uuid, 'host': self.host, 'old': status,
                  'new': new_status}, instance_uuid=port.instance_uuid)
        if name is None or not port.instance_uuid:
            return None
        return external_event.InstanceExternalEvent(
            instance_uuid=port.instance_uuid, name=name, tag=port.uuid,
            status=event_status)

    def _send(self, events):
        pending = self._unsent + [_Unsent(e) for e in events]
        self._unsent = []
        if not pending:
            return []
        batch = [p.event for p in pending]
        if self.sender.send(self._context, batch):
            return batch
        for item in pending:
            item.attempts += 1
            if item.attempts < SEND_ATTEMPTS:
                self._unsent.append(item)
            else:
                LOG.error('Giving up sending %(name)s for port %(port)s',
                          {'name': item.event.name, 'port': item.event.tag},
                          instance_uuid=item.event.instance_uuid)
        return []
