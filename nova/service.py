"""A running service: one manager served over RPC, with its service record.

``Service(host, binary, topic, manager)`` is what ``nova-compute``,
``nova-conductor`` and ``nova-all`` run. ``start()``:

1. makes sure the ``objects.Service`` row exists (created on first start;
   it reads as down until the first heartbeat);
2. opens the manager (``manager.init_host()``): a compute host records
   the storage identity of its ``instances_path`` in the row (so other
   hosts can tell whether they share storage with it even while it is
   down) and reconciles its instances before it takes any request.
   While ``init_host`` raises ``HypervisorUnavailable`` (libvirtd down)
   it is tried again after 1, 2, 4 ... up to 30 s, one log line per
   attempt, with no heartbeat (the service reads as down) and no RPC
   served; ``stop()`` or a stop signal ends the wait;
3. serves RPC on ``Target(topic=topic, server=host)`` (the manager's public
   methods, plus ``BaseEndpoint.ping`` in namespace ``baseapi``), then
   heartbeats once: a service reads as up only once it can be called;
4. heartbeats every ``report_interval`` seconds, but only while the
   driver says its hypervisor answers (``driver.is_hypervisor_available()``):
   a compute host whose libvirtd went away reads as down until it is
   back. Before each heartbeat the manager's ``update_service_record(row)``
   (if it has one) refreshes facts kept in the row, written in the same
   ``UPDATE`` (a compute host's storage identity, read live). Runs the
   manager's periodic tasks (``nova.periodic``);
5. starts its companions (objects with ``start()``/``stop()``, such as the
   network agent of a compute host).

``stop()`` undoes it in reverse: companions, periodic tasks, the RPC server
(stop, then wait for messages in progress), heartbeats,
``manager.cleanup_host()``. ``run(services)`` starts services and stops
them on SIGTERM or SIGINT.

A service is up while its last heartbeat is newer than
``service_down_time`` and an operator has not forced it down
(``objects.Service.is_up``).
"""

import signal
import sys
import threading

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import excutils

from nova.conf import CONF
from nova import context as nova_context
from nova import exception
from nova import manager as nova_manager
from nova import objects
from nova import periodic
from nova import rpc

LOG = logging.getLogger(__name__)

BASE_RPC_NAMESPACE = 'baseapi'
# Waits between init_host attempts while the hypervisor is unavailable:
# doubling from the first to the last, then the last again and again.
INIT_RETRY_INITIAL = 1.0
INIT_RETRY_MAX = 30.0
BASE_RPC_VERSION = '1.0'


def prepare_service(prog, argv=None, default_transport_url=None):
    """What a service console script does first: register the options
    oslo libraries own, parse the command line and configuration files
    (``--config-file`` as usual), set up logging, open the RPC transport.

    ``default_transport_url`` changes the default of ``transport_url``
    (``nova-all``: ``inproc://``).
    """
    rpc.register_transport_opts(CONF, default_url=default_transport_url)
    logging.register_options(CONF)
    CONF(sys.argv[1:] if argv is None else argv, project='nova', prog=prog)
    logging.setup(CONF, 'nova')
    rpc.init(CONF)


def service_is_up(service_record, service_down_time=None):
    """Whether a ``objects.Service`` counts as up (heartbeat, forced_down)."""
    if service_down_time is None:
        service_down_time = CONF.service_down_time
    return service_record.is_up(service_down_time)


class BaseEndpoint:
    """RPC methods every service answers, whatever its manager."""

    target = messaging.Target(namespace=BASE_RPC_NAMESPACE,
                              version=BASE_RPC_VERSION)

    def __init__(self, service):
        self._service = service

    def ping(self, ctxt, arg=None):
        return {'host': self._service.host,
                'binary': self._service.binary, 'arg': arg}


