"""Service records: which processes run where, and whether they are up.

A compute service heartbeats every ``report_interval``; it counts as up
while its last heartbeat is newer than ``service_down_time`` seconds and
no operator forced it down (``forced_down`` is how an operator tells the
system a host is dead before evacuating it).
"""

import datetime
import typing

from oslo_utils import uuidutils
import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import models
from nova import exception
from nova.model import binaries
from nova.objects import base
from nova.objects import fields

# Built once: a server's view reads its host's service (host_status).
_BY_HOST_AND_BINARY = sa.select(models.Service.__table__).where(
    models.Service.host == sa.bindparam('host'),
    models.Service.binary == sa.bindparam('binary'))

COMPUTE_BINARY = binaries.COMPUTE


def _is_up(forced_down: bool, last_seen_up, service_down_time: int,
           now: datetime.datetime | None = None) -> bool:
    if forced_down or last_seen_up is None:
        return False
    elapsed = (base.utcnow() if now is None else now) - last_seen_up
    return elapsed <= datetime.timedelta(seconds=service_down_time)


class ServiceState(typing.NamedTuple):
    """What a choice of target reads of each compute service: columns,
    not a ``Service`` (a choice reads every host of the region; building
    the objects made its cost grow with the region)."""
    host: str
    disabled: bool
    forced_down: bool
    last_seen_up: datetime.datetime | None
    storage_identity: str | None

    def is_up(self, service_down_time: int,
              now: datetime.datetime | None = None) -> bool:
        """Whether it reported within ``service_down_time`` seconds of
        ``now`` (default: the clock now; a choice reads it once for every
        host) and is not forced down."""
        return _is_up(self.forced_down, self.last_seen_up, service_down_time,
                      now)


_STATES = sa.select(*[models.Service.__table__.c[name]
                      for name in ServiceState._fields]).where(
    models.Service.binary == sa.bindparam('binary')).order_by(
        models.Service.host, models.Service.id)


def recorded_storage(context, host: str) -> tuple[str | None, bool]:
    """(the storage identity ``host``'s compute service recorded, whether
    it recorded that storage as a mount point); (None, False) without a
    service row."""
    try:
        service = Service.get_by_host_and_binary(context, host,
                                                 COMPUTE_BINARY)
    except exception.ServiceNotFound:
        return None, False
    return (service.storage_identity or None,
            bool(service.storage_must_be_mounted))


class Service(base.NovaObject):
    model = models.Service
    fields = {
        'id': fields.Integer(),
        'uuid': fields.String(default=uuidutils.generate_uuid),
        'host': fields.String(),
        'binary': fields.String(),
        'topic': fields.String(),
        'report_count': fields.Integer(default=0, nullable=False),
        'disabled': fields.Boolean(default=False, nullable=False),
        'disabled_reason': fields.String(),
        'forced_down': fields.Boolean(default=False, nullable=False),
        'storage_identity': fields.String(),
        # nova.compute.storage_report: the storage of that identity must
        # be mounted at instances_path (its marker was flagged so).
        'storage_must_be_mounted': fields.Boolean(),
        'disk_leases': fields.String(),
        # Why configured leases are recorded as none (or unknown):
        # nova.compute.disk_leases, nova.virt.libvirt.lease_reach.
        'disk_leases_reason': fields.String(),
        'last_seen_up': fields.DateTime(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    # The fields as attributes, for readers and type checkers (their
    # values live on the instance; see base.NovaObject).
    id: int | None
    uuid: str | None
    host: str | None
    binary: str | None
    topic: str | None
    report_count: int
    disabled: bool
    disabled_reason: str | None
    forced_down: bool
    storage_identity: str | None
    storage_must_be_mounted: bool | None
    disk_leases: str | None
    disk_leases_reason: str | None
    last_seen_up: datetime.datetime | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    def create(self) -> 'Service':
        if self.id is not None:
            raise exception.InternalError(
                err='service %s is already created' % self.id)
        now = base.utcnow()
        self.created_at = self.created_at or now
        self.updated_at = now
        self._db_insert(conflict=exception.ServiceTopicExists(
            host=self.host, binary=self.binary))
        return self

    def save(self) -> None:
        if self.obj_what_changed():
            self._require_row(self._db_update())

    def _require_row(self, found: bool) -> None:
        if not found:
            raise exception.ServiceNotFound(service_id=self.id)

    def heartbeat(self) -> None:
        """report_count + 1 and last_seen_up = now, in one UPDATE.

        Other changed fields are written with it. The increment happens in
        SQL so concurrent heartbeats never lose a count.
        """
        self.last_seen_up = base.utcnow()
        self._require_row(self._db_update(
            extra={'report_count': models.Service.report_count + 1}))

    def is_up(self, service_down_time: int) -> bool:
        return _is_up(self.forced_down, self.last_seen_up, service_down_time)

    @classmethod
    def states(cls, context, binary: str) -> list[ServiceState]:
        """The ``ServiceState`` of every service of ``binary``, by host."""
        with db_api.reading() as connection:
            return cls._db_columns_as(ServiceState, connection.execute(
                _STATES, {'binary': binary}).all())

    @classmethod
    def get_by_id(cls, context, service_id) -> 'Service':
        obj = cls._db_get_one(context, models.Service.id == service_id)
        if obj is None:
            raise exception.ServiceNotFound(service_id=service_id)
        return obj

    @classmethod
    def get_by_host_and_binary(cls, context, host, binary) -> 'Service':
        obj = cls._db_read_one(context, _BY_HOST_AND_BINARY,
                               {'host': host, 'binary': binary})
        if obj is None:
            raise exception.ServiceNotFound(
                service_id='%s on host %s' % (binary, host))
        return obj

    @classmethod
    def get_all(cls, context, binary=None) -> list['Service']:
        filters = {} if binary is None else {'binary': binary}
        return cls._db_get_by(context, order_by=('host', 'id'), **filters)
