"""The one table of instance state transitions.

Each operation of the lifecycle has one row: from which vm_states and
task_states it may start, the task_state it holds while it runs, and the
vm_state it leaves on success and on failure. The API layer checks requests
against it, the manager uses it to set and clear states, and tests read it
as the specification. ``KEEP`` means "the vm_state the instance had when the
operation started" (a failed stop leaves an active instance active);
``KEEP_OR_RECOVER`` keeps it too but turns ERROR into ACTIVE (a successful
evacuation leaves a stopped instance stopped and a broken one running).
``evacuate_stopped`` is the evacuation of microversion 2.95 and later: it
starts from the same states as ``evacuate`` and ends STOPPED.

The failure column follows the cleanup contract (doc/source/cleanup.rst,
"Operation by operation"): a failed start leaves the instance STOPPED with
its disks, a failed resume leaves it SUSPENDED, a failed unpause PAUSED
(the guest keeps its memory either way), a failed snapshot or
backup leaves the vm_state as it was, a failed spawn, hard
reboot, rebuild or evacuation leaves it ERROR with a fault.
"""

import dataclasses

from nova import exception
from nova.model import task_states as ts
from nova.model import vm_states as vs

KEEP = object()
# Like KEEP, except that an instance that was in ERROR comes out ACTIVE: a
# rebuild or evacuation that succeeded has replaced the broken guest with a
# healthy one (a stopped instance stays stopped).
KEEP_OR_RECOVER = object()


@dataclasses.dataclass(frozen=True)
class Transition:
    action: str
    from_vm_states: frozenset
    from_task_states: frozenset
    task_state: str | None
    on_success: object
    on_failure: object
    # Task states the operation moves on to while it runs (a rebuild's
    # rebuild_spawning): its end is saved from any of them.
    later_task_states: frozenset = frozenset()

    @property
    def running_task_states(self) -> list:
        return [self.task_state, *sorted(self.later_task_states)]

    def allows(self, vm_state, task_state):
        return (vm_state in self.from_vm_states
                and task_state in self.from_task_states)

    def vm_state_after(self, succeeded, original_vm_state):
        target = self.on_success if succeeded else self.on_failure
        if target is KEEP_OR_RECOVER:
            return (vs.ACTIVE if original_vm_state == vs.ERROR
                    else original_vm_state)
        return original_vm_state if target is KEEP else target


def _t(action, from_vm, from_task, task_state, on_success, on_failure,
       later=()):
    return Transition(action, frozenset(from_vm), frozenset(from_task),
                      task_state, on_success, on_failure, frozenset(later))


_IDLE = (None,)
# A snapshot or backup copies the root disk of a guest in any of these;
# the guest goes on as it was (a running one is paused for the copy).
_IMAGE_FROM_VM_STATES = (vs.ACTIVE, vs.STOPPED, vs.PAUSED, vs.SUSPENDED)
_IMAGE_LATER_TASKS = (ts.IMAGE_PENDING_UPLOAD, ts.IMAGE_UPLOADING)
_HARD_REBOOT_FROM_TASKS = (None, ts.REBOOTING, ts.REBOOT_PENDING,
                           ts.REBOOT_STARTED, ts.REBOOTING_HARD,
                           ts.REBOOT_PENDING_HARD, ts.REBOOT_STARTED_HARD)

