"""Flavors: the size of an instance.

A flavor is a plain dataclass; an instance keeps a copy of the one it was
built with (``instance.flavor``, extra specs included), so later changes
to the flavors table (a new description, other extra specs, the flavor's
deletion) do not change existing instances.

A private flavor (``is_public`` false) is seen by administrators and by
the projects granted access to it (``nova.objects.flavor_access``); to
any other caller it does not exist (``FlavorNotFound``), in lists as in
lookups, so a project cannot boot from it.

Example::

    Flavor.create(ctx, '42', 'm1.big', 4096, 2, 40, is_public=False)
    Flavor.get_by_flavor_id(ctx, '42')      # FlavorNotFound unless visible
    Flavor.destroy_by_flavor_id(ctx, '42')
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
    rxtx_factor: float = 1.0
    is_public: bool = True
    description: str | None = None
    extra_specs: dict[str, str] = dataclasses.field(default_factory=dict)

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
    def _from_db_object(cls, db_obj, extra_specs: dict) -> 'Flavor':
        return cls(flavorid=db_obj.flavorid, name=db_obj.name,
                   memory_mb=db_obj.memory_mb, vcpus=db_obj.vcpus,
                   root_gb=db_obj.root_gb, ephemeral_gb=db_obj.ephemeral_gb,
                   swap=db_obj.swap, rxtx_factor=db_obj.rxtx_factor,
                   is_public=db_obj.is_public,
                   description=db_obj.description,
                   extra_specs=dict(extra_specs))

    def _row_values(self) -> dict:
        values = self.to_dict()
        del values['extra_specs']
        return values

    @classmethod
    def create(cls, context, flavorid, name, memory_mb, vcpus, root_gb,
               ephemeral_gb=0, swap=0, rxtx_factor=1.0, is_public=True,
               description=None) -> 'Flavor':
        """Insert the flavor; ``FlavorExists`` when its id or its name is
        taken (the unique constraints decide, so of two racing creates
        one fails and nothing of it is written)."""
        flavor = cls(flavorid=str(flavorid), name=name, memory_mb=memory_mb,
                     vcpus=vcpus, root_gb=root_gb, ephemeral_gb=ephemeral_gb,
                     swap=swap, rxtx_factor=rxtx_factor,
                     is_public=is_public, description=description)
        now = base.utcnow()
        try:
            with db_api.session() as session:
                session.execute(sa.insert(models.Flavor).values(
                    created_at=now, updated_at=now, **flavor._row_values()))
        except sa_exc.IntegrityError:
            raise exception.FlavorExists(flavor_id=flavorid, name=name)
        return flavor

    @classmethod
    def get_by_flavor_id(cls, context, flavorid) -> 'Flavor':
        """The flavor, if ``context`` may see it (else FlavorNotFound)."""
        with db_api.reading() as connection:
            db_obj = connection.execute(_visible(
                context, sa.select(_TABLE).where(
                    models.Flavor.flavorid == str(flavorid)))).first()
            if db_obj is None:
                raise exception.FlavorNotFound(flavor_id=flavorid)
            specs = _extra_specs(connection, [db_obj.id])
        return cls._from_db_object(db_obj, specs.get(db_obj.id, {}))

    @classmethod
    def get_all(cls, context, is_public: bool | None = None
                ) -> list['Flavor']:
        """The flavors ``context`` may see, smallest first.

        ``is_public`` None: every one of them; True: the public ones and
        the private ones the caller's project was granted; False: the
        private ones only.
        """
        query = _visible(context, sa.select(_TABLE))
        if is_public is True:
            query = query.where(sa.or_(models.Flavor.is_public.is_(True),
                                       _granted_to(context.project_id)))
        elif is_public is False:
            query = query.where(models.Flavor.is_public.is_(False))
        with db_api.reading() as connection:
            rows = connection.execute(query.order_by(
                models.Flavor.memory_mb, models.Flavor.flavorid)).all()
            specs = _extra_specs(connection, [r.id for r in rows])
        return [cls._from_db_object(r, specs.get(r.id, {})) for r in rows]

    @classmethod
    def update_description(cls, context, flavorid,
                           description: str | None) -> 'Flavor':
        with db_api.session() as session:
            updated = session.execute(sa.update(models.Flavor).where(
                models.Flavor.flavorid == str(flavorid)).values(
                    description=description,
                    updated_at=base.utcnow())).rowcount
        if updated != 1:
            raise exception.FlavorNotFound(flavor_id=flavorid)
        return cls.get_by_flavor_id(context, flavorid)

    @classmethod
    def destroy_by_flavor_id(cls, context, flavorid) -> None:
        """Delete the flavor with its extra specs and access grants, in
        one transaction. Instances keep their own copy of it."""
        with db_api.session() as session:
            row_id = row_id_of(session, flavorid)
            for model in (models.FlavorExtraSpec, models.FlavorProject):
                session.execute(sa.delete(model).where(
                    model.flavor_id == row_id))
            session.execute(sa.delete(models.Flavor).where(
                models.Flavor.id == row_id))


def row_id_of(session, flavorid) -> int:
    """The row id of a flavor (what the rows about it reference)."""
    row_id = session.scalars(sa.select(models.Flavor.id).where(
        models.Flavor.flavorid == str(flavorid))).first()
    if row_id is None:
        raise exception.FlavorNotFound(flavor_id=flavorid)
    return row_id


def delete_rows_of(flavorid, model, *criteria) -> int:
    """Delete the rows of ``model`` (extra specs, grants) about the flavor
    that match ``criteria``; how many there were."""
    with db_api.session() as session:
        row_id = row_id_of(session, flavorid)
        return session.execute(sa.delete(model).where(
            model.flavor_id == row_id, *criteria)).rowcount


# Flavors are read as Core rows (by column name), a third of the cost of
# ORM objects: one is read at every boot.
_TABLE = models.Flavor.__table__


def _granted_to(project_id):
    return models.Flavor.id.in_(
        sa.select(models.FlavorProject.flavor_id).where(
            models.FlavorProject.project_id == project_id))


def _visible(context, query):
    """``query`` narrowed to the flavors ``context`` may see."""
    if context.is_admin:
        return query
    return query.where(sa.or_(models.Flavor.is_public.is_(True),
                              _granted_to(context.project_id)))


def _extra_specs(session, row_ids: list[int]) -> dict[int, dict]:
    """The extra specs of each flavor row, by row id (``session``: an ORM
    session or a Core connection)."""
    found: dict[int, dict] = {}
    if not row_ids:
        return found
    rows = session.execute(sa.select(
        models.FlavorExtraSpec.flavor_id, models.FlavorExtraSpec.key,
        models.FlavorExtraSpec.value).where(
            models.FlavorExtraSpec.flavor_id.in_(row_ids))).all()
    for flavor_id, key, value in rows:
        found.setdefault(flavor_id, {})[key] = value
    return found
