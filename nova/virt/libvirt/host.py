"""The connection to one host's libvirt, and what it says about the host.

``Host`` owns the ``virConnect``: it opens it (``HypervisorUnavailable``
when libvirtd is not there), notices when it broke (libvirtd restarted)
and opens a new one on the next call, and turns libvirt's lifecycle events
into ``virt.event.LifecycleEvent`` values for the driver.

Events: libvirt calls back on its event-loop thread (``binding.
start_event_loop``). The callback only queues the event; a dispatcher
thread of this host hands it on, so a slow consumer (the compute manager
writing to the database) never stalls libvirt's loop.

Note on libvirt's test driver: every new connection to a
``test:///<file>`` URI starts again from the file, so a reconnect there
loses every domain. It only happens when the connection is really gone.
"""

import dataclasses
import queue
import threading

from oslo_log import log as logging

from nova import exception
from nova.virt import event as virtevent
from nova.virt.libvirt import binding
from nova.virt.libvirt import guest as libvirt_guest

LOG = logging.getLogger(__name__)

_STOP = object()


@dataclasses.dataclass(frozen=True)
class NodeInfo:
    arch: str
    memory_mb: int
    cpus: int
    mhz: int
    hypervisor_type: str


def lifecycle_transition(event: int, detail: int) -> int | None:
    """libvirt lifecycle event -> ``virt.event`` transition (None: ignore).
    """
    if event == binding.EVENT_STARTED:
        return virtevent.EVENT_LIFECYCLE_STARTED
    if event == binding.EVENT_SUSPENDED:
        return virtevent.EVENT_LIFECYCLE_PAUSED
    if event == binding.EVENT_RESUMED:
        return virtevent.EVENT_LIFECYCLE_RESUMED
    if event == binding.EVENT_PMSUSPENDED:
        return virtevent.EVENT_LIFECYCLE_SUSPENDED
    if event == binding.EVENT_STOPPED:
        if detail == binding.EVENT_STOPPED_SAVED:
            return virtevent.EVENT_LIFECYCLE_SUSPENDED
        return virtevent.EVENT_LIFECYCLE_STOPPED
    if event == binding.EVENT_CRASHED:
        return virtevent.EVENT_LIFECYCLE_STOPPED
    return None


