"""The lease that lets one nova-hamonitor act in a region.

Several monitors may run for a region (on different machines, so that one
outlives another); only the holder of the region's lease fences, forces
down and evacuates. The lease is the row of ``ha_monitor_leases`` whose key
is the region, taken by an INSERT (the primary key lets one of two
succeed) or, when it expired, by an UPDATE that only matches an expired
row; renewed by an UPDATE that only matches the holder's own row, not yet
expired (compare-and-swap: a monitor that stalled past its expiry finds it
taken over and renews nothing).

Each statement is its own short transaction, as for
``nova.objects.host_lease``; every monitor's clock must be right to
within a fraction of the lease's duration.
"""

import datetime

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova.objects import fields
from nova.objects import host_lease

_table = control_models.HaMonitorLease


def take_or_renew(region: str, holder: str, seconds: float) -> bool:
    """Make ``holder`` hold the lease of ``region`` for ``seconds`` more:
    renewed if it holds it, taken if it is free or expired. Whether it
    holds it now."""
    now = fields.utcnow()
    expires = now + datetime.timedelta(seconds=seconds)
    with db_api.session() as session:
        renewed = session.execute(
            sa.update(_table)
            .where(_table.region == region, _table.holder == holder,
                   _table.expires_at > now)
            .values(expires_at=expires)
            .execution_options(synchronize_session=False)).rowcount
    if renewed:
        return True
    return host_lease.take_free_or_expired(
        _table, _table.region, region, holder, seconds) is not None


def holds(region: str, holder: str) -> bool:
    """Whether ``holder`` holds the lease of ``region`` now (not
    expired)."""
    with db_api.reading() as connection:
        found = connection.scalars(sa.select(_table.holder).where(
            _table.region == region, _table.holder == holder,
            _table.expires_at > fields.utcnow())).first()
    return found is not None


def holder_of(region: str) -> str | None:
    """Who holds the lease of ``region`` (expired or not); None if
    nobody."""
    with db_api.reading() as connection:
        return connection.scalars(sa.select(_table.holder).where(
            _table.region == region)).one_or_none()


def give_back(region: str, holder: str) -> bool:
    """Release ``holder``'s lease (a monitor stopping cleanly), so another
    takes over at once; False if it was not held."""
    with db_api.session() as session:
        deleted = session.execute(
            sa.delete(_table)
            .where(_table.region == region, _table.holder == holder)
            .execution_options(synchronize_session=False)).rowcount
    return bool(deleted)
