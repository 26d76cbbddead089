"""A guest that stopped without nova stopping it, recorded by the compute
host whose libvirt reported it, for the region's nova-hamonitor.

The compute host writes the row (step ``new``) when it records the stop;
the monitor moves it on by compare-and-swap on its step, so that of two
monitors that both believe they may act, one does, and a restarted
monitor does not act again on a failure already handled. The steps:

* ``new``: recorded by the compute host, not yet handled;
* ``notified``: Masakari took its instance-failure notification
  (``notification_uuid``); what becomes of the instance is Masakari's;
* ``started``: the monitor asked the Compute API to start the instance
  (``[ha] recovery = builtin`` and ``HA_Enabled=True``);
* ``skipped``: nothing done, and why (``reason``): the host was down (the
  host's recovery has its instances), the instance was not HA_Enabled,
  gone, or already running again.
"""

import datetime

from nova.db import models
from nova.objects import base
from nova.objects import fields

NEW = 'new'
NOTIFIED = 'notified'
STARTED = 'started'
SKIPPED = 'skipped'


class HaInstanceFailure(base.NovaObject):
    model = models.HaInstanceFailure
    fields = {
        'id': fields.Integer(),
        'instance_uuid': fields.String(nullable=False),
        'host': fields.String(nullable=False),
        'event': fields.String(nullable=False),
        'step': fields.String(nullable=False),
        'monitor': fields.String(),
        'notification_uuid': fields.String(),
        'reason': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    id: int | None
    instance_uuid: str
    host: str
    event: str
    step: str
    monitor: str | None
    notification_uuid: str | None
    reason: str | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    @classmethod
    def record(cls, context, instance_uuid: str, host: str,
               event: str) -> 'HaInstanceFailure':
        now = base.utcnow()
        failure = cls(context, instance_uuid=instance_uuid, host=host,
                      event=event, step=NEW, created_at=now,
                      updated_at=now)
        failure._db_insert()
        return failure

    def advance(self, step: str, monitor: str, **values) -> bool:
        """Move from ``new`` to ``step`` as ``monitor`` (with ``values``),
        only if no monitor moved it first: whether this one did."""
        self.step = step
        self.monitor = monitor
        self.updated_at = base.utcnow()
        for name, value in values.items():
            setattr(self, name, value)
        return self._db_update(models.HaInstanceFailure.step == NEW)

    @classmethod
    def get_new(cls, context) -> list['HaInstanceFailure']:
        """The failures no monitor handled yet, oldest first."""
        table = models.HaInstanceFailure
        return cls._db_get_all(context, table.step == NEW,
                               order_by=[table.id])

    @classmethod
    def get_all(cls, context, instance_uuid: str | None = None,
                host: str | None = None) -> list['HaInstanceFailure']:
        """Every failure (of ``instance_uuid``, recorded by ``host``),
        oldest first."""
        table = models.HaInstanceFailure
        where = []
        if instance_uuid is not None:
            where.append(table.instance_uuid == instance_uuid)
        if host is not None:
            where.append(table.host == host)
        return cls._db_get_all(context, *where, order_by=[table.id])
