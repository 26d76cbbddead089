"""Host aggregates: named groups of compute hosts with key/value metadata.

An aggregate's ``availability_zone`` metadata puts its hosts in that zone
(``nova.compute.availability_zones``); which changes keep every host in
one zone is decided by ``nova.compute.aggregates``, not here. A deleted
aggregate is gone: its name may be taken again at once.

Example::

    agg = Aggregate.create(ctx, 'rack1', {'availability_zone': 'az1'})
    Aggregate.add_host(ctx, agg.id, 'compute1')
    Aggregate.update_metadata(ctx, agg.id, {'ssd': 'true', 'old': None})
    Aggregate.get_by_host(ctx, 'compute1')
"""

import dataclasses
import datetime

from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.objects import base

ZONE_KEY = 'availability_zone'
_Row = control_models.Aggregate
_Host = control_models.AggregateHost
_Metadata = control_models.AggregateMetadata


@dataclasses.dataclass
class Aggregate:
    id: int
    uuid: str
    name: str
    hosts: list[str]
    metadata: dict[str, str]
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None

    @property
    def availability_zone(self) -> str | None:
        return self.metadata.get(ZONE_KEY)

    @classmethod
    def create(cls, context, name: str,
               metadata: dict[str, str] | None = None) -> 'Aggregate':
        """Insert an aggregate with ``metadata``; ``AggregateNameExists``
        when the name is taken (the unique constraint decides)."""
        now = base.utcnow()
        try:
            with db_api.session() as session:
                result = session.execute(sa.insert(_Row).values(
                    uuid=uuidutils.generate_uuid(), name=name,
                    created_at=now, updated_at=None))
                aggregate_id = result.inserted_primary_key[0]
                _set_metadata(session, aggregate_id, metadata or {}, now)
        except sa_exc.IntegrityError:
            raise exception.AggregateNameExists(aggregate_name=name)
        return cls.get_by_id(context, aggregate_id)

    @classmethod
    def get_by_id(cls, context, aggregate_id: int) -> 'Aggregate':
        with db_api.session(read_only=True) as session:
            found = _load(session, _Row.id == aggregate_id)
        if not found:
            raise exception.AggregateNotFound(aggregate_id=aggregate_id)
        return found[0]

    @classmethod
    def get_all(cls, context) -> list['Aggregate']:
        """Every aggregate, oldest first."""
        with db_api.session(read_only=True) as session:
            return _load(session, sa.true())

    @classmethod
    def get_by_host(cls, context, host: str) -> list['Aggregate']:
        """The aggregates ``host`` is in, oldest first."""
        with db_api.session(read_only=True) as session:
            return _load(session, _Row.id.in_(
                sa.select(_Host.aggregate_id).where(
                    _Host.host == host)))

    @classmethod
    def rename(cls, context, aggregate_id: int, name: str) -> None:
        try:
            with db_api.session() as session:
                updated = session.execute(
                    sa.update(_Row).where(
                        _Row.id == aggregate_id).values(
                            name=name, updated_at=base.utcnow())).rowcount
        except sa_exc.IntegrityError:
            raise exception.AggregateNameExists(aggregate_name=name)
        if updated != 1:
            raise exception.AggregateNotFound(aggregate_id=aggregate_id)

    @classmethod
    def update_metadata(cls, context, aggregate_id: int,
                        changes: dict[str, str | None]) -> None:
        """Set each key of ``changes`` to its value; None deletes it."""
        now = base.utcnow()
        with db_api.session() as session:
            _touch(session, aggregate_id, now)
            _set_metadata(session, aggregate_id, changes, now)

    @classmethod
    def add_host(cls, context, aggregate_id: int, host: str) -> None:
        now = base.utcnow()
        try:
            with db_api.session() as session:
                _touch(session, aggregate_id, now)
                session.execute(sa.insert(_Host).values(
                    aggregate_id=aggregate_id, host=host, created_at=now))
        except sa_exc.IntegrityError:
            raise exception.AggregateHostExists(aggregate_id=aggregate_id,
                                                host=host)

    @classmethod
    def remove_host(cls, context, aggregate_id: int, host: str) -> None:
        with db_api.session() as session:
            _touch(session, aggregate_id, base.utcnow())
            removed = session.execute(sa.delete(_Host).where(
                _Host.aggregate_id == aggregate_id,
                _Host.host == host)).rowcount
            if removed != 1:
                raise exception.AggregateHostNotFound(
                    aggregate_id=aggregate_id, host=host)

    @classmethod
    def destroy(cls, context, aggregate_id: int) -> None:
        """Delete an aggregate that has no hosts (``InvalidAggregateAction``
        otherwise), with its metadata."""
        with db_api.session() as session:
            _touch(session, aggregate_id, base.utcnow())
            has_hosts = session.scalars(
                sa.select(_Host.id).where(
                    _Host.aggregate_id == aggregate_id)
            ).first() is not None
            if has_hosts:
                raise exception.InvalidAggregateAction(
                    action='delete', aggregate_id=aggregate_id,
                    reason='Host aggregate is not empty')
            session.execute(sa.delete(_Metadata).where(
                _Metadata.aggregate_id == aggregate_id))
            session.execute(sa.delete(_Row).where(
                _Row.id == aggregate_id))


