"""Which projects may see and use a private flavor.

A public flavor is every project's: it has no list (asking for one is
``FlavorIsPublic``). Grants are rows of ``flavor_projects`` keyed by the
flavor's row, so they go with the flavor when it is deleted.

Example::

    flavor_access.add(ctx, '42', 'project-a')     # FlavorAccessExists twice
    flavor_access.get_projects(ctx, '42')          # ['project-a']
    flavor_access.remove(ctx, '42', 'project-a')   # FlavorAccessNotFound
"""

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.objects import base
from nova.objects import flavor_catalog

_Flavor = control_models.Flavor
_Project = control_models.FlavorProject


def _private_row_id(session, flavorid) -> int:
    row = session.execute(sa.select(_Flavor.id, _Flavor.is_public).where(
        _Flavor.flavorid == str(flavorid))).first()
    if row is None:
        raise exception.FlavorNotFound(flavor_id=flavorid)
    if row.is_public:
        raise exception.FlavorIsPublic(flavor_id=flavorid)
    return row.id


def get_projects(context, flavorid) -> list[str]:
    """The projects granted the private flavor, in the order granted."""
    with db_api.reading() as connection:
        row_id = _private_row_id(connection, flavorid)
        return list(connection.scalars(sa.select(_Project.project_id).where(
            _Project.flavor_id == row_id).order_by(_Project.id)))


def add(context, flavorid, project_id: str) -> None:
    """Grant ``project_id`` the private flavor (the unique constraint
    refuses a second grant, also of a racing request)."""
    now = base.utcnow()
    try:
        with db_api.session() as session:
            row_id = _private_row_id(session, flavorid)
            session.execute(sa.insert(_Project).values(
                flavor_id=row_id, project_id=project_id, created_at=now,
                updated_at=now))
    except sa_exc.IntegrityError:
        raise exception.FlavorAccessExists(flavor_id=flavorid,
                                           project_id=project_id)


def remove(context, flavorid, project_id: str) -> None:
    deleted = flavor_catalog.delete_rows_of(
        flavorid, _Project, _Project.project_id == project_id)
    if deleted != 1:
        raise exception.FlavorAccessNotFound(flavor_id=flavorid,
                                             project_id=project_id)
