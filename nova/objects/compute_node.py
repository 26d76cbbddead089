"""Compute nodes: the capacity and use each compute host records.

A compute host writes one row per hypervisor node it serves (one for
libvirt) when it starts and every ``update_resources_interval`` seconds
(``nova.compute.resources``). Anything in another process, the conductor
above all, reads them to know how big a host is::

    node = objects.ComputeNode.create_or_update(ctx, 'compute1', resources)
    [n.to_host_resources() for n in
     objects.ComputeNode.get_by_host(ctx, 'compute1')]

A row is keyed by ``(host, hypervisor_hostname)``; writing the same key
again updates it in place.
"""

import collections
import datetime

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import models
from nova.model import hardware
from nova.objects import base
from nova.objects import fields

# The columns a HostResources value sets (all but the key and timestamps).
_RESOURCE_FIELDS = ('hypervisor_type', 'vcpus', 'memory_mb', 'local_gb',
                    'vcpus_used', 'memory_mb_used', 'local_gb_used')


# The columns of a node's capacity (``capacities_by_hosts``): the key and
# what a HostResources value sets, as the ComputeNode fields of the names.
_Capacity = collections.namedtuple(
    '_Capacity', ('host', 'hypervisor_hostname') + _RESOURCE_FIELDS)


_CAPACITIES = sa.select(*[models.ComputeNode.__table__.c[name]
                          for name in _Capacity._fields]).where(
    models.ComputeNode.host.in_(sa.bindparam('hosts', expanding=True))
).order_by(models.ComputeNode.host, models.ComputeNode.hypervisor_hostname)


def _resources(node) -> hardware.HostResources:
    """The capacity of ``node`` (a ``ComputeNode`` or a ``_Capacity``)."""
    return hardware.HostResources(
        hypervisor_hostname=node.hypervisor_hostname, vcpus=node.vcpus,
        memory_mb=node.memory_mb, local_gb=node.local_gb,
        vcpus_used=node.vcpus_used, memory_mb_used=node.memory_mb_used,
        local_gb_used=node.local_gb_used,
        hypervisor_type=node.hypervisor_type or '')


class ComputeNode(base.NovaObject):
    model = models.ComputeNode
    fields = {
        'id': fields.Integer(),
        'host': fields.String(),
        'hypervisor_hostname': fields.String(),
        'hypervisor_type': fields.String(),
        'vcpus': fields.Integer(default=0, nullable=False),
        'memory_mb': fields.Integer(default=0, nullable=False),
        'local_gb': fields.Integer(default=0, nullable=False),
        'vcpus_used': fields.Integer(default=0, nullable=False),
        'memory_mb_used': fields.Integer(default=0, nullable=False),
        'local_gb_used': fields.Integer(default=0, nullable=False),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    # The fields as attributes, for readers and type checkers (their
    # values live on the instance; see base.NovaObject).
    id: int | None
    host: str | None
    hypervisor_hostname: str | None
    hypervisor_type: str | None
    vcpus: int
    memory_mb: int
    local_gb: int
    vcpus_used: int
    memory_mb_used: int
    local_gb_used: int
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    def __repr__(self):
        return 'ComputeNode(id=%r, host=%r, hypervisor_hostname=%r)' % (
            self.id, self.host, self.hypervisor_hostname)

    @classmethod
    def create_or_update(cls, context, host: str,
                         resources: hardware.HostResources
                         ) -> 'ComputeNode':
        """Record ``resources`` as the node ``resources.hypervisor_hostname``
        of ``host``: insert the row, or update it when it exists.

        Returns the row as written.
        """
        values = {name: getattr(resources, name)
                  for name in _RESOURCE_FIELDS}
        values['hypervisor_type'] = values['hypervisor_type'] or None
        # NOTE: UPDATE first, INSERT when nothing matched. Two writers of
        # the same new key (only a misconfiguration, two services with one
        # host name, can do that) make one INSERT fail on the unique
        # constraint; its second attempt then finds the row and updates it.
        for attempt in (1, 2):
            try:
                return cls._upsert(context, host,
                                   resources.hypervisor_hostname, values)
            except sa_exc.IntegrityError:
                if attempt == 2:
                    raise

    @classmethod
    def _upsert(cls, context, host, nodename, values) -> 'ComputeNode':
        table = models.ComputeNode.__table__
        key = (table.c.host == host, table.c.hypervisor_hostname == nodename)
        now = base.utcnow()
        with db_api.writing() as connection:
            updated = connection.execute(sa.update(table).where(*key).values(
                updated_at=now, **values))
            if updated.rowcount == 0:
                connection.execute(sa.insert(table).values(
                    host=host, hypervisor_hostname=nodename,
                    created_at=now, updated_at=now, **values))
            row = connection.execute(sa.select(table).where(*key)).one()
        return cls._from_db_object(context, row)

    @classmethod
    def get_by_host(cls, context, host: str) -> list['ComputeNode']:
        """The nodes ``host`` recorded, by node name; [] when none."""
        return cls._db_get_all(
            context, models.ComputeNode.host == host,
            order_by=[models.ComputeNode.hypervisor_hostname])

    @classmethod
    def capacities_by_hosts(cls, context, hosts
                            ) -> list[tuple[str, hardware.HostResources]]:
        """(host, capacity) of each node of ``hosts``, by host and node
        name: read as columns, not as objects (a target choice reads every
        host of the region)."""
        with db_api.reading() as connection:
            rows = connection.execute(_CAPACITIES,
                                      {'hosts': list(hosts)}).all()
            return [(row.host, _resources(row))
                    for row in cls._db_columns_as(_Capacity, rows)]

    @classmethod
    def get_all(cls, context) -> list['ComputeNode']:
        return cls._db_get_all(
            context, order_by=[models.ComputeNode.host,
                               models.ComputeNode.hypervisor_hostname])

    def destroy(self) -> None:
        """Delete the row (a node its host no longer serves). Idempotent."""
        table = models.ComputeNode.__table__
        with db_api.writing() as connection:
            connection.execute(sa.delete(table).where(table.c.id == self.id))

    def to_host_resources(self) -> hardware.HostResources:
        return _resources(self)