class BaseAPI:
    """Client of ``BaseEndpoint`` (``call``: it waits for the answer)."""

    def __init__(self, topic):
        target = messaging.Target(topic=topic,
                                  namespace=BASE_RPC_NAMESPACE,
                                  version=BASE_RPC_VERSION)
        self.client = rpc.get_client(target, version_cap=BASE_RPC_VERSION)

    def ping(self, ctxt, host, arg=None, timeout=None):
        cctxt = self.client.prepare(server=host, timeout=timeout)
        return cctxt.call(ctxt, 'ping', arg=arg)


class Service:
    """One manager served over RPC under ``(host, binary)``."""

    def __init__(self, host: str, binary: str, topic: str,
                 manager: nova_manager.Manager, *,
                 report_interval=None, periodic_enable=True,
                 periodic_fuzzy_delay=None, companions=(),
                 extra_endpoints=(), init_retry_initial=INIT_RETRY_INITIAL,
                 init_retry_max=INIT_RETRY_MAX):
        self.host = host
        self.binary = binary
        self.topic = topic
        self.manager = manager
        self.report_interval = (CONF.report_interval
                                if report_interval is None
                                else report_interval)
        self.periodic_enable = periodic_enable
        self.periodic_fuzzy_delay = (CONF.periodic_fuzzy_delay
                                     if periodic_fuzzy_delay is None
                                     else periodic_fuzzy_delay)
        self.companions = list(companions)
        self.init_retry_initial = init_retry_initial
        self.init_retry_max = max(init_retry_max, init_retry_initial)
        self._started_companions = []
        self.extra_endpoints = list(extra_endpoints)
        self.service_ref = None
        self.rpc_server = None
        self.periodic = None
        self._context = nova_context.get_admin_context()
        self._heartbeat_stop = threading.Event()
        self._heartbeat_thread = None
        self._started = False
        self._stopped = threading.Event()
        # Set by stop()/request_stop(): a start() waiting for the
        # hypervisor gives up. _start_done: no start() is running.
        self._stop_requested = threading.Event()
        self._start_done = threading.Event()
        self._start_done.set()
        self._starting_thread = None
        self._hypervisor_up = True
        self._lock = threading.Lock()

    def __repr__(self):
        return '<Service %s on %s>' % (self.binary, self.host)

    # -- start ------------------------------------------------------------

    def start(self):
        """Start serving; True once serving, False if stopped first.

        Blocks while the hypervisor is unavailable (see the module
        docstring); ``stop()`` from another thread or ``request_stop()``
        ends the wait, and start() then returns False with everything
        released.
        """
        with self._lock:
            if self._started:
                raise RuntimeError('%r already started' % self)
            self._started = True
            self._stopped.clear()
            self._start_done.clear()
            self._starting_thread = threading.current_thread()
        LOG.info('Starting %(binary)s on %(host)s',
                 {'binary': self.binary, 'host': self.host})
        try:
            started = self._start()
            if not started:
                LOG.info('%(binary)s on %(host)s was stopped before it '
                         'started', {'binary': self.binary,
                                     'host': self.host})
                self.stop()
                return False
        except Exception:
            # Release what did start (RPC server, threads, the driver's
            # connection) before the error reaches the caller.
            with excutils.save_and_reraise_exception():
                LOG.error('%r failed to start', self)
                self.stop()
        finally:
            self._start_done.set()
        LOG.info('Started %(binary)s on %(host)s (topic %(topic)s)',
                 {'binary': self.binary, 'host': self.host,
                  'topic': self.topic})
        return True

    def request_stop(self):
        """Make a start() that waits for the hypervisor give up.

        Only sets an event: safe from any thread. ``stop()`` does it too.
        """
        self._stop_requested.set()

    def _init_host(self) -> bool:
        """``manager.init_host()``, again while the hypervisor is
        unavailable; False if a stop was requested first."""
        init_host = self.manager.init_host
        delay = self.init_retry_initial
        attempt = 1
        while True:
            try:
                init_host()
            except exception.HypervisorUnavailable as e:
                LOG.warning(
                    '%(binary)s on %(host)s: hypervisor unavailable '
                    '(%(err)s); the service stays down and serves '
                    'nothing; attempt %(attempt)d failed, next in '
                    '%(delay)g s', {'binary': self.binary,
                                    'host': self.host,
                                    'err': e.format_message(),
                                    'attempt': attempt, 'delay': delay})
            else:
                if attempt > 1:
                    LOG.info('%(binary)s on %(host)s: the hypervisor '
                             'answered at attempt %(attempt)d',
                             {'binary': self.binary, 'host': self.host,
                              'attempt': attempt})
                return not self._stop_requested.is_set()
            if self._stop_requested.wait(delay):
                return False
            attempt += 1
            delay = min(delay * 2, self.init_retry_max)

    def _start(self) -> bool:
        # The row exists before init_host (a manager may record facts in
        # it), but it reads as up only from the first heartbeat, after.
        self.service_ref = self._service_row()
        if not self._init_host():
            return False
        self._record_facts()

        target = messaging.Target(topic=self.topic, server=self.host)
        endpoints = [self.manager, BaseEndpoint(self)] + self.extra_endpoints
        self.rpc_server = rpc.get_server(target, endpoints)
        self.rpc_server.start()
        # Up only once it serves: RabbitMQ drops a message sent to a
        # server's topic before its queue is declared, so a caller that
        # trusted an earlier heartbeat would wait out its timeout.
        self.heartbeat()

        self._heartbeat_stop.clear()
        self._heartbeat_thread = threading.Thread(
            target=self._heartbeat_loop, daemon=True,
            name='heartbeat-%s-%s' % (self.binary, self.host))
        self._heartbeat_thread.start()

        if self.periodic_enable:
            self.periodic = periodic.PeriodicScheduler(
                periodic.tasks_of(self.manager),
                context_factory=nova_context.get_admin_context,
                fuzzy_delay=self.periodic_fuzzy_delay,
                name='periodic-%s' % self.host,
                should_run=self._hypervisor_available)
            self.periodic.start()
        for companion in self.companions:
            companion.start()
            self._started_companions.append(companion)
        return True

    def _service_row(self):
        """The service row, created on first start."""
        ctxt = self._context
        try:
            return objects.Service.get_by_host_and_binary(
                ctxt, self.host, self.binary)
        except exception.ServiceNotFound:
            pass
        record = objects.Service(ctxt, host=self.host, binary=self.binary,
                                 topic=self.topic)
        try:
            return record.create()
        except exception.ServiceTopicExists:
            # Another process created it between our read and insert.
            return objects.Service.get_by_host_and_binary(
                ctxt, self.host, self.binary)

    def _record_facts(self):
        """Write the topic as it is now.

        NOTE: forced_down is left alone: only the operator clears it. The
        storage identity is the manager's to write (``init_host`` and
        ``update_service_record``), never the service's.
        """
        # Re-read: init_host may have written to the row meanwhile.
        record = objects.Service.get_by_id(self._context,
                                           self.service_ref.id)
        record.topic = self.topic
        record.save()
        self.service_ref = record

    # -- heartbeat --------------------------------------------------------

    def _hypervisor_available(self) -> bool:
        """The manager's word on its hypervisor; logs only when the
        answer changes."""
        try:
            available = bool(self.manager.is_hypervisor_available())
        except Exception:
            LOG.exception('is_hypervisor_available of %s failed',
                          type(self.manager).__name__)
            available = False
        if available != self._hypervisor_up:
            self._hypervisor_up = available
            if available:
                LOG.info('%(binary)s on %(host)s: the hypervisor answers '
                         'again; heartbeats resume',
                         {'binary': self.binary, 'host': self.host})
            else:
                LOG.warning('%(binary)s on %(host)s: the hypervisor is '
                            'unavailable; no heartbeats (the service '
                            'reads as down) until it answers',
                            {'binary': self.binary, 'host': self.host})
        return available

    def heartbeat(self):
        """Record one heartbeat; a failure is logged, never raised.

        Skipped (False) while the hypervisor is unavailable.
        """
        if not self._hypervisor_available():
            return False
        try:
            # Facts that must stay fresh (a compute host's storage
            # identity), written in the heartbeat's UPDATE.
            self.manager.update_service_record(self.service_ref)
            self.service_ref.heartbeat()
        except Exception:
            LOG.exception('Heartbeat of %(binary)s on %(host)s failed',
                          {'binary': self.binary, 'host': self.host})
            return False
        return True

    def _heartbeat_loop(self):
        while not self._heartbeat_stop.wait(self.report_interval):
            self.heartbeat()

    # -- stop -------------------------------------------------------------

    def stop(self):
        """Stop serving and release the manager; idempotent.

        Called while another thread's start() waits for the hypervisor,
        it ends that wait and returns once start() has released
        everything.
        """
        self._stop_requested.set()
        if threading.current_thread() is not self._starting_thread:
            self._start_done.wait()
        with self._lock:
            if not self._started or self._stopped.is_set():
                return
            self._stopped.set()
        LOG.info('Stopping %(binary)s on %(host)s',
                 {'binary': self.binary, 'host': self.host})
        for companion in reversed(self._started_companions):
            self._quietly(companion.stop, 'stop %r' % companion)
        if self.periodic is not None:
            self._quietly(self.periodic.stop, 'stop periodic tasks')
        if self.rpc_server is not None:
            self._quietly(self.rpc_server.stop, 'stop the RPC server')
            # In-flight operations that wait for events would otherwise
            # hold the wait below for up to vif_plugging_timeout.
            self._quietly(self.manager.stop_waiting_for_events,
                          'cancel event waits')
            self._quietly(self.rpc_server.wait, 'wait for the RPC server')
        self._heartbeat_stop.set()
        if self._heartbeat_thread is not None:
            self._heartbeat_thread.join()
        self._quietly(self.manager.cleanup_host, 'clean up the host')
        LOG.info('Stopped %(binary)s on %(host)s',
                 {'binary': self.binary, 'host': self.host})

    def _quietly(self, func, what):
        # One failing step must not keep the others from releasing.
        try:
            func()
        except Exception:
            LOG.exception('%(service)r: failed to %(what)s',
                          {'service': self, 'what': what})

    def wait(self, timeout=None):
        """Block until ``stop()`` was called; True if it was."""
        return self._stopped.wait(timeout)


