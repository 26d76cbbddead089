"""The token of an attempt that may make a guest run or change disks.

A build, a same-host rebuild and an evacuation each run as one attempt
(``journal.Attempt``: what the virt driver journals and undoes). The
attempt's claim writes its row and the instance's token in one
transaction (``nova/objects/attempt.py``); from then on the database
alone says whether the attempt may still act:

* every side effect checks the token right before it acts: the writes of
  its journal (the directory, the stamp, each disk), plugging, defining,
  starting and resuming the guest (the virt driver calls
  ``journal.Attempt.check``, which this module binds to the database),
  and, in the workflows, removing leftovers and binding ports;
* the save that records the result expects the token and marks the
  attempt ``landed`` in the same transaction (``Claim.landing``);
* whoever undoes an attempt asks the database first whether it landed
  (``undo_unless_landed``; ``recovery.py`` at a restart).

A token lost (reset-state, a delete, a newer claim) stops the attempt
where it stands, it undoes only what it made, and it leaves the
instance's state to whoever holds it now (``AttemptSuperseded``: no
fault, no state written). A check that cannot read the database stops
the attempt too (``AttemptCheckFailed``): a token that is not confirmed
is not acted on.

Example (``operation.Runner`` does the claim and the end)::

    claim = attempts.Claim.new(ctx, instance, host, journal.BUILD)
    runner.run(ctx, instance, build.BUILD, body, claim=claim)
    ...
    driver.spawn(..., attempt=claim.attempt)
"""

import dataclasses

from oslo_log import log as logging

from nova import exception
from nova import objects
from nova.objects import attempt as attempt_obj
from nova.objects import base as obj_base
from nova.virt import journal

LOG = logging.getLogger(__name__)


def token_check(context, instance_uuid: str,
                attempt_id: str) -> journal.TokenCheck:
    """The check a driver calls before each side effect of the attempt."""
    def check(step: str) -> None:
        attempt_obj.check_current(context, instance_uuid, attempt_id, step)
    return check


@dataclasses.dataclass
class Claim:
    """One attempt and its row: what the claim writes, what the end
    records."""
    attempt: journal.Attempt
    row: objects.InstanceAttempt

    @classmethod
    def new(cls, context, instance, host: str, operation: str,
            migration_uuid: str | None = None) -> 'Claim':
        attempt = journal.Attempt.new(operation, migration_uuid)
        attempt = attempt.checked_by(
            token_check(context, instance.uuid, attempt.id))
        row = objects.InstanceAttempt.new(
            context, instance.uuid, host, operation, attempt.id,
            migration_uuid=migration_uuid)
        return cls(attempt, row)

    @property
    def id(self) -> str:
        return self.attempt.id

    def check(self, step: str) -> None:
        """Right before a side effect of the workflow itself."""
        self.attempt.check(step)

    def take(self, instance) -> dict:
        """Make ``instance`` carry this token; the keyword arguments its
        claiming save adds (the row, written in the same transaction)."""
        instance.attempt_id = self.id
        return dict(and_attempt=self.row)

    def landing(self, instance) -> dict:
        """The fields of a landed attempt on ``instance`` (no token left,
        the instance has disks, launched now if never before); the keyword
        arguments of the save that records it."""
        instance.attempt_id = None
        instance.disks_exist = True
        if instance.launched_at is None:
            instance.launched_at = obj_base.utcnow()
        self.row.status = attempt_obj.LANDED
        return dict(expected_attempt=self.id, and_attempt=self.row)

    def given_up(self) -> None:
        """Record that this attempt lost its token and stopped: its row
        ``failed`` (from ``claimed`` only), the instance untouched (it is
        the new owner's). Logs, never raises."""
        try:
            self.row.mark(attempt_obj.FAILED)
        except Exception:
            LOG.exception('Could not mark attempt %s failed', self.id)

    def failing(self, instance) -> dict:
        """The fields of an attempt that ended without landing; the
        keyword arguments of the save that records it (a token that moved
        on meanwhile makes it write nothing: the instance is someone
        else's)."""
        instance.attempt_id = None
        self.row.status = attempt_obj.FAILED
        return dict(expected_attempt=self.id, and_attempt=self.row)


def landed(context, attempt_id: str) -> bool | None:
    """Whether the database records the attempt as landed; None when it
    cannot be read. An attempt with no row never claimed the instance,
    so it never landed."""
    try:
        row = objects.InstanceAttempt.get_by_uuid(context, attempt_id)
    except Exception:
        LOG.exception('Could not read attempt %s', attempt_id)
        return None
    return row is not None and row.landed


def undo_unless_landed(compute, context, instance, attempt,
                       keep_files: str | None = None) -> None:
    """After a failure: undo ``attempt`` from its journal, unless the
    database records it as landed (then what it made is the instance's:
    its journal is completed instead) or cannot say (then the journal is
    kept for the next start of the service, whose recovery asks again).
    Logs, never raises: the caller is reporting the original failure."""
    verdict = landed(context, attempt.id)
    try:
        if verdict:
            LOG.warning('%s attempt %s had landed before the failure; '
                        'keeping what it made', attempt.operation,
                        attempt.id, instance=instance)
            compute.driver.complete_attempt(instance, attempt)
            return
        if verdict is None:
            LOG.error('Cannot tell whether %s attempt %s landed; keeping '
                      'what it made for the next start of the service to '
                      'decide', attempt.operation, attempt.id,
                      instance=instance)
            return
        if compute.driver.undo_attempt(context, instance, attempt,
                                       keep_files=keep_files):
            LOG.warning('Removed what %s attempt %s created: it did not '
                        'land', attempt.operation, attempt.id,
                        instance=instance)
    except Exception:
        LOG.exception('Could not undo %s attempt %s; the next start of '
                      'the service will', attempt.operation, attempt.id,
                      instance=instance)


def mark_failed(context, attempt_id: str) -> None:
    """Mark a dead attempt ``failed`` (from ``claimed`` only) and clear
    the instance's token if it is still this attempt's; never raises."""
    try:
        row = objects.InstanceAttempt.get_by_uuid(context, attempt_id)
        if row is None or row.status != attempt_obj.CLAIMED:
            return
        row.mark(attempt_obj.FAILED)
        instance = objects.Instance.find(context, row.instance_uuid)
        if instance is None or instance.attempt_id != attempt_id:
            return
        instance.attempt_id = None
        try:
            instance.save(expected_attempt=attempt_id)
        except exception.AttemptSuperseded:
            pass        # someone else's since the read
    except Exception:
        LOG.exception('Could not mark attempt %s failed', attempt_id)
