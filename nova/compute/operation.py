"""How every operation of the compute manager runs.

Each one reads the same way (Ironic's conductor shape)::

    runner.run(context, instance, power.START,
               lambda: power.start(compute, context, instance))

1. take the instance's lock (``locks.InstanceLocks``);
2. record the action event (``actions.event``): it ends 'Error' with the
   exception when anything below fails;
3. validate against the one state table (``states.py``) and claim the
   instance: ``task_state`` is set by compare-and-swap, so a request that
   lost a race fails with ``UnexpectedTaskStateError`` and changes nothing.
   The same ``UPDATE`` checks that the row still places the instance on
   this host (``InstanceNotOnThisHost`` otherwise): an object read before
   an evacuation moved the instance away never runs an operation here;
   An instance whose ``task_state`` already is the operation's (the API
   set it before casting, or a crash left it there) is taken as claimed;
4. hand off to the workflow (``body``). A ``DiskLeaseHeld`` from the
   driver (libvirt refused to start a guest whose disk is in use
   elsewhere) is raised on naming the host that holds the disk, when the
   database can tell (``disk_leases.naming_holder``): the fault and the
   action event say whom to fence;
5. success: vm_state from the table, task_state cleared, power_state from
   the driver, saved by compare-and-swap on the operation's task_state.
   Failure (after the claim only): an ``InstanceFault``, vm_state from the
   table's failure column, task_state cleared, power_state from the
   driver; the exception goes on to the caller.
"""

import contextlib
import dataclasses
import typing

from oslo_log import log as logging
from oslo_utils import excutils

from nova.compute import actions
from nova.compute import disk_leases
from nova.compute import states
from nova.compute import storage_report
from nova.conf import host_settings
from nova import context as nova_context
from nova import exception
from nova.model import power_state
from nova import objects
from nova.virt import driver as virt_driver
from nova.virt import virtapi as virtapi_mod

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ComputeHost:
    """What a workflow needs of the host it runs on."""
    host: str
    settings: host_settings.HostSettings
    driver: virt_driver.ComputeDriver
    virtapi: virtapi_mod.VirtAPI
    # Whether the host's instance storage is there (None: not checked, as
    # in unit tests of workflows that never write to it).
    storage: storage_report.StorageReporter | None = None

    def check_storage_writable(self) -> None:
        if self.storage is not None:
            self.storage.check_writable()


@dataclasses.dataclass(frozen=True)
class Operation:
    """One manager operation: its row in states.py and its audit names."""
    transition: str             # action of states.TRANSITIONS
    action: str                 # InstanceAction.action ('start', ...)
    event: str                  # event name, Nova's 'compute_<method>'


def current_power_state(driver, instance):
    """The hypervisor's power state; NOSTATE when it has no domain.

    Another driver error keeps the recorded value: the state is unknown,
    not changed.
    """
    try:
        return driver.get_info(instance).state
    except exception.InstanceNotFound:
        return power_state.NOSTATE
    except Exception as e:
        LOG.warning('Could not read the power state: %s', e,
                    instance=instance)
        return instance.power_state


# The operations that may claim an instance no host holds yet: a build
# places it on the host that runs it.
_PLACING = frozenset(('build',))


def claim(instance, transition, host=None, token=None, event=None):
    """Validate and set the operation's task_state by compare-and-swap.

    With ``host``, the row must (still) place the instance there, or have
    no host yet for a build; checked in the same ``UPDATE``. With
    ``token`` (``attempts.Claim``), the same transaction makes it the
    instance's token and writes its row. ``event``: the operation's action
    event, its start written in the same transaction (one commit fewer,
    and no event that says started for a claim that never was).
    """
    if (transition.task_state is not None
            and instance.task_state == transition.task_state):
        if instance.vm_state not in transition.from_vm_states:
            raise exception.InstanceInvalidState(
                instance_uuid=instance.uuid, attr='vm_state',
                state=instance.vm_state, method=transition.action)
        expected_task = [transition.task_state]
    else:
        states.check(instance, transition.action)
        expected_task = list(transition.from_task_states)
    checks = dict(expected_task_state=expected_task,
                  expected_vm_state=list(transition.from_vm_states))
    if host is not None:
        checks['expected_host'] = (
            [host, None] if transition.action in _PLACING else [host])
    instance.task_state = transition.task_state
    if token is not None:
        checks.update(token.take(instance))
    try:
        instance.save(**checks, and_event=event)
    except (exception.UnexpectedTaskStateError, exception.InstanceNotFound):
        with excutils.save_and_reraise_exception():
            _reload(instance)


