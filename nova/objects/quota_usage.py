"""What a project (or one of its users) uses, counted from the rows it is
made of, never from a running total that could drift from them.

An instance counts while its row is not deleted, whatever its state
(an ERROR instance from a failed build still holds its flavor's share
until it is deleted); it is one row wherever it runs, so an evacuation
cannot count it twice. Key pairs belong to users and are counted per
user.

Example::

    used = InstanceUsage.count('demo')               # the whole project
    used = InstanceUsage.count('demo', user_id='alice')
    used.instances, used.cores, used.ram
    count_key_pairs('alice')
"""

import dataclasses

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova.db import models


@dataclasses.dataclass(frozen=True)
class InstanceUsage:
    instances: int = 0
    cores: int = 0
    ram: int = 0

    @classmethod
    def count(cls, project_id: str,
              user_id: str | None = None) -> 'InstanceUsage':
        row = models.Instance
        query = sa.select(
            sa.func.count(row.id),
            sa.func.coalesce(sa.func.sum(row.flavor_vcpus), 0),
            sa.func.coalesce(sa.func.sum(row.flavor_memory_mb), 0),
        ).where(row.project_id == project_id, row.deleted.is_(False))
        if user_id is not None:
            query = query.where(row.user_id == user_id)
        with db_api.reading() as connection:
            instances, cores, ram = connection.execute(query).one()
        return cls(instances=int(instances), cores=int(cores), ram=int(ram))

    @classmethod
    def count_with_user(cls, project_id: str, user_id: str
                        ) -> tuple['InstanceUsage', 'InstanceUsage']:
        """The project's usage and that of its user ``user_id``, in one
        read: what a quota check of both scopes needs."""
        row = models.Instance
        mine = row.user_id == user_id

        def total(column):
            return sa.func.coalesce(sa.func.sum(column), 0)

        def of_user(column):
            return total(sa.case((mine, column), else_=0))
        query = sa.select(
            sa.func.count(row.id), total(row.flavor_vcpus),
            total(row.flavor_memory_mb), of_user(1),
            of_user(row.flavor_vcpus), of_user(row.flavor_memory_mb),
        ).where(row.project_id == project_id, row.deleted.is_(False))
        with db_api.reading() as connection:
            values = [int(v) for v in connection.execute(query).one()]
        return (cls(*values[:3]), cls(*values[3:]))


def count_key_pairs(user_id: str) -> int:
    with db_api.reading() as connection:
        return connection.scalar(
            sa.select(sa.func.count(control_models.KeyPair.id))
            .where(control_models.KeyPair.user_id == user_id))
