"""Keeping the recorded power_state in step with the hypervisor.

The driver reports lifecycle events (a guest stopped, started); the
manager then reads the guest's state from the driver, since events may
arrive late or out of order, and records it. An instance with an
operation in progress is left alone: the operation records the power state
when it ends. The instance lock is only tried, never waited for, on the
hypervisor's event thread: an operation holding the lock (a build waiting
for its VIFs) would hold up every other event. A power state an event
could not record then is caught by the periodic power sync; a stop event
is handled again once the operation let go of the instance, in a thread
of its own (the periodic sync never stops an instance, so a guest that
died during, say, a snapshot would otherwise stay ACTIVE and off, its
failure never recorded).

An instance left in ERROR on this host by an evacuation that failed
(refused, typically: a lease held by the guest running here) while its
guest runs here is ACTIVE again: this host was cut off, not dead, and
the database never placed the instance anywhere else.

A stop event for an ACTIVE instance whose guest is now off is a guest
that stopped without nova (``guest_failure``): the instance ends STOPPED
and, unless its own OS shut it down, the failure is recorded for
nova-hamonitor. Without an event (the periodic sync) the vm_state is
never changed: a guest found off is reported, not stopped.
"""

import threading

from oslo_log import log as logging

from nova.compute import evacuation_states
from nova.compute import guest_failure
from nova.compute import operation
from nova import exception
from nova.model import power_state
from nova.model import vm_states
from nova import objects
from nova.virt import event as virtevent

LOG = logging.getLogger(__name__)


def sync_power_state(compute, instance_locks, context, instance_uuid,
                     event=None):
    """Record the driver's power state of one instance of this host.

    ``instance_locks``: the manager's ``locks.InstanceLocks``; ``event``:
    the ``virt.event.LifecycleEvent`` that asked for it, if one did.
    Returns the instance, or None when there was nothing to update.
    """
    with instance_locks.lock_if_free(instance_uuid) as held:
        if held:
            return _sync_locked(compute, context, instance_uuid, event)
    if _is_stop(event):
        LOG.debug('An operation holds the instance; its stop event is '
                  'handled once it lets go', instance_uuid=instance_uuid)
        threading.Thread(
            target=_sync_after_operation, daemon=True,
            name='stop-event-%s' % instance_uuid,
            args=(compute, instance_locks, context, instance_uuid,
                  event)).start()
    else:
        LOG.debug('An operation holds the instance; it records the power '
                  'state', instance_uuid=instance_uuid)
    return None


def _is_stop(event) -> bool:
    return (event is not None
            and event.transition == virtevent.EVENT_LIFECYCLE_STOPPED)


def _sync_after_operation(compute, instance_locks, context, instance_uuid,
                          event) -> None:
    """The sync of a stop event that came while an operation held the
    instance, once it let go: what the operation left (a stopped or
    deleted instance, a guest running again) decides, as for any event."""
    try:
        with instance_locks.lock(instance_uuid):
            _sync_locked(compute, context, instance_uuid, event)
    except Exception:
        LOG.exception('Could not handle the stop event %s', event.name,
                      instance_uuid=instance_uuid)


def _sync_locked(compute, context, instance_uuid, event=None):
    try:
        instance = objects.Instance.get_by_uuid(context, instance_uuid)
    except exception.InstanceNotFound:
        LOG.debug('Lifecycle event for an instance not in the database',
                  instance_uuid=instance_uuid)
        return None
    if instance.host != compute.host:
        LOG.debug('Lifecycle event for an instance of host %s; ignored',
                  instance.host, instance=instance)
        return None
    if instance.task_state is not None:
        LOG.debug('Task %s in progress; it records the power state',
                  instance.task_state, instance=instance)
        return None
    current = operation.current_power_state(compute.driver, instance)
    if runs_after_failed_evacuation(instance, current):
        return active_again(instance, current)
    # Why the guest stopped, when a stop event asked for this sync.
    stop = event.detail if _is_stop(event) else None
    if current == instance.power_state:
        # The periodic sync may have recorded the power state first.
        if stop is not None and guest_failure.stopped_by_itself(
                compute.host, context, instance, current, stop):
            return instance
        return None
    instance.power_state = current
    try:
        instance.save(expected_task_state=[None])
    except (exception.UnexpectedTaskStateError, exception.InstanceNotFound):
        # Only the API (which does not take the lock) gets here.
        LOG.debug('An operation started meanwhile; not recording the power '
                  'state', instance=instance)
        return None
    if stop is not None and guest_failure.stopped_by_itself(
            compute.host, context, instance, current, stop):
        return instance
    if instance.vm_state == vm_states.ACTIVE and current in (
            power_state.SHUTDOWN, power_state.CRASHED, power_state.NOSTATE):
        LOG.warning('Guest is %s although the instance is active',
                    power_state.STATE_MAP.get(current), instance=instance)
    return instance


def runs_after_failed_evacuation(instance, current) -> bool:
    """Whether ``instance`` is in ERROR only because an evacuation away
    from this host failed (or was refused: its disk was in use, here),
    while its guest runs here: the host was cut off, not dead. The
    database still places the instance on this host, and the failed
    evacuation undid what it made elsewhere."""
    return (instance.vm_state == vm_states.ERROR
            and current == power_state.RUNNING
            and (instance.system_metadata or {}).get(
                evacuation_states.OLD_VM_STATE) == vm_states.ACTIVE)


def active_again(instance, current):
    """ACTIVE again, as it was before the evacuation: a change of the
    database alone (the guest runs on untouched), by compare-and-swap on
    the host, the task and the ERROR, so that an evacuation or a
    reset-state that got in first wins. The instance, or None when one
    did. Both syncs (an event's, the periodic one) call it."""
    instance.vm_state = vm_states.ACTIVE
    instance.power_state = current
    instance.system_metadata.pop(evacuation_states.OLD_VM_STATE)
    try:
        instance.save(expected_task_state=[None],
                      expected_vm_state=[vm_states.ERROR],
                      expected_host=instance.host)
    except (exception.UnexpectedTaskStateError, exception.InstanceNotFound):
        LOG.debug('Changed meanwhile; not making it ACTIVE again',
                  instance=instance)
        return None
    LOG.warning('The guest runs here although an evacuation of it failed '
                '(this host was cut off, not down): ACTIVE again',
                instance=instance)
    return instance
