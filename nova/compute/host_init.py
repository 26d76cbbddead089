"""Reconciling a host's instances when its compute service starts.

``init_host`` runs before the service takes requests. For each instance the
database places on this host (and only those: an instance recorded on
another host is never started here), with the hypervisor's view:

* left mid-build (vm_state ``building`` or a build task state): ERROR with
  a fault; what the dead build created was removed already, from its
  journal (``recovery.py``), so the instance can be rebuilt;
* left ``deleting``: the delete is finished;
* left ``powering-off``: the stop is finished;
* left in another operation we run (powering-on, rebooting, suspending,
  resuming, pausing, unpausing): task_state cleared and the vm_state set
  to what the hypervisor shows; a fault when that is not what the
  operation would have reached, so a cut-short start is never reported
  as a success;
* left ``rebuilding`` by a rebuild on this host: ERROR with a fault (the
  new disks the dead attempt made are gone, from its journal); an
  evacuation away from this host that is still in progress never gets
  here (``evacuation.py`` reports it), and one to this host is ended by
  ``evacuation.fail_interrupted_evacuations``;
* idle: the power state is recorded (a PAUSED instance whose guest is
  paused needs nothing: it is never unpaused, stopped or started here);
  with ``resume_guests_state_on_host_boot``, an ACTIVE guest that does
  not run is started with ``driver.resume_state_on_host_boot`` (ERROR
  with a fault, disks kept, when that fails).

Domains of instances the database does not place here are reported, never
started and never deleted here.

The list is read in one query, and the power states of every domain in
one driver call (``driver.get_power_states()``: two libvirt calls however
many guests there are); an instance whose recorded state already matches
what the hypervisor shows, with no task left over, needs nothing and
costs nothing more, so a host that restarts with all its guests as they
were issues a number of statements that does not grow with them.

The list was read once, and the service counts as down meanwhile, so an
evacuation may move an instance away before its turn comes: each instance
that needs an action is read again under its lock first, and every save
and claim below also checks in its ``UPDATE`` that the row still places it
here. One that moved (``InstanceNotOnThisHost``) is skipped: no fault, no
state change.
"""

from oslo_log import log as logging

from nova.compute import actions
from nova.compute import delete
from nova.compute import operation
from nova.compute import power
from nova.compute import states
from nova import context as nova_context
from nova import exception
from nova.model import power_state
from nova.model import task_states as ts
from nova.model import vm_states as vs
from nova import objects

LOG = logging.getLogger(__name__)

RESUME_ON_HOST_BOOT = operation.Operation(
    'resume_on_host_boot', 'resume_on_host_boot',
    'compute_resume_state_on_host_boot')

BUILD_TASKS = frozenset((ts.SCHEDULING, ts.BLOCK_DEVICE_MAPPING,
                         ts.NETWORKING, ts.SPAWNING))
REBUILD_TASKS = frozenset((ts.REBUILDING, ts.REBUILD_BLOCK_DEVICE_MAPPING,
                           ts.REBUILD_SPAWNING))

# The operation (states.py row) each task state belongs to, for the
# operations whose end is decided from the hypervisor's view.
_TASK_OPERATION = {
    ts.POWERING_ON: 'start',
    ts.REBOOTING: 'reboot_soft',
    ts.REBOOT_PENDING: 'reboot_soft',
    ts.REBOOT_STARTED: 'reboot_soft',
    ts.REBOOTING_HARD: 'reboot_hard',
    ts.REBOOT_PENDING_HARD: 'reboot_hard',
    ts.REBOOT_STARTED_HARD: 'reboot_hard',
    ts.SUSPENDING: 'suspend',
    ts.RESUMING: 'resume',
    ts.PAUSING: 'pause',
    ts.UNPAUSING: 'unpause',
    # A snapshot's image stays queued (Nova's): its owner deletes it.
    ts.IMAGE_SNAPSHOT: 'snapshot',
    ts.IMAGE_BACKUP: 'backup',
    ts.IMAGE_PENDING_UPLOAD: 'snapshot',
    ts.IMAGE_UPLOADING: 'snapshot',
}

# The vm_state that matches what the hypervisor shows; anything else
# (no domain at all) is ERROR.
_VM_STATE_OF_POWER_STATE = {
    power_state.RUNNING: vs.ACTIVE,
    power_state.PAUSED: vs.PAUSED,
    power_state.SUSPENDED: vs.SUSPENDED,
    power_state.SHUTDOWN: vs.STOPPED,
    power_state.CRASHED: vs.STOPPED,
}


def needs_action(instance, power_states, resume_guests) -> bool:
    """Whether reconciling ``instance`` can change anything, judged from
    the list read at start and the hypervisor's ``power_states``
    (``driver.get_power_states()``): a task or build left over, a power
    state that differs from the recorded one, or (``resume_guests``) an
    ACTIVE guest that does not run. The others, an idle host's every
    instance, cost no statement and no hypervisor call."""
    current = power_states.get(instance.uuid, power_state.NOSTATE)
    return (instance.task_state is not None
            or instance.vm_state == vs.BUILDING
            or current != instance.power_state
            or (resume_guests and instance.vm_state == vs.ACTIVE
                and current != power_state.RUNNING))


