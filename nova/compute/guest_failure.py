"""A guest that stopped without nova stopping it: its QEMU died (libvirt
says ``STOPPED_FAILED`` or ``CRASHED``), someone destroyed it behind
nova's back, or its own OS shut it down.

The lifecycle event's power sync (``power_sync``) calls this once it read
the guest's power state. An ACTIVE instance with no task in progress
whose guest is off ends STOPPED, as Nova's power sync decides (nova did
not stop it, so no operation will say so; the guest is already off, so
nothing is left to stop). Unless the guest's own OS shut it down (what
its user asked for), the stop is recorded as an instance failure
(``objects.HaInstanceFailure``) in the database, where the region's
nova-hamonitor finds it: Masakari, or the monitor itself, starts the
instance again.

The instance is saved first, by compare-and-swap on its states: an
operation that began meanwhile (a stop, a delete) wins and nothing is
recorded. A compute host that dies between the two writes leaves a
STOPPED instance with no failure: it is not restarted automatically.
"""

from oslo_log import log as logging

from nova import exception
from nova.model import power_state
from nova.model import vm_states
from nova import objects

LOG = logging.getLogger(__name__)

OFF = frozenset((power_state.SHUTDOWN, power_state.CRASHED))
# Stops that are not failures: the guest's OS shut it down, or it was
# saved or moved (those come with an operation in progress).
NOT_FAILURES = frozenset(('STOPPED_SHUTDOWN', 'STOPPED_SAVED',
                          'STOPPED_MIGRATED', 'STOPPED_FROM_SNAPSHOT'))


def stopped_by_itself(host: str, context, instance, current: int,
                      detail: str) -> bool:
    """``instance`` (this host's, just read, no task in progress) got a
    stop event with ``detail``, its guest now in power state ``current``:
    whether it was an unexpected stop (the instance is now STOPPED)."""
    if instance.vm_state != vm_states.ACTIVE or current not in OFF:
        return False
    instance.vm_state = vm_states.STOPPED
    try:
        instance.save(expected_vm_state=[vm_states.ACTIVE],
                      expected_task_state=[None])
    except (exception.UnexpectedTaskStateError,
            exception.InstanceNotFound):
        LOG.debug('An operation started meanwhile; it decides the '
                  'vm_state', instance=instance)
        return False
    if detail in NOT_FAILURES:
        LOG.warning('Guest stopped by itself (%s); the instance is now '
                    'stopped', detail, instance=instance)
        return True
    failure = objects.HaInstanceFailure.record(
        context, instance.uuid, host, detail or 'STOPPED')
    LOG.warning('Guest failed (%(detail)s) without nova stopping it; the '
                'instance is now stopped, failure %(id)s recorded for '
                'nova-hamonitor', {'detail': failure.event,
                                   'id': failure.id}, instance=instance)
    return True
