"""The connection to one host's libvirt, and what it says about the host.

``Host`` owns the ``virConnect``: it opens it (``HypervisorUnavailable``
when libvirtd is not there), notices when it broke (libvirtd stopped,
crashed or restarted) and opens a new one on the next call, and turns
libvirt's lifecycle events into ``virt.event.LifecycleEvent`` values for
the driver.

While libvirtd is down every call raises ``HypervisorUnavailable`` at
once (opening a connection to a socket nobody listens on fails in well
under a millisecond), never a raw ``libvirtError``; once it is back, the
next call reconnects, registers the event callbacks again and works. A
daemon that accepts the connection but never answers (hung) cannot hold a
caller for long either: opening is bounded by ``open_timeout`` and an open
connection sends keepalives, so libvirt declares it dead after
``KEEPALIVE_INTERVAL * (KEEPALIVE_COUNT + 1)`` seconds of silence.

Releasing a connection deregisters the lifecycle callback, unregisters
the close callback and closes it: libvirt holds a reference on a
connection for each registered callback, so a connection whose callbacks
stay registered is never really closed.

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
import weakref

from oslo_log import log as logging

from nova import exception
from nova.virt import event as virtevent
from nova.virt.libvirt import binding
from nova.virt.libvirt import guest as libvirt_guest

LOG = logging.getLogger(__name__)

_STOP = object()

# Seconds to wait for libvirt to accept a new connection. A stopped
# libvirtd refuses at once; this only bounds a hung one.
OPEN_TIMEOUT = 10.0
# Keepalive on open connections (libvirt's own defaults): a daemon that
# stops answering is declared gone after about 20 s.
KEEPALIVE_INTERVAL = 5
KEEPALIVE_COUNT = 3


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


def stop_detail(event: int, detail: int) -> str:
    """Why a guest stopped, in libvirt's words (``STOPPED_FAILED``);
    empty for an event that is no stop."""
    if event == binding.EVENT_STOPPED:
        return binding.EVENT_STOPPED_DETAILS.get(detail, 'STOPPED')
    if event == binding.EVENT_CRASHED:
        return 'CRASHED'
    return ''


class _PendingOpen:
    """``open_connection(uri)`` running in a thread of its own, so a caller
    can stop waiting for a daemon that does not answer. A connection that
    arrives after its caller gave up is kept for the next caller, or
    closed if the host was closed meanwhile (``abandon``)."""

    def __init__(self, uri: str, host_name: str):
        self.uri = uri
        self.done = threading.Event()
        self.conn = None
        self.error = None
        self._lock = threading.Lock()
        self._abandoned = False
        threading.Thread(target=self._run, daemon=True,
                         name='libvirt-open-%s' % host_name).start()

    def _run(self):
        try:
            conn = binding.open_connection(self.uri)
        except Exception as e:  # handed to the caller, who raises
            conn, self.error = None, e
        with self._lock:
            self.conn = conn
            abandoned = self._abandoned
            self.done.set()
        if abandoned and conn is not None:
            _close_quietly(conn)

    def abandon(self):
        with self._lock:
            self._abandoned = True
            conn, self.conn = self.conn, None
        if conn is not None:
            _close_quietly(conn)


def _close_quietly(conn):
    try:
        conn.close()
    except binding.Error:
        pass


def _on_close(conn, reason, host_ref):
    # On libvirt's event-loop thread, possibly while another thread holds
    # the host's lock inside a libvirt call: take no lock here. The next
    # get_connection() sees the connection is not alive. The callback
    # holds the Host only weakly, so a callback libvirt never releases
    # cannot keep the Host alive.
    host = host_ref()
    LOG.warning('libvirt closed the connection to %(uri)s (reason '
                '%(reason)s)',
                {'uri': host.uri if host is not None else '?',
                 'reason': reason})


class Host:
    """One libvirt connection, for one compute host.

    ``uri`` as in ``HostSettings.connection_uri`` (empty: the default
    ``qemu:///system``); ``host_name`` is only used in messages;
    ``lifecycle_handler(LifecycleEvent)`` is called from the dispatcher
    thread; ``open_timeout`` bounds the wait for a new connection.
    """

    def __init__(self, uri: str, host_name: str, lifecycle_handler=None,
                 open_timeout: float = OPEN_TIMEOUT):
        self.uri = uri
        self.host_name = host_name
        self.open_timeout = open_timeout
        self._lifecycle_handler = lifecycle_handler
        self._lock = threading.RLock()
        self._conn = None
        self._callback_id = None
        self._close_callback = False
        self._pending_open = None
        self._reported_down = False
        self._events: queue.Queue = queue.Queue()
        self._dispatcher = None

    # -- connection --------------------------------------------------------

    def connect(self) -> None:
        """Open the connection now; ``HypervisorUnavailable`` if we cannot.
        """
        self.get_connection()

    def is_available(self) -> bool:
        """Whether libvirt answers: the connection is alive, or a new one
        could be opened now. Cheap while the connection is alive (no call
        reaches the daemon); never raises."""
        try:
            self.get_connection()
        except exception.HypervisorUnavailable:
            return False
        return True

    def _unavailable(self, reason) -> exception.HypervisorUnavailable:
        # One error line when libvirt goes away, not one per call or
        # health check while it stays away.
        log = LOG.debug if self._reported_down else LOG.error
        self._reported_down = True
        log('Cannot connect to libvirt at %(uri)s: %(err)s',
            {'uri': self.uri or 'default', 'err': reason})
        return exception.HypervisorUnavailable(host=self.host_name)

    def _open_bounded(self):
        """A new connection, waiting at most ``open_timeout`` for it."""
        pending = self._pending_open
        if pending is None:
            pending = self._pending_open = _PendingOpen(self.uri,
                                                        self.host_name)
        if not pending.done.wait(self.open_timeout):
            # Left pending: the next caller waits for the same attempt
            # instead of piling up threads on a hung daemon.
            raise self._unavailable('no answer within %s s'
                                    % self.open_timeout)
        self._pending_open = None
        if pending.error is not None:
            raise self._unavailable(pending.error)
        return pending.conn

    def _open(self):
        binding.start_event_loop()
        conn = self._open_bounded()
        try:
            self._set_up(conn)
        except binding.Error as e:
            self._release(conn)
            raise self._unavailable('setting up the connection failed: %s'
                                    % e)
        LOG.info('Connected to libvirt at %s%s', self.uri or 'default',
                 ' again' if self._reported_down else '')
        self._reported_down = False
        return conn

    def _set_up(self, conn):
        if self._is_test_driver():
            # NOTE: the test driver keeps no keepalive and never reports a
            # close; it accepts a close callback but never releases it,
            # so none is registered there.
            self._close_callback = False
        else:
            conn.setKeepAlive(KEEPALIVE_INTERVAL, KEEPALIVE_COUNT)
            conn.registerCloseCallback(_on_close, weakref.ref(self))
            self._close_callback = True
        if self._lifecycle_handler is not None:
            self._start_dispatcher()
            self._callback_id = conn.domainEventRegisterAny(
                None, binding.EVENT_ID_LIFECYCLE, self._on_lifecycle, None)

    def _is_test_driver(self) -> bool:
        return (self.uri or '').startswith('test:')

    def _alive(self, conn) -> bool:
        try:
            return bool(conn.isAlive())
        except binding.Error:
            return False

    def _current(self):
        """(live connection, whether this call opened it)."""
        with self._lock:
            if self._conn is not None and not self._alive(self._conn):
                LOG.warning('Connection to libvirt at %s is broken; '
                            'reconnecting', self.uri or 'default')
                self._drop_connection()
            if self._conn is None:
                self._conn = self._open()
                return self._conn, True
            return self._conn, False

    def get_connection(self) -> binding.virConnect:
        """The live connection, opening a new one if the old one broke."""
        return self._current()[0]

    def _release(self, conn):
        """Deregister both callbacks, then close ``conn``.

        Each step is tried whatever the one before did: on a broken
        connection deregistering the lifecycle callback fails after
        libvirt already dropped it locally, and the close callback is
        gone once libvirt fired it.
        """
        callback_id, self._callback_id = self._callback_id, None
        close_callback, self._close_callback = self._close_callback, False
        if callback_id is not None:
            self._quietly(conn.domainEventDeregisterAny, callback_id)
        if close_callback:
            self._quietly(conn.unregisterCloseCallback)
        self._quietly(conn.close)

    @staticmethod
    def _quietly(func, *args):
        try:
            func(*args)
        except binding.Error as e:
            LOG.debug('%s: %s (connection already gone)',
                      getattr(func, '__name__', func), e)

    def _drop_connection(self):
        conn, self._conn = self._conn, None
        if conn is not None:
            self._release(conn)

    def close(self) -> None:
        """Close the connection and stop dispatching events."""
        with self._lock:
            self._drop_connection()
            pending, self._pending_open = self._pending_open, None
            dispatcher, self._dispatcher = self._dispatcher, None
        if pending is not None:
            pending.abandon()
        if dispatcher is not None:
            self._events.put(_STOP)
            dispatcher.join(timeout=5)

    def _broken(self, conn, error) -> bool:
        return binding.is_connection_error(error) or not self._alive(conn)

    def _call(self, method_name: str, *args):
        """Call a connection method.

        A connection that turns out broken is dropped and the call tried
        once more on a new one (libvirtd restarted since the last call);
        if that cannot be had, ``HypervisorUnavailable``. Other libvirt
        errors are raised as they are, for the caller to translate.
        Every method called here can be repeated safely.
        """
        while True:
            conn, fresh = self._current()
            try:
                return getattr(conn, method_name)(*args)
            except binding.Error as e:
                if not self._broken(conn, e):
                    raise
                with self._lock:
                    if self._conn is conn:
                        self._drop_connection()
                if fresh:
                    raise self._unavailable(e)
                LOG.warning('libvirt connection to %(uri)s broke (%(err)s); '
                            'trying %(call)s on a new connection',
                            {'uri': self.uri or 'default', 'err': e,
                             'call': method_name})

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
                uuid=domain.UUIDString(), transition=transition,
                detail=stop_detail(event, detail)))

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
        try:
            domains = self._call('listAllDomains', binding.LIST_DOMAINS_ALL)
        except binding.Error as e:
            raise exception.InternalError(err=str(e))
        return [libvirt_guest.Guest(d, self.host_name) for d in domains]

    def power_states(self) -> dict[str, int]:
        """{UUID: power state} of every domain, in two calls however many
        there are (their states, and which have saved memory)."""
        try:
            stats = self._call('getAllDomainStats', binding.STATS_STATE)
            saved = {domain.UUIDString() for domain in self._call(
                'listAllDomains', binding.LIST_DOMAINS_MANAGEDSAVE)}
        except binding.Error as e:
            raise exception.InternalError(err=str(e))
        states = {}
        for domain, values in stats:
            uuid = domain.UUIDString()
            states[uuid] = libvirt_guest.power_state_of(
                values.get('state.state', binding.DOMAIN_NOSTATE),
                uuid in saved)
        return states

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
        """Define (or redefine) a domain.

        NOTE: not with ``VIR_DOMAIN_DEFINE_VALIDATE``: checking the XML
        against libvirt's schema parses the whole RelaxNG grammar at each
        call, 30-40 ms of CPU per define here (libvirtd's CPU on a real
        host), the biggest step of a start. The XML comes only from the
        config objects (``nova.virt.libvirt.config``), whose golden files
        the tests validate against the schema
        (``test_golden_schema``); libvirt still refuses XML it cannot
        parse.
        """
        try:
            domain = self._call('defineXML', xml)
        except binding.Error as e:
            raise exception.InternalError(
                err='libvirt refused the domain definition: %s'
                    % (e.get_error_message() or e))
        return libvirt_guest.Guest(domain, self.host_name)

    # -- the node ----------------------------------------------------------

    def get_node_info(self) -> NodeInfo:
        try:
            arch, memory_mb, cpus, mhz = self._call('getInfo')[:4]
            hypervisor_type = self._call('getType')
        except binding.Error as e:
            raise exception.InternalError(err=str(e))
        return NodeInfo(arch=arch, memory_mb=memory_mb, cpus=cpus, mhz=mhz,
                        hypervisor_type=hypervisor_type)