def _reload(instance):
    try:
        instance.refresh()
    except Exception:
        LOG.debug('Could not reload the instance', instance=instance)


# The hooks of a Flow. ``original_vm_state``: the instance's vm_state
# when the operation began.
# claim(instance, transition, event): ``event`` is the operation's action
# event, not written yet; the claim's write carries its start
# (``Instance.save(and_event=event)``).
ClaimHook = typing.Callable[
    [objects.Instance, states.Transition, objects.InstanceActionEvent],
    None]
# succeed(instance, transition, original_vm_state)
SucceedHook = typing.Callable[
    [objects.Instance, states.Transition, str | None], None]
# fail(context, instance, exc, transition, original_vm_state)
FailHook = typing.Callable[
    [nova_context.RequestContext, objects.Instance, Exception,
     states.Transition, str | None], None]


@dataclasses.dataclass(frozen=True)
class Flow:
    """How an operation claims the instance and records its end, where
    the defaults do not fit (an evacuation: the instance is on another
    host, and a migration goes along). Each hook left None is the
    default; ``fail``, when given, is called for every exception (the
    flow then decides about deleted and moved instances too).
    """
    claim: ClaimHook | None = None
    succeed: SucceedHook | None = None
    fail: FailHook | None = None


class Runner:
    """Runs operations on one host's instances."""

    def __init__(self, compute, locks):
        self.compute = compute
        self.locks = locks

    def run(self, context: nova_context.RequestContext,
            instance: objects.Instance, operation: Operation,
            body: typing.Callable[[], object],
            after_success: typing.Callable[[], object] | None = None,
            flow: Flow = Flow(), lock: bool = True,
            token=None) -> None:
        """Run ``body()`` as ``operation`` on ``instance`` (see module doc).

        ``after_success()``, if given, runs under the lock once the
        success was saved (delete uses it to remove the row). ``flow``:
        see ``Flow``. ``lock=False``: the caller holds the instance lock
        already. ``token`` (``attempts.Claim``): the operation is an
        attempt that may make a guest run or change disks; the default
        claim takes its token, the default end records it landed or
        failed, each expecting it (a flow's own hooks do the same).
        """
        with (self.locks.lock(instance.uuid) if lock
              else contextlib.nullcontext()):
            self._run(context, instance, operation, body, after_success,
                      flow, token)

    def _run(self, context: nova_context.RequestContext,
             instance: objects.Instance, operation: Operation,
             body: typing.Callable[[], object],
             after_success: typing.Callable[[], object] | None, flow: Flow,
             token=None) -> None:
        host = self.compute.host
        with actions.event(context, instance, operation.action,
                           operation.event, host, deferred=True) as event:
            transition = states.get(operation.transition)
            original_vm_state = instance.vm_state
            if flow.claim is not None:
                flow.claim(instance, transition, event)
                # A claim that did not carry the event: it starts now,
                # before anything is done.
                event.write_start()
            else:
                claim(instance, transition, host, token, event)
            LOG.info('Starting %s', operation.transition, instance=instance)
            try:
                try:
                    body()
                except exception.DiskLeaseHeld as e:
                    named = disk_leases.naming_holder(context, host,
                                                      instance, e)
                    if named is e:
                        raise
                    raise named from e
                if flow.succeed is not None:
                    flow.succeed(instance, transition, original_vm_state)
                else:
                    # The event ends with the state it records, unless
                    # more follows (a delete removes the row after): it
                    # then ends once that is done too, as before.
                    self._succeeded(
                        instance, transition, original_vm_state, token,
                        event if after_success is None else None)
                if after_success is not None:
                    after_success()
            except Exception as e:
                with excutils.save_and_reraise_exception():
                    if flow.fail is not None:
                        LOG.error('%(op)s failed: %(err)s',
                                  {'op': operation.transition,
                                   'err': exception.message_of(e)},
                                  instance=instance)
                        flow.fail(context, instance, e, transition,
                                  original_vm_state)
                    else:
                        self._ended_by(context, instance, e, operation,
                                       transition, original_vm_state, token)

    def _ended_by(self, context, instance, exc, operation, transition,
                  original_vm_state, token=None):
        if isinstance(exc, exception.AttemptSuperseded):
            # Reset-state, a delete or a newer attempt took the instance
            # over: its state is theirs to set. No fault: this attempt
            # did not fail, it was given up.
            LOG.warning('%(op)s stopped: %(err)s',
                        {'op': operation.transition,
                         'err': exception.message_of(exc)},
                        instance=instance)
            if token is not None:
                token.given_up()
            _reload(instance)
        elif isinstance(exc, exception.UnexpectedDeletingTaskStateError):
            # Deleted while this ran: the delete, waiting on this lock,
            # owns the instance now. No fault: nothing failed. The delete
            # cleared the token, so this attempt is given up like any
            # other that lost it: left ``claimed``, its row would say it
            # may still act.
            LOG.info('Instance was deleted during %s',
                     operation.transition, instance=instance)
            if token is not None:
                token.given_up()
        elif isinstance(exc, exception.InstanceNotOnThisHost):
            # Moved away (evacuated) while this ran: the row is the other
            # host's now, its state is not ours to set.
            LOG.error('Instance moved to another host during %s',
                      operation.transition, instance=instance)
        else:
            LOG.error('%(op)s failed: %(err)s',
                      {'op': operation.transition, 'err': exc},
                      instance=instance)
            self.record_failure(context, instance, exc, transition,
                                original_vm_state, token)

    def record_failure(self, context, instance, exc, transition,
                       original_vm_state, token=None):
        """The default end of a failed operation: a fault, the vm_state of
        the table's failure column, no task."""
        actions.record_fault(context, instance, exc, self.compute.host)
        self._failed(instance, transition, original_vm_state, token)

    def _succeeded(self, instance, transition, original_vm_state,
                   token=None, event=None):
        """The default end of a successful operation; ``event``, its
        action event, ends 'Success' in the same write."""
        instance.vm_state = transition.vm_state_after(True, original_vm_state)
        instance.task_state = None
        instance.power_state = current_power_state(self.compute.driver,
                                                   instance)
        landing = token.landing(instance) if token is not None else {}
        instance.save(expected_task_state=transition.running_task_states,
                      expected_host=[self.compute.host], **landing,
                      and_event=event.succeeding() if event else None)
        LOG.info('%(op)s succeeded: vm_state %(vm)s, power_state %(power)s',
                 {'op': transition.action, 'vm': instance.vm_state,
                  'power': power_state.STATE_MAP.get(instance.power_state)},
                 instance=instance)

    def _failed(self, instance, transition, original_vm_state, token=None):
        instance.vm_state = transition.vm_state_after(False,
                                                      original_vm_state)
        instance.task_state = None
        instance.power_state = current_power_state(self.compute.driver,
                                                   instance)
        failing = token.failing(instance) if token is not None else {}
        try:
            instance.save(expected_task_state=transition.running_task_states,
                          expected_host=[self.compute.host], **failing)
        except (exception.UnexpectedTaskStateError,
                exception.InstanceNotFound) as e:
            # Someone else (a delete, an evacuation that moved it away)
            # took the instance over; its state is theirs to set.
            LOG.warning('Not recording the failed state: %s', e,
                        instance=instance)
            _reload(instance)
