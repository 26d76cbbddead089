"""The flavors an operator defines: create, look up, list, describe and
delete the rows of the flavors table (``nova.db.control_models``); what
they return is the value, ``nova.objects.flavor.Flavor``.

A private flavor (``is_public`` false) is seen by administrators and by
the projects granted access to it (``nova.objects.flavor_access``); to
any other caller it does not exist (``FlavorNotFound``), in lists as in
lookups, so a project cannot boot from it.

Only the control plane (the API, nova-all's and the test clusters' first
flavor) imports this module: nova-compute gets its instances' flavors
with the instances.

Example::

    flavor_catalog.create(ctx, '42', 'm1.big', 4096, 2, 40, is_public=False)
    flavor_catalog.get_by_flavor_id(ctx, '42')  # FlavorNotFound unless
                                                # visible
    flavor_catalog.destroy_by_flavor_id(ctx, '42')
"""

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.objects import base
from nova.objects.flavor import Flavor

_Flavor = control_models.Flavor
_Project = control_models.FlavorProject
_ExtraSpec = control_models.FlavorExtraSpec
# Flavors are read as Core rows (by column name), a third of the cost of
# ORM objects: one is read at every boot.
_TABLE = _Flavor.__table__


def create(context, flavorid, name, memory_mb, vcpus, root_gb,
           ephemeral_gb=0, swap=0, rxtx_factor=1.0, is_public=True,
           description=None) -> Flavor:
    """Insert the flavor; ``FlavorExists`` when its id or its name is
    taken (the unique constraints decide, so of two racing creates one
    fails and nothing of it is written)."""
    flavor = Flavor(flavorid=str(flavorid), name=name, memory_mb=memory_mb,
                    vcpus=vcpus, root_gb=root_gb, ephemeral_gb=ephemeral_gb,
                    swap=swap, rxtx_factor=rxtx_factor,
                    is_public=is_public, description=description)
    values = flavor.to_dict()
    del values['extra_specs']
    now = base.utcnow()
    try:
        with db_api.session() as session:
            session.execute(sa.insert(_Flavor).values(
                created_at=now, updated_at=now, **values))
    except sa_exc.IntegrityError:
        raise exception.FlavorExists(flavor_id=flavorid, name=name)
    return flavor


def get_by_flavor_id(context, flavorid) -> Flavor:
    """The flavor, if ``context`` may see it (else FlavorNotFound)."""
    with db_api.reading() as connection:
        row = connection.execute(_visible(
            context, sa.select(_TABLE).where(
                _Flavor.flavorid == str(flavorid)))).first()
        if row is None:
            raise exception.FlavorNotFound(flavor_id=flavorid)
        specs = _extra_specs(connection, [row.id])
    return _from_row(row, specs.get(row.id, {}))


def get_all(context, is_public: bool | None = None) -> list[Flavor]:
    """The flavors ``context`` may see, smallest first.

    ``is_public`` None: every one of them; True: the public ones and the
    private ones the caller's project was granted; False: the private
    ones only.
    """
    query = _visible(context, sa.select(_TABLE))
    if is_public is True:
        query = query.where(sa.or_(_Flavor.is_public.is_(True),
                                   _granted_to(context.project_id)))
    elif is_public is False:
        query = query.where(_Flavor.is_public.is_(False))
    with db_api.reading() as connection:
        rows = connection.execute(query.order_by(
            _Flavor.memory_mb, _Flavor.flavorid)).all()
        specs = _extra_specs(connection, [r.id for r in rows])
    return [_from_row(r, specs.get(r.id, {})) for r in rows]


def update_description(context, flavorid,
                       description: str | None) -> Flavor:
    with db_api.session() as session:
        updated = session.execute(sa.update(_Flavor).where(
            _Flavor.flavorid == str(flavorid)).values(
                description=description,
                updated_at=base.utcnow())).rowcount
    if updated != 1:
        raise exception.FlavorNotFound(flavor_id=flavorid)
    return get_by_flavor_id(context, flavorid)


def destroy_by_flavor_id(context, flavorid) -> None:
    """Delete the flavor with its extra specs and access grants, in one
    transaction. Instances keep their own copy of it."""
    with db_api.session() as session:
        row_id = row_id_of(session, flavorid)
        for model in (_ExtraSpec, _Project):
            session.execute(sa.delete(model).where(
                model.flavor_id == row_id))
        session.execute(sa.delete(_Flavor).where(_Flavor.id == row_id))


def row_id_of(session, flavorid) -> int:
    """The row id of a flavor (what the rows about it reference)."""
    row_id = session.scalars(sa.select(_Flavor.id).where(
        _Flavor.flavorid == str(flavorid))).first()
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


def _from_row(row, extra_specs: dict) -> Flavor:
    return Flavor(flavorid=row.flavorid, name=row.name,
                  memory_mb=row.memory_mb, vcpus=row.vcpus,
                  root_gb=row.root_gb, ephemeral_gb=row.ephemeral_gb,
                  swap=row.swap, rxtx_factor=row.rxtx_factor,
                  is_public=row.is_public, description=row.description,
                  extra_specs=dict(extra_specs))


def _granted_to(project_id):
    return _Flavor.id.in_(
        sa.select(_Project.flavor_id).where(
            _Project.project_id == project_id))


def _visible(context, query):
    """``query`` narrowed to the flavors ``context`` may see."""
    if context.is_admin:
        return query
    return query.where(sa.or_(_Flavor.is_public.is_(True),
                              _granted_to(context.project_id)))


def _extra_specs(session, row_ids: list[int]) -> dict[int, dict]:
    """The extra specs of each flavor row, by row id (``session``: an ORM
    session or a Core connection)."""
    found: dict[int, dict] = {}
    if not row_ids:
        return found
    rows = session.execute(sa.select(
        _ExtraSpec.flavor_id, _ExtraSpec.key, _ExtraSpec.value).where(
            _ExtraSpec.flavor_id.in_(row_ids))).all()
    for flavor_id, key, value in rows:
        found.setdefault(flavor_id, {})[key] = value
    return found
