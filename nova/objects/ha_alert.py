"""Alerts of nova-hamonitor: a failed host it did not recover, and why.

An operator reads them with ``nova-manage ha alerts``. The same alert is
not written twice in a row for a host: a monitor that finds the same host
in the same state at every check records it once.
"""

import datetime

from nova.db import control_models
from nova.objects import base
from nova.objects import fields


class HaAlert(base.NovaObject):
    model = control_models.HaAlert
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
        """The alert of the host that says ``reason`` already, else a new
        one. Without ``since`` only the host's newest alert counts; with
        it (the start of this failure), any recorded at or after it, so
        that alerts about one failure that alternate are each written
        once, and the host's next failure is told again."""
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
        if since is None:
            earlier = earlier[:1]
        for alert in earlier:
            if since is not None and (alert.created_at is None
                                      or alert.created_at < since):
                # Newest first: the rest are older still.
                return None
            if alert.reason == reason:
                return alert
        return None

    @classmethod
    def _insert(cls, context, host, reason) -> 'HaAlert':
        alert = cls(context, host=host, reason=reason,
                    created_at=base.utcnow())
        alert._db_insert()
        return alert

    @classmethod
    def get_all(cls, context, host: str | None = None) -> list['HaAlert']:
        """Every alert (of ``host``), newest first."""
        where = [] if host is None else [control_models.HaAlert.host == host]
        return cls._db_get_all(context, *where,
                               order_by=[control_models.HaAlert.id.desc()])
