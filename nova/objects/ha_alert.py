"""Alerts of nova-hamonitor: a failed host it did not recover, and why.

An operator reads them with ``nova-manage ha alerts``. The same alert is
not written twice in a row for a host: a monitor that finds the same host
in the same state at every check records it once.
"""

import datetime

from nova.db import models
from nova.objects import base
from nova.objects import fields


class HaAlert(base.NovaObject):
    model = models.HaAlert
    fields = {
        'id': fields.Integer(),
        'host': fields.String(nullable=False),
        'reason': fields.String(nullable=False),
        'created_at': fields.DateTime(),
    }

    id: int | None
    host: str
    reason: str
    created_at: datetime.datetime | None

    @classmethod
    def record(cls, context, host: str, reason: str) -> 'HaAlert':
        """The host's newest alert if it says ``reason`` already, else a
        new one."""
        earlier = cls.get_all(context, host)
        if earlier and earlier[0].reason == reason:
            return earlier[0]
        alert = cls(context, host=host, reason=reason,
                    created_at=base.utcnow())
        alert._db_insert()
        return alert

    @classmethod
    def get_all(cls, context, host: str | None = None) -> list['HaAlert']:
        """Every alert (of ``host``), newest first."""
        where = [] if host is None else [models.HaAlert.host == host]
        return cls._db_get_all(context, *where,
                               order_by=[models.HaAlert.id.desc()])