class Host:
    """One libvirt connection, for one compute host.

    ``uri`` as in ``HostSettings.connection_uri`` (empty: the default
    ``qemu:///system``); ``host_name`` is only used in messages;
    ``lifecycle_handler(LifecycleEvent)`` is called from the dispatcher
    thread.
    """

    def __init__(self, uri: str, host_name: str, lifecycle_handler=None):
        self.uri = uri
        self.host_name = host_name
        self._lifecycle_handler = lifecycle_handler
        self._lock = threading.RLock()
        self._conn = None
        self._callback_id = None
        self._events = queue.Queue()
        self._dispatcher = None

    # -- connection --------------------------------------------------------

    def connect(self) -> None:
        """Open the connection now; ``HypervisorUnavailable`` if we cannot.
        """
        self.get_connection()

    def _open(self):
        binding.start_event_loop()
        try:
            conn = binding.open_connection(self.uri)
        except binding.Error as e:
            LOG.error('Cannot connect to libvirt at %(uri)s: %(err)s',
                      {'uri': self.uri or 'default', 'err': e})
            raise exception.HypervisorUnavailable(host=self.host_name)
        LOG.info('Connected to libvirt at %s', conn.getURI())
        if self._lifecycle_handler is not None:
            self._start_dispatcher()
            self._callback_id = conn.domainEventRegisterAny(
                None, binding.EVENT_ID_LIFECYCLE, self._on_lifecycle, None)
        try:
            conn.registerCloseCallback(self._on_close, None)
        except binding.Error:
            pass  # local drivers (test://) have no close callback
        return conn

    def _alive(self, conn) -> bool:
        try:
            return bool(conn.isAlive())
        except binding.Error:
            return False

    def get_connection(self) -> binding.virConnect:
        """The live connection, opening a new one if the old one broke."""
        with self._lock:
            if self._conn is not None and not self._alive(self._conn):
                LOG.warning('Connection to libvirt at %s is broken; '
                            'reconnecting', self.uri or 'default')
                self._drop_connection()
            if self._conn is None:
                self._conn = self._open()
            return self._conn

    def _drop_connection(self):
        conn, self._conn = self._conn, None
        callback_id, self._callback_id = self._callback_id, None
        if conn is None:
            return
        for release in (
                lambda: conn.domainEventDeregisterAny(callback_id)
                if callback_id is not None else None,
                conn.unregisterCloseCallback, conn.close):
            try:
                release()
            except binding.Error:
                pass  # already gone, or a local driver without it

    def _on_close(self, conn, reason, opaque):
        # On libvirt's event-loop thread, possibly while another thread
        # holds self._lock inside a libvirt call: take no lock here. The
        # next get_connection() sees the connection is not alive.
        LOG.warning('libvirt closed the connection to %(uri)s (reason '
                    '%(reason)s)', {'uri': self.uri, 'reason': reason})

    def close(self) -> None:
        """Close the connection and stop dispatching events."""
        with self._lock:
            self._drop_connection()
            dispatcher, self._dispatcher = self._dispatcher, None
        if dispatcher is not None:
            self._events.put(_STOP)
            dispatcher.join(timeout=5)

    def _call(self, method_name: str, *args):
        """Call a connection method; a broken connection is
        ``HypervisorUnavailable`` and is replaced on the next call."""
        conn = self.get_connection()
        try:
            return getattr(conn, method_name)(*args)
        except binding.Error as e:
            if binding.is_connection_error(e):
                with self._lock:
                    if self._conn is conn:
                        self._drop_connection()
                raise exception.HypervisorUnavailable(host=self.host_name)
            raise

    # -- events ------------------------------------------------------------

    def _start_dispatcher(self):
        if self._dispatcher is None:
            self._dispatcher = threading.Thread(
                target=self._dispatch_events,
                name='libvirt-events-%s' % self.host_name, daemon=True)
            self._dispatcher.start()

    def _on_lifecycle(self, conn, domain, event, detail, opaque):
        # On libvirt's event-loop thread: do nothing slow here.
        transition = lifecycle_transition(event, detail)
        if transition is not None:
            self._events.put(virtevent.LifecycleEvent(
                uuid=domain.UUIDString(), transition=transition))

    def _dispatch_events(self):
        while True:
            item = self._events.get()
            if item is _STOP:
                return
            try:
                self._lifecycle_handler(item)
            except Exception:
                LOG.exception('Lifecycle event handler failed',
                              instance_uuid=item.uuid)

    # -- guests ------------------------------------------------------------

    def list_guests(self) -> list[libvirt_guest.Guest]:
        """Every defined or running domain."""
        return [libvirt_guest.Guest(d, self.host_name)
                for d in self._call('listAllDomains',
                                    binding.LIST_DOMAINS_ALL)]

    def find_guest(self, uuid: str) -> libvirt_guest.Guest | None:
        try:
            return libvirt_guest.Guest(
                self._call('lookupByUUIDString', uuid), self.host_name)
        except binding.Error as e:
            if binding.error_code(e) == binding.ERR_NO_DOMAIN:
                return None
            raise exception.InternalError(err=str(e))

    def get_guest(self, uuid: str) -> libvirt_guest.Guest:
        guest = self.find_guest(uuid)
        if guest is None:
            raise exception.InstanceNotFound(instance_id=uuid)
        return guest

    def define_guest(self, xml: str) -> libvirt_guest.Guest:
        """Define (or redefine) a domain; libvirt validates the XML against
        its schema first."""
        try:
            domain = self._call('defineXMLFlags', xml,
                                binding.DEFINE_VALIDATE)
        except binding.Error as e:
            raise exception.InternalError(
                err='libvirt refused the domain definition: %s'
                    % (e.get_error_message() or e))
        return libvirt_guest.Guest(domain, self.host_name)

    # -- the node ----------------------------------------------------------

    def get_node_info(self) -> NodeInfo:
        arch, memory_mb, cpus, mhz = self._call('getInfo')[:4]
        return NodeInfo(arch=arch, memory_mb=memory_mb, cpus=cpus, mhz=mhz,
                        hypervisor_type=self._call('getType'))