# Built once: every server view and every choice of a host read it.
_HOST_ZONES = sa.select(_Host.host, _Metadata.value).join(
    _Metadata, _Metadata.aggregate_id == _Host.aggregate_id).where(
        _Metadata.key == ZONE_KEY)


def host_zones(context) -> dict[str, list[str]]:
    """Each host in an aggregate with a zone: the zones, sorted."""
    zones: dict[str, set[str]] = {}
    with db_api.reading() as connection:
        for host, zone in connection.execute(_HOST_ZONES):
            zones.setdefault(host, set()).add(zone)
    return {host: sorted(found) for host, found in zones.items()}


def _touch(session, aggregate_id: int, now) -> None:
    """Set ``updated_at``; ``AggregateNotFound`` when there is no row (the
    write that follows in the same transaction is then never made)."""
    updated = session.execute(sa.update(_Row).where(
        _Row.id == aggregate_id).values(updated_at=now)).rowcount
    if updated != 1:
        raise exception.AggregateNotFound(aggregate_id=aggregate_id)


def _set_metadata(session, aggregate_id: int,
                  changes: dict[str, str | None], now) -> None:
    table = _Metadata
    for key, value in changes.items():
        where = (table.aggregate_id == aggregate_id, table.key == key)
        if value is None:
            session.execute(sa.delete(table).where(*where))
            continue
        updated = session.execute(sa.update(table).where(*where).values(
            value=value, updated_at=now)).rowcount
        if not updated:
            session.execute(sa.insert(table).values(
                aggregate_id=aggregate_id, key=key, value=value,
                created_at=now))


def _load(session, where) -> list[Aggregate]:
    rows = session.scalars(sa.select(_Row).where(where).order_by(
        _Row.id)).all()
    ids = [row.id for row in rows]
    hosts: dict[int, list[str]] = {i: [] for i in ids}
    metadata: dict[int, dict[str, str]] = {i: {} for i in ids}
    for entry in session.scalars(sa.select(_Host).where(
            _Host.aggregate_id.in_(ids)).order_by(
                _Host.id)):
        hosts[entry.aggregate_id].append(entry.host)
    for item in session.scalars(sa.select(_Metadata).where(
            _Metadata.aggregate_id.in_(ids))):
        metadata[item.aggregate_id][item.key] = item.value
    return [Aggregate(id=row.id, uuid=row.uuid, name=row.name,
                      hosts=hosts[row.id], metadata=metadata[row.id],
                      created_at=row.created_at, updated_at=row.updated_at)
            for row in rows]
