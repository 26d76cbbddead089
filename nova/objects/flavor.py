"""Flavors: the size of an instance.

A flavor is a plain dataclass; an instance keeps a copy of the one it was
built with (``instance.flavor``), so later changes to the flavors table do
not change existing instances.
"""

import dataclasses

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import models
from nova import exception
from nova.objects import base


@base.register
@dataclasses.dataclass
class Flavor:
    flavorid: str
    name: str
    memory_mb: int
    vcpus: int
    root_gb: int
    ephemeral_gb: int = 0
    swap: int = 0

    @property
    def disk_gb(self) -> int:
        """The disk the flavor takes on a host: root, ephemeral and swap
        (MiB, rounded up to a GiB)."""
        swap_gb = -(-int(self.swap or 0) // 1024)
        return self.root_gb + (self.ephemeral_gb or 0) + swap_gb

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> 'Flavor':
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})

    @classmethod
    def _from_db_object(cls, db_obj) -> 'Flavor':
        return cls(**{f.name: getattr(db_obj, f.name)
                      for f in dataclasses.fields(cls)})

    @classmethod
    def create(cls, context, flavorid, name, memory_mb, vcpus, root_gb,
               ephemeral_gb=0, swap=0) -> 'Flavor':
        flavor = cls(flavorid=str(flavorid), name=name, memory_mb=memory_mb,
                     vcpus=vcpus, root_gb=root_gb, ephemeral_gb=ephemeral_gb,
                     swap=swap)
        now = base.utcnow()
        try:
            with db_api.session() as session:
                session.execute(sa.insert(models.Flavor).values(
                    created_at=now, updated_at=now, **flavor.to_dict()))
        except sa_exc.IntegrityError:
            raise exception.FlavorExists(flavor_id=flavorid, name=name)
        return flavor

    @classmethod
    def get_by_flavor_id(cls, context, flavorid) -> 'Flavor':
        with db_api.session(read_only=True) as session:
            db_obj = session.scalars(sa.select(models.Flavor).where(
                models.Flavor.flavorid == str(flavorid))).first()
        if db_obj is None:
            raise exception.FlavorNotFound(flavor_id=flavorid)
        return cls._from_db_object(db_obj)

    @classmethod
    def get_all(cls, context) -> list['Flavor']:
        with db_api.session(read_only=True) as session:
            rows = session.scalars(sa.select(models.Flavor).order_by(
                models.Flavor.memory_mb, models.Flavor.flavorid)).all()
        return [cls._from_db_object(r) for r in rows]
