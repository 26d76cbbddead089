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
    def record(cls, context, host: str, reason: str,
               since: datetime.datetime | None = None) -> 'HaAlert':
        """The host's newest alert if it says ``reason`` already (and was
        recorded at or after ``since``: the start of this failure, so that
        the next failure of the host is told again), else a new one."""
        return (cls._recorded(context, host, reason, since)
                or cls._insert(context, host, reason))

    @classmethod
    def record_new(cls, context, host: str, reason: str,
                   since: datetime.datetime | None = None
                   ) -> 'HaAlert | None':
        """As ``record``; None when the alert was recorded already (so
        that what goes with a new alert is done once)."""
        if cls._recorded(context, host, reason, since) is not None:
            return None
        return cls._insert(context, host, reason)

    @classmethod
    def _recorded(cls, context, host, reason, since) -> 'HaAlert | None':
        earlier = cls.get_all(context, host)
        if not earlier or earlier[0].reason != reason:
            return None
        newest = earlier[0]
        if since is not None and (newest.created_at is None
                                  or newest.created_at < since):
            return None
        return newest

    @classmethod
    def _insert(cls, context, host, reason) -> 'HaAlert':
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