def run(services, stop_signals=(signal.SIGTERM, signal.SIGINT),
        stop_event=None):
    """Start ``services`` (anything with ``start``/``stop``), wait for a
    stop signal, stop them in reverse order. Call from the main thread.

    NOTE: an oslo.messaging threading server does not react to SIGINT
    while it stops (KeyboardInterrupt lands in a join), so the handlers
    only set an event and the main thread does the stopping.
    """
    stop_event = stop_event or threading.Event()

    def _request_stop():
        stop_event.set()
        for service in services:
            request_stop = getattr(service, 'request_stop', None)
            if request_stop is not None:
                request_stop()

    def _on_signal(signum, frame):
        LOG.info('Caught signal %s, stopping', signal.Signals(signum).name)
        # NOTE: from another thread: the main thread may hold an Event's
        # lock right now (waiting on it), and Event.set takes that lock.
        threading.Thread(target=_request_stop, daemon=True).start()

    previous = {sig: signal.signal(sig, _on_signal) for sig in stop_signals}
    started = []
    try:
        for service in services:
            if stop_event.is_set():
                break
            # Listed before start(): one that a signal interrupted while
            # waiting for its hypervisor is stopped like the others.
            started.append(service)
            service.start()
        # A timeout keeps the main thread waking up, so Python runs the
        # signal handler promptly on every platform.
        while not stop_event.wait(1.0):
            pass
    finally:
        for service in reversed(started):
            try:
                service.stop()
            except Exception:
                LOG.exception('Failed to stop %r', service)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
