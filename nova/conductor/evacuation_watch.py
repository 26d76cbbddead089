"""What became of one requested evacuation, read from the database.

Host-evacuate requests evacuations and watches them; it never runs one.
An attempt has ended when its migration has (``done`` or ``completed``:
done; ``failed``: failed, once the instance has no task left, so that its
cleanup is over and a retry may take it). Why it failed is the instance's
fault written since the attempt began, else the error of the attempt's own
action event. Decisions here are pure functions over rows read by the
caller; the reads are in ``read_attempt``.

Example::

    seen = evacuation_watch.read_attempt(ctx, migration_uuid, request_id)
    verdict = evacuation_watch.decide(seen)
    if verdict is not None:
        print(verdict.outcome, verdict.message)
"""

import dataclasses
import datetime

from nova.model import vm_states
from nova import objects
from nova.objects import action as action_obj
from nova.objects import host_evacuation as run_obj
from nova.objects import migration as migration_obj

ENDED_DONE = (migration_obj.DONE, migration_obj.COMPLETED)
# A fault this much older than the migration row still belongs to the
# attempt: the two clocks are the same database's, but rows are written
# with microseconds and some backends compare whole seconds.
FAULT_SLACK = datetime.timedelta(seconds=1)


@dataclasses.dataclass(frozen=True)
class Seen:
    """What the database says about an attempt, at one moment."""
    migration_status: str | None
    migration_created: datetime.datetime | None
    dest_compute: str | None
    instance_gone: bool
    host: str | None = None
    vm_state: str | None = None
    task_state: str | None = None
    fault_message: str | None = None
    fault_created: datetime.datetime | None = None
    event_error: str | None = None


@dataclasses.dataclass(frozen=True)
class Verdict:
    outcome: str               # run_obj.DONE or run_obj.FAILED
    message: str | None = None


def decide(seen: Seen) -> Verdict | None:
    """The attempt's end, or None while it is still running."""
    if seen.instance_gone:
        return Verdict(run_obj.FAILED, 'the server was deleted meanwhile')
    if seen.migration_status in ENDED_DONE:
        return Verdict(run_obj.DONE)
    if seen.migration_status != migration_obj.FAILED:
        return None
    if seen.task_state is not None:
        return None            # the failure is still being cleaned up
    return Verdict(run_obj.FAILED, why_failed(seen))


def why_failed(seen: Seen) -> str:
    if (seen.vm_state == vm_states.ERROR and seen.fault_message
            and (seen.fault_created is None
                 or seen.migration_created is None
                 or seen.fault_created >= seen.migration_created
                 - FAULT_SLACK)):
        return seen.fault_message
    if seen.event_error:
        return seen.event_error
    return 'the evacuation failed (no fault recorded)'


def last_error_line(traceback_text: str | None) -> str | None:
    """``NoValidHost: no host ...`` from a formatted traceback."""
    lines = [line.strip() for line in (traceback_text or '').splitlines()
             if line.strip()]
    if not lines:
        return None
    kind, sep, rest = lines[-1].partition(': ')
    if sep and ' ' not in kind:
        return '%s: %s' % (kind.rsplit('.', 1)[-1], rest)
    return lines[-1]


def _event_error(context, instance_uuid, request_id) -> str | None:
    action = objects.InstanceAction.get_by_request_id(
        context, instance_uuid, request_id)
    if action is None:
        return None
    for event in reversed(action.events):
        if event.result == action_obj.ERROR:
            line = last_error_line(event.traceback) or event.details
            if line:
                return line
    return None


def read_attempt(context, migration_uuid: str, request_id: str) -> Seen:
    """Read the rows ``decide`` needs (the fault and the action's events
    only once the migration has failed)."""
    migration = objects.Migration.get_by_uuid(context, migration_uuid)
    instance = objects.Instance.find(context, migration.instance_uuid)
    gone = instance is None or bool(instance.deleted)
    seen = Seen(migration_status=migration.status,
                migration_created=migration.created_at,
                dest_compute=migration.dest_compute, instance_gone=gone)
    if gone:
        return seen
    seen = dataclasses.replace(seen, host=instance.host,
                               vm_state=instance.vm_state,
                               task_state=instance.task_state)
    if migration.status != migration_obj.FAILED or instance.task_state:
        return seen
    fault = objects.InstanceFault.get_latest_for_instance(context,
                                                          instance.uuid)
    return dataclasses.replace(
        seen, fault_message=fault.message if fault else None,
        fault_created=fault.created_at if fault else None,
        event_error=_event_error(context, instance.uuid, request_id))
