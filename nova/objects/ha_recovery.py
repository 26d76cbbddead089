"""One recovery of one failed host by nova-hamonitor, step by step.

A recovery is recorded before its first side effect and advanced by
compare-and-swap on its step, so that of two monitors that both believe
they may act (one stalled past its lease), one advances it; and a monitor
that starts again carries on from the step recorded instead of starting a
second recovery. The steps, in order:

* ``fencing``: the fence agent is (about to be) run; carried on by running
  it again (powering off a host that is off is harmless);
* ``fence-failed``: the agent did not fence the host; the recovery ends
  here and nothing else was done (the next check decides afresh);
* ``ready``: the host is fenced (``fenced``), or safe to evacuate without
  fencing; its service is forced down next when it was fenced;
* ``evacuating``: a monitor is starting the host-evacuate run;
* ``started``: the run started (``evacuation_uuid``); the recovery is
  done, what becomes of each instance is the run's to say.

With ``[ha] recovery = masakari`` Masakari evacuates instead, and the two
last steps are:

* ``notifying``: a monitor is posting the host-failure notification (and
  posts it again, at the next check, while Masakari does not take it);
* ``notified``: Masakari took it (``notification_uuid``); the recovery is
  done, what becomes of each instance is Masakari's to say.
"""

import datetime

from nova.db import control_models
from nova.objects import base
from nova.objects import fields

FENCING = 'fencing'
FENCE_FAILED = 'fence-failed'
READY = 'ready'
EVACUATING = 'evacuating'
STARTED = 'started'
NOTIFYING = 'notifying'
NOTIFIED = 'notified'
# Steps after which nothing more is done for this recovery.
ENDED = (FENCE_FAILED, STARTED, NOTIFIED)


class HaHostRecovery(base.NovaObject):
    model = control_models.HaHostRecovery
    fields = {
        'id': fields.Integer(),
        'host': fields.String(nullable=False),
        'step': fields.String(nullable=False),
        'monitor': fields.String(nullable=False),
        'fenced': fields.Boolean(default=False, nullable=False),
        'evacuation_uuid': fields.String(),
        'notification_uuid': fields.String(),
        'reason': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    id: int | None
    host: str
    step: str
    monitor: str
    fenced: bool
    evacuation_uuid: str | None
    notification_uuid: str | None
    reason: str | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    @property
    def ended(self) -> bool:
        return self.step in ENDED

    @classmethod
    def begin(cls, context, host: str, step: str, monitor: str,
              reason: str) -> 'HaHostRecovery':
        now = base.utcnow()
        recovery = cls(context, host=host, step=step, monitor=monitor,
                       reason=reason, created_at=now, updated_at=now)
        recovery._db_insert()
        return recovery

    def advance(self, expected: str, step: str, monitor: str,
                **values) -> bool:
        """Move from ``expected`` to ``step`` as ``monitor`` (with
        ``values``), only if the row is still at ``expected``: whether it
        did. On False the object holds the row as it is."""
        self.step = step
        self.monitor = monitor
        for name, value in values.items():
            setattr(self, name, value)
        if self._db_update(control_models.HaHostRecovery.step == expected):
            return True
        fresh = self.get_by_id(self._context, self.id)
        for name in self.fields:
            object.__setattr__(self, name, getattr(fresh, name))
        self.obj_reset_changes()
        return False

    @classmethod
    def get_by_id(cls, context, recovery_id: int) -> 'HaHostRecovery':
        found = cls._db_get_one(
            context, control_models.HaHostRecovery.id == recovery_id)
        assert found is not None, 'recoveries are never deleted'
        return found

    @classmethod
    def latest(cls, context, host: str) -> 'HaHostRecovery | None':
        """The newest recovery of ``host`` that was not a failed fence
        (one that fenced nothing recovered nothing)."""
        table = control_models.HaHostRecovery
        found = cls._db_get_all(context, table.host == host,
                                table.step != FENCE_FAILED,
                                order_by=[table.id.desc()])
        return found[0] if found else None

    @classmethod
    def get_all(cls, context) -> list['HaHostRecovery']:
        """Every recovery, newest first."""
        return cls._db_get_all(
            context, order_by=[control_models.HaHostRecovery.id.desc()])
