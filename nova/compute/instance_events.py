"""Waiting for external events about instances (network-vif-plugged).

The network backend reports that a port is bound on a host with an external
event (``os-server-external-events`` in the REST API). The compute manager
delivers it here with ``deliver``; a virt driver waits for it through
``VirtAPI.wait_for_instance_event``, which ``ComputeVirtAPI`` implements on
top of this registry.

The waiter is registered before the driver plugs anything, so an event that
arrives before the driver starts waiting is kept, not lost. An event nobody
waits for is dropped with a log line, as Nova does.
"""

import contextlib
import threading
import time

from oslo_log import log as logging

from nova import exception
from nova.model import external_event
from nova.virt import virtapi

LOG = logging.getLogger(__name__)


class _Waiter:
    def __init__(self, keys):
        self.pending = set(keys)
        self.received = {}
        self.done = threading.Event()
        # Why the wait was given up (a delete, the service stopping).
        self.cancelled = None
        self.deleted = False

    def cancel(self, reason, deleted=False):
        self.cancelled = reason
        self.deleted = deleted
        self.done.set()

    def receive(self, event):
        if event.key not in self.pending:
            return False
        self.pending.discard(event.key)
        self.received[event.key] = event
        if not self.pending:
            self.done.set()
        return True


class InstanceEvents:
    """Registry of waiters, keyed by instance UUID."""

    def __init__(self):
        self._lock = threading.Lock()
        self._waiters = {}
        # Set by cancel_everything: why no wait can succeed any more.
        self._closed = None

    def prepare(self, instance_uuid, keys):
        waiter = _Waiter(keys)
        with self._lock:
            closed = self._closed
            if closed is None:
                self._waiters.setdefault(instance_uuid, []).append(waiter)
        if closed is not None:
            # An operation that got past its plugging while the service
            # stopped must not then wait the whole vif_plugging_timeout.
            waiter.cancel(closed)
        return waiter

    def forget(self, instance_uuid, waiter):
        with self._lock:
            waiters = self._waiters.get(instance_uuid, [])
            if waiter in waiters:
                waiters.remove(waiter)
            if not waiters:
                self._waiters.pop(instance_uuid, None)

    def deliver(self, event):
        """Hand an event to whoever waits for it; False if nobody does."""
        with self._lock:
            for waiter in self._waiters.get(event.instance_uuid, []):
                if waiter.receive(event):
                    return True
        LOG.debug('No waiter for event %(name)s-%(tag)s',
                  {'name': event.name, 'tag': event.tag},
                  instance_uuid=event.instance_uuid)
        return False

    def cancel_all(self, instance_uuid):
        """Give up every wait of an instance that is being deleted.

        The waiters raise ``UnexpectedDeletingTaskStateError``, as an
        operation that finds its instance deleted does: it cleans up what
        it made and records no fault (nothing failed; the delete owns the
        instance now).
        """
        with self._lock:
            waiters = self._waiters.pop(instance_uuid, [])
        for waiter in waiters:
            waiter.cancel('the instance is deleted', deleted=True)

    def cancel_everything(self, reason='the compute service is stopping'):
        """Give up every wait of every instance (service stop).

        The operations that waited fail at once and clean up as the
        cleanup contract says, instead of holding the stop for up to
        ``vif_plugging_timeout``. Waits prepared afterwards are cancelled
        at once: an operation that was between steps when the stop came
        must not start a fresh wait the stop would then sit behind.
        """
        with self._lock:
            self._closed = reason
            waiters = [w for ws in self._waiters.values() for w in ws]
            self._waiters.clear()
        for waiter in waiters:
            waiter.cancel(reason)


class ComputeVirtAPI(virtapi.VirtAPI):
    """The manager's side of ``VirtAPI``."""

    def __init__(self, events=None):
        self.events = events or InstanceEvents()

    @contextlib.contextmanager
    def wait_for_instance_event(self, instance, event_names, deadline=300,
                                error_callback=None):
        keys = [tuple(n) if isinstance(n, (tuple, list)) else (n, None)
                for n in event_names]
        if not keys:
            yield
            return
        waiter = self.events.prepare(instance.uuid, keys)
        try:
            yield
            started = time.monotonic()
            if not waiter.done.wait(timeout=deadline):
                LOG.warning('Timed out after %(secs)s s waiting for '
                            '%(events)s', {'secs': deadline,
                                           'events': sorted(waiter.pending,
                                                            key=str)},
                            instance=instance)
                raise TimeoutError(
                    'timed out waiting for %s' % sorted(waiter.pending,
                                                        key=str))
            if waiter.deleted:
                raise exception.UnexpectedDeletingTaskStateError(
                    instance_uuid=instance.uuid, expected='events',
                    actual='deleting')
            if waiter.cancelled is not None:
                raise exception.InstanceEventsCancelled(
                    instance_uuid=instance.uuid, reason=waiter.cancelled)
            LOG.debug('Events %(events)s arrived after %(secs).3f s',
                      {'events': keys, 'secs': time.monotonic() - started},
                      instance=instance)
        finally:
            self.events.forget(instance.uuid, waiter)
        for key in keys:
            event = waiter.received.get(key)
            if event is not None and \
                    event.status == external_event.STATUS_FAILED:
                if error_callback is None:
                    raise exception.VirtualInterfaceCreateException()
                error_callback(event.name, instance)