def init_instances(compute, runner, instances, do_not_touch=frozenset(),
                   power_states=None):
    """Reconcile each instance that needs it (``needs_action``); one
    failing does not stop the others. ``power_states``: the driver's, read
    once (read here when not given)."""
    if power_states is None:
        power_states = compute.driver.get_power_states()
    resume_guests = compute.settings.resume_guests_state_on_host_boot
    for instance in instances:
        if instance.uuid in do_not_touch:
            LOG.info('Left alone at start: another workflow owns it',
                     instance=instance)
            continue
        if not needs_action(instance, power_states, resume_guests):
            continue
        # Each instance gets its own request id, hence its own action.
        context = nova_context.get_admin_context()
        try:
            init_instance(compute, runner, context, instance)
        except exception.InstanceNotOnThisHost as e:
            LOG.warning('Moved to another host during init_host; not '
                        'touching it: %s', e, instance=instance)
        except Exception:
            LOG.exception('Could not reconcile the instance at start',
                          instance=instance)


def init_instance(compute, runner, context, instance):
    try:
        with runner.locks.lock(instance.uuid):
            instance.refresh()
    except exception.InstanceNotFound:
        LOG.info('Gone from the database; not touching it',
                 instance=instance)
        return
    task = instance.task_state
    if instance.deleted:
        LOG.info('Deleted meanwhile; not touching it', instance=instance)
    elif instance.host != compute.host:
        LOG.warning('Instance belongs to host %s; not touching it',
                    instance.host, instance=instance)
    elif instance.vm_state == vs.BUILDING or task in BUILD_TASKS:
        _interrupted(compute, runner, context, instance, 'build',
                     force_error=True)
    elif task == ts.DELETING:
        LOG.info('Finishing the delete left by a restart', instance=instance)
        delete.terminate(runner, compute, context, instance)
    elif task == ts.POWERING_OFF:
        LOG.info('Finishing the stop left by a restart', instance=instance)
        runner.run(context, instance, power.STOP,
                   lambda: power.stop(compute, instance))
    elif task in REBUILD_TASKS:
        _interrupted(compute, runner, context, instance, 'rebuild',
                     force_error=True)
    elif task is not None:
        _interrupted(compute, runner, context, instance,
                     _TASK_OPERATION.get(task))
    else:
        _idle(compute, runner, context, instance)


def _interrupted(compute, runner, context, instance, action,
                 force_error=False):
    """End an operation a restart cut short, as the hypervisor shows it."""
    with runner.locks.lock(instance.uuid):
        task = instance.task_state
        current = operation.current_power_state(compute.driver, instance)
        if force_error:
            vm_state = vs.ERROR
        else:
            vm_state = _VM_STATE_OF_POWER_STATE.get(current, vs.ERROR)
        success = None
        if action is not None:
            success = states.get(action).vm_state_after(True,
                                                        instance.vm_state)
        instance.vm_state = vm_state
        instance.task_state = None
        instance.power_state = current
        instance.save(expected_task_state=[task],
                      expected_host=[compute.host])
        shown = power_state.STATE_MAP.get(current)
        LOG.warning('%(task)s was cut short by a restart; now %(vm)s (guest '
                    '%(power)s)', {'task': task, 'vm': vm_state,
                                   'power': shown}, instance=instance)
        if vm_state != success:
            actions.record_fault(
                context, instance,
                exception.OperationInterrupted(
                    operation=action or task, host=compute.host,
                    power_state=shown),
                compute.host)


def _idle(compute, runner, context, instance):
    with runner.locks.lock(instance.uuid):
        current = operation.current_power_state(compute.driver, instance)
        if current != instance.power_state:
            instance.power_state = current
            instance.save(expected_task_state=[None],
                          expected_host=[compute.host])
    if instance.vm_state != vs.ACTIVE or current == power_state.RUNNING:
        return
    if not compute.settings.resume_guests_state_on_host_boot:
        LOG.warning('Instance is active but its guest is %s; not starting '
                    'it (resume_guests_state_on_host_boot is off)',
                    power_state.STATE_MAP.get(current), instance=instance)
        return
    LOG.info('Starting the guest that ran before the host went down',
             instance=instance)
    runner.run(context, instance, RESUME_ON_HOST_BOOT,
               lambda: compute.driver.resume_state_on_host_boot(
                   context, instance, instance.network_info))


def report_foreign_domains(compute, context, instances, domains=None):
    """Log domains here of instances the database does not place here
    (``domains``: their UUIDs, listed by the driver when not given)."""
    own = {instance.uuid for instance in instances}
    if domains is None:
        domains = compute.driver.list_instance_uuids()
    for uuid in domains:
        if uuid in own:
            continue
        try:
            instance = objects.Instance.get_by_uuid(context, uuid,
                                                    read_deleted='yes')
        except exception.InstanceNotFound:
            LOG.warning('Domain of an instance unknown to the database; '
                        'not touching it', instance_uuid=uuid)
            continue
        if instance.deleted:
            LOG.warning('Domain of a deleted instance; not touching it',
                        instance=instance)
        else:
            LOG.warning('Domain of an instance of host %s; not starting it',
                        instance.host, instance=instance)