# Each row: action, from vm_states, from task_states,
#           task_state while running, vm_state on success, on failure.
TRANSITIONS = {t.action: t for t in (
    _t('build', (vs.BUILDING,), (None, ts.SCHEDULING),
       ts.SPAWNING, vs.ACTIVE, vs.ERROR),
    _t('stop', (vs.ACTIVE, vs.ERROR), _IDLE,
       ts.POWERING_OFF, vs.STOPPED, KEEP),
    _t('start', (vs.STOPPED,), _IDLE,
       ts.POWERING_ON, vs.ACTIVE, vs.STOPPED),
    _t('reboot_soft', (vs.ACTIVE,), _IDLE,
       ts.REBOOTING, vs.ACTIVE, vs.ERROR),
    _t('reboot_hard',
       (vs.ACTIVE, vs.STOPPED, vs.PAUSED, vs.SUSPENDED, vs.ERROR),
       _HARD_REBOOT_FROM_TASKS,
       ts.REBOOTING_HARD, vs.ACTIVE, vs.ERROR),
    _t('suspend', (vs.ACTIVE,), _IDLE,
       ts.SUSPENDING, vs.SUSPENDED, KEEP),
    _t('resume', (vs.SUSPENDED,), _IDLE,
       ts.RESUMING, vs.ACTIVE, vs.SUSPENDED),
    # A paused guest keeps its memory and its disks open in a QEMU that
    # runs no vCPU. From PAUSED the reference allows unpause, hard reboot
    # (which ends ACTIVE), snapshot, backup and delete; stop, suspend,
    # rebuild and evacuation answer 409 as in Nova.
    _t('pause', (vs.ACTIVE,), _IDLE,
       ts.PAUSING, vs.PAUSED, KEEP),
    _t('unpause', (vs.PAUSED,), _IDLE,
       ts.UNPAUSING, vs.ACTIVE, vs.PAUSED),
    _t('rebuild', (vs.ACTIVE, vs.STOPPED, vs.ERROR), _IDLE,
       ts.REBUILDING, KEEP_OR_RECOVER, vs.ERROR, later=(ts.REBUILD_SPAWNING,)),
    _t('evacuate', (vs.ACTIVE, vs.STOPPED, vs.ERROR), _IDLE,
       ts.REBUILDING, KEEP_OR_RECOVER, vs.ERROR,
       later=(ts.REBUILD_SPAWNING,)),
    # An evacuation requested at microversion 2.95 or later: the guest is
    # spawned powered off, whatever it was before, and the instance ends
    # STOPPED on its new host (the operator starts it when ready).
    _t('evacuate_stopped', (vs.ACTIVE, vs.STOPPED, vs.ERROR), _IDLE,
       ts.REBUILDING, vs.STOPPED, vs.ERROR,
       later=(ts.REBUILD_SPAWNING,)),
    # createImage and createBackup: the vm_state never changes, failed or
    # not (a failed snapshot deletes its image, the server is unharmed).
    _t('snapshot', _IMAGE_FROM_VM_STATES, _IDLE,
       ts.IMAGE_SNAPSHOT, KEEP, KEEP, later=_IMAGE_LATER_TASKS),
    _t('backup', _IMAGE_FROM_VM_STATES, _IDLE,
       ts.IMAGE_BACKUP, KEEP, KEEP, later=_IMAGE_LATER_TASKS),
    _t('delete', vs.ALL - {vs.DELETED}, ts.ALL | {None},
       ts.DELETING, vs.DELETED, vs.ERROR),
    # Run by init_host for guests that were running before the host went
    # down. It holds powering-on while the guest starts, so that an
    # evacuation accepted meanwhile (the service still reads as down)
    # loses its compare-and-swap instead of a second guest starting.
    _t('resume_on_host_boot', (vs.ACTIVE,), _IDLE,
       ts.POWERING_ON, vs.ACTIVE, vs.ERROR),
)}


def get(action):
    try:
        return TRANSITIONS[action]
    except KeyError:
        raise exception.InvalidInput(reason='unknown action %s' % action)


def check(instance, action):
    """Raise InstanceInvalidState unless ``action`` may start on ``instance``.

    Returns the Transition, so callers can go on with::

        transition = states.check(instance, 'start')
        instance.task_state = transition.task_state
        instance.save(expected_task_state=None)
    """
    transition = get(action)
    if instance.vm_state not in transition.from_vm_states:
        raise exception.InstanceInvalidState(
            instance_uuid=instance.uuid, attr='vm_state',
            state=instance.vm_state, method=action)
    if instance.task_state not in transition.from_task_states:
        raise exception.InstanceInvalidState(
            instance_uuid=instance.uuid, attr='task_state',
            state=instance.task_state, method=action)
    return transition


def expected_task_states(action):
    """Task states a compare-and-swap save for ``action`` may start from."""
    return tuple(get(action).from_task_states)
