"""Migrations: the record of an evacuation (or another move) of an instance.

Evacuation statuses, in order: ``accepted`` (API), ``pre-migrating``
(target started), then ``done`` or ``failed``; the source host marks a done
one ``completed`` once it has cleaned up.
"""

import datetime
import typing

from oslo_utils import uuidutils
import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import models
from nova import exception
from nova.objects import base
from nova.objects import fields

EVACUATION = 'evacuation'

ACCEPTED = 'accepted'
PRE_MIGRATING = 'pre-migrating'
DONE = 'done'
FAILED = 'failed'
COMPLETED = 'completed'

EVACUATION_STATUSES = (ACCEPTED, PRE_MIGRATING, DONE, FAILED, COMPLETED)
# An evacuation that has not ended yet: the instance may still move.
IN_PROGRESS = (ACCEPTED, PRE_MIGRATING)


class ArrivingInstance(typing.NamedTuple):
    """An instance an evacuation in flight is bringing to ``dest_compute``
    (``Migration.arriving``): where its row places it now, and what its
    flavor takes (the row's ``flavor_*`` columns; 0 without a flavor)."""
    dest_compute: str
    dest_node: str | None
    instance_uuid: str
    host: str | None
    node: str | None
    vcpus: int
    memory_mb: int
    disk_gb: int


_MIGRATIONS = models.Migration.__table__.c
_INSTANCES = models.Instance.__table__.c
# Built once: placement reads it at every choice, twice per claim.
_ARRIVING = sa.select(
    _MIGRATIONS.dest_compute, _MIGRATIONS.dest_node,
    _MIGRATIONS.instance_uuid, _INSTANCES.host, _INSTANCES.node,
    sa.func.coalesce(_INSTANCES.flavor_vcpus, 0),
    sa.func.coalesce(_INSTANCES.flavor_memory_mb, 0),
    sa.func.coalesce(_INSTANCES.flavor_disk_gb, 0)).join_from(
        models.Migration.__table__, models.Instance.__table__,
        _INSTANCES.uuid == _MIGRATIONS.instance_uuid).where(
    _MIGRATIONS.dest_compute.in_(sa.bindparam('hosts', expanding=True)),
    _MIGRATIONS.status.in_(IN_PROGRESS),
    _MIGRATIONS.migration_type == EVACUATION,
    _INSTANCES.deleted.is_(False)).order_by(
        _MIGRATIONS.created_at, _MIGRATIONS.id)


