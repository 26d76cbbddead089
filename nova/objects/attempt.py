"""Attempt tokens: the database's word on who may act on an instance.

Every attempt that may make a guest run or change an instance's disks (a
build, a same-host rebuild, an evacuation) is a row of
``instance_attempts``, written in the very transaction that claims the
instance, and ``instances.attempt_id`` names the one attempt that may act
now: the token. A newer claim, reset-state and a delete replace or clear
it. Every side effect of an attempt checks the token right before it acts
(``check_current``), and the write that records the attempt's result
expects it (``Instance.save(expected_attempt=...)``), marking the row
``landed`` in the same transaction. This is the fencing-token pattern: the
files on disk, the disk leases and a process's memory are evidence that
can only confirm what the row says.

Statuses: ``claimed`` (taken; the attempt may act while it is the
instance's token), ``landed`` (its result is recorded: what it made is
the instance's), ``failed`` (it ended without landing, and what it made
is being or was undone). An attempt that is ``claimed`` but no longer the
token was superseded (or its host died): it never lands.

Example (the compute manager's claim, then a driver's side effect)::

    attempt = objects.InstanceAttempt.new(ctx, instance, host, 'build')
    instance.attempt_id = attempt.uuid
    instance.save(expected_task_state=[...], and_attempt=attempt)
    ...
    attempt_obj.check_current(ctx, instance.uuid, attempt.uuid, 'define')
"""

import datetime

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import models
from nova import exception
from nova.objects import base
from nova.objects import fields

CLAIMED = 'claimed'
LANDED = 'landed'
FAILED = 'failed'
STATUSES = (CLAIMED, LANDED, FAILED)


class InstanceAttempt(base.NovaObject):
    model = models.InstanceAttempt
    fields = {
        'id': fields.Integer(),
        'uuid': fields.String(),
        'instance_uuid': fields.String(),
        'host': fields.String(),
        'operation': fields.String(),
        'migration_uuid': fields.String(),
        'status': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    id: int | None
    uuid: str | None
    instance_uuid: str | None
    host: str | None
    operation: str | None
    migration_uuid: str | None
    status: str | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    @classmethod
    def new(cls, context, instance_uuid: str, host: str, operation: str,
            uuid: str, migration_uuid: str | None = None
            ) -> 'InstanceAttempt':
        """A row to claim with (``Instance.save(and_attempt=...)``)."""
        return cls(context, uuid=uuid, instance_uuid=instance_uuid,
                   host=host, operation=operation,
                   migration_uuid=migration_uuid, status=CLAIMED)

    @property
    def landed(self) -> bool:
        return self.status == LANDED

    @classmethod
    def get_by_uuid(cls, context, uuid) -> 'InstanceAttempt | None':
        """The attempt, or None when the database has no such row (an
        attempt from before attempts were recorded)."""
        return cls._db_get_one(context, models.InstanceAttempt.uuid == uuid)

    @classmethod
    def get_by_instance(cls, context,
                        instance_uuid) -> list['InstanceAttempt']:
        """Every attempt of the instance, oldest first."""
        return cls._db_get_all(
            context, models.InstanceAttempt.instance_uuid == instance_uuid)

    @classmethod
    def claimed_after(cls, context, attempt: 'InstanceAttempt'
                      ) -> list['InstanceAttempt']:
        """The attempts of the same instance claimed after ``attempt``."""
        table = models.InstanceAttempt
        return cls._db_get_all(
            context, table.instance_uuid == attempt.instance_uuid,
            table.id > attempt.id)

    @classmethod
    def claimed_by_host(cls, context, host: str) -> list['InstanceAttempt']:
        """The attempts ``host`` claimed that neither landed nor were
        recorded failed, oldest first."""
        table = models.InstanceAttempt
        return cls._db_get_all(context, table.host == host,
                               table.status == CLAIMED)

    def write_in(self, session) -> None:
        """Insert this row, or write its changed fields, in ``session``
        (the transaction of the instance's write that carries it)."""
        if self.id is not None:
            self._db_update_in(session)
            return
        now = base.utcnow()
        self.created_at = self.created_at or now
        self.updated_at = now
        self._db_insert_in(session)

    def mark(self, status: str) -> bool:
        """Set the status on its own (no instance write goes with it),
        from ``claimed`` only: a landed attempt is never marked failed.
        Whether the row changed."""
        if status not in STATUSES:
            raise exception.InvalidInput(reason='unknown attempt status %r'
                                         % status)
        self.status = status
        if self._db_update(models.InstanceAttempt.status == CLAIMED):
            return True
        self.refresh()
        return False

    def refresh(self) -> None:
        fresh = self.get_by_uuid(self._context, self.uuid)
        if fresh is None:
            raise exception.NotFound(reason='attempt %s' % self.uuid)
        for name in self.fields:
            object.__setattr__(self, name, getattr(fresh, name))
        self.obj_reset_changes()


# Built once: SQLAlchemy then finds its compiled form by the statement
# itself instead of building and hashing a new one at every check (half
# the cost of a check, which runs before every side effect).
_INSTANCES = models.Instance.__table__.c
_TOKEN_QUERY = sa.select(_INSTANCES.attempt_id, _INSTANCES.deleted).where(
    _INSTANCES.uuid == sa.bindparam('instance_uuid'))


def current_token(context, instance_uuid: str) -> tuple[str | None, bool]:
    """(the instance's token, whether the instance is deleted or gone):
    one statement by primary key, outside a transaction, on the driver's
    connection (``db_api.read_one_row``)."""
    row = db_api.read_one_row(_TOKEN_QUERY, {'instance_uuid': instance_uuid})
    if row is None:
        return None, True
    attempt_id, deleted = row
    return attempt_id, bool(deleted)


def why_not_current(token: str | None, gone: bool,
                    attempt_id: str) -> str | None:
    """Why ``attempt_id`` is not the token, in words; None if it is."""
    if gone:
        return 'the instance was deleted'
    if token is None:
        return 'no attempt holds the instance now (reset-state)'
    if token != attempt_id:
        return 'attempt %s holds the instance now' % token
    return None


def check_current(context, instance_uuid: str, attempt_id: str,
                  step: str) -> None:
    """Right before a side effect (``step``): ``AttemptSuperseded`` unless
    ``attempt_id`` is still the instance's token; ``AttemptCheckFailed``
    when the database cannot say (the attempt stops either way)."""
    try:
        token, gone = current_token(context, instance_uuid)
    except (sa_exc.SQLAlchemyError, OSError) as e:
        raise exception.AttemptCheckFailed(
            attempt=attempt_id, step=step, reason=exception.message_of(e))
    why = why_not_current(token, gone, attempt_id)
    if why is not None:
        raise exception.AttemptSuperseded(
            attempt=attempt_id, instance_uuid=instance_uuid, why=why,
            step=step, expected=attempt_id, actual=token)