class Migration(base.NovaObject):
    model = models.Migration
    fields = {
        'id': fields.Integer(),
        'uuid': fields.String(default=uuidutils.generate_uuid),
        'instance_uuid': fields.String(nullable=False),
        'source_compute': fields.String(),
        'dest_compute': fields.String(),
        'source_node': fields.String(),
        'dest_node': fields.String(),
        'migration_type': fields.String(),
        'status': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    # The fields as attributes, for readers and type checkers (their
    # values live on the instance; see base.NovaObject).
    id: int | None
    uuid: str | None
    instance_uuid: str
    source_compute: str | None
    dest_compute: str | None
    source_node: str | None
    dest_node: str | None
    migration_type: str | None
    status: str | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    def create(self) -> 'Migration':
        if self.id is not None:
            raise exception.InternalError(
                err='migration %s is already created' % self.id)
        now = base.utcnow()
        self.created_at = self.created_at or now
        self.updated_at = now
        try:
            self._db_insert(
                conflict=exception.MigrationExists(migration_id=self.uuid))
        except exception.MigrationExists:
            # An unknown instance fails the insert too (foreign key).
            self._check_instance_exists()
            raise
        return self

    def _check_instance_exists(self) -> None:
        with db_api.reading() as connection:
            instances = models.Instance.__table__.c
            found = connection.scalar(sa.select(instances.id).where(
                instances.uuid == self.instance_uuid))
        if found is None:
            raise exception.InstanceNotFound(instance_id=self.instance_uuid)

    def save(self, expected_status=base.UNSET, and_give_back=None) -> None:
        """Write the changed fields.

        ``expected_status`` (a status or a list) makes it a compare-and-
        swap: ``UnexpectedMigrationStatusError`` when the row has another
        status. ``and_give_back``: the ``host_lease.Lease`` (or
        ``host_lease.Together``) a claim written here (``dest_compute``)
        was made under, given back in the same
        transaction (nothing written when the lease was lost:
        ``HostClaimLeaseLost``).
        """
        where = []
        if expected_status is not base.UNSET:
            where.append(base.matches(models.Migration.status,
                                      expected_status))
        if not self.obj_what_changed() and not where \
                and and_give_back is None:
            return
        also = None if and_give_back is None else and_give_back.give_back_in
        if not self._db_update(*where, also=also):
            actual = self.get_by_id(self._context, self.id).status
            raise exception.UnexpectedMigrationStatusError(
                migration_id=self.id, expected=expected_status,
                actual=actual)

    def update_statement(self, expected_status):
        """The compare-and-swap ``UPDATE`` of this row's changed fields,
        returning the row as written (none when it did not match), for a
        caller that runs it in a transaction of its own
        (``Instance.save(and_migration=...)``)."""
        changed = self.obj_what_changed() - {'id'}
        values = self._db_values(changed)
        values['updated_at'] = base.utcnow()
        table = models.Migration
        return sa.update(table.__table__).where(
            table.id == self.id,
            base.matches(table.status, expected_status)).values(
                **values).returning(table.__table__)

    def refresh(self) -> None:
        """Reload every field from the database."""
        fresh = self.get_by_id(self._context, self.id)
        for name in self.fields:
            object.__setattr__(self, name, getattr(fresh, name))
        self.obj_reset_changes()

    @classmethod
    def get_by_id(cls, context, migration_id) -> 'Migration':
        obj = cls._db_get_one(context, models.Migration.id == migration_id)
        if obj is None:
            raise exception.MigrationNotFound(migration_id=migration_id)
        return obj

    @classmethod
    def get_by_uuid(cls, context, uuid) -> 'Migration':
        obj = cls._db_get_one(context, models.Migration.uuid == uuid)
        if obj is None:
            raise exception.MigrationNotFound(migration_id=uuid)
        return obj

    @classmethod
    def get_by_filters(cls, context, source_compute=None, dest_compute=None,
                       instance_uuid=None, status=None,
                       migration_type=None) -> list['Migration']:
        """Migrations matching every filter given, oldest first; a filter
        may be a value or a list of them."""
        filters = {name: value for name, value in (
            ('source_compute', source_compute),
            ('dest_compute', dest_compute),
            ('instance_uuid', instance_uuid),
            ('migration_type', migration_type),
            ('status', status)) if value is not None}
        return cls._db_get_by(context, order_by=('created_at', 'id'),
                              **filters)

    @classmethod
    def arriving(cls, context, hosts) -> list[ArrivingInstance]:
        """The live instances that evacuations still in flight
        (``IN_PROGRESS``) bring to any of ``hosts``, oldest migration
        first, each with its row's host and flavor as of this one read.

        One statement whatever the number of evacuations in flight: a
        target choice reads it for every candidate at once, and reading
        each instance on its own made a host-evacuate's choices cost
        one statement per evacuation it had running.
        """
        hosts = list(hosts)
        if not hosts:
            return []
        with db_api.reading() as connection:
            return [ArrivingInstance(*row) for row in connection.execute(
                _ARRIVING, {'hosts': hosts})]

    @classmethod
    def newest_evacuations(cls, context, source_compute, status=None,
                           instance_uuid=None) -> dict[str, 'Migration']:
        """{instance UUID: its newest evacuation from ``source_compute``}.

        The newest of each instance whatever its status (``completed``
        too): an instance may have been evacuated from a host, failed
        there, come back and gone again, and only its newest evacuation
        says whether the host's copy is still its own. ``status`` (a
        status or a list) keeps only the instances whose newest one has
        it; ``instance_uuid`` looks at that instance alone. "Newest" is
        the order of ``get_by_filters`` (``created_at``, then ``id``),
        picked in SQL.
        """
        table = models.Migration.__table__.c
        where = [table.source_compute == source_compute,
                 table.migration_type == EVACUATION]
        if instance_uuid is not None:
            where.append(table.instance_uuid == instance_uuid)
        rank = sa.func.row_number().over(
            partition_by=table.instance_uuid,
            order_by=[table.created_at.desc(), table.id.desc()])
        ranked = sa.select(table.id, rank.label('rank')).where(
            *where).subquery()
        newest = [table.id.in_(sa.select(ranked.c.id).where(
            ranked.c.rank == 1))]
        if status is not None:
            newest.append(base.matches(table.status, status))
        return {m.instance_uuid: m for m in cls._db_get_all(
            context, *newest, order_by=[table.created_at, table.id])}
