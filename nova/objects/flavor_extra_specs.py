"""Writing a flavor's extra specs (reading them comes with the flavor:
``Flavor.extra_specs``).

Example::

    flavor_extra_specs.update(ctx, '42', {'hw:cpu_policy': 'dedicated'})
    flavor_extra_specs.delete(ctx, '42', 'hw:cpu_policy')
"""

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.objects import base
from nova.objects import flavor_catalog

_Spec = control_models.FlavorExtraSpec


def update(context, flavorid, specs: dict[str, str]) -> None:
    """Set each key of ``specs`` (new keys added, others overwritten), all
    or none."""
    now = base.utcnow()
    with db_api.session() as session:
        row_id = flavor_catalog.row_id_of(session, flavorid)
        existing = set(session.scalars(sa.select(_Spec.key).where(
            _Spec.flavor_id == row_id)))
        for key, value in specs.items():
            if key in existing:
                session.execute(sa.update(_Spec).where(
                    _Spec.flavor_id == row_id, _Spec.key == key).values(
                        value=value, updated_at=now))
            else:
                session.execute(sa.insert(_Spec).values(
                    flavor_id=row_id, key=key, value=value,
                    created_at=now, updated_at=now))


def delete(context, flavorid, key: str) -> None:
    deleted = flavor_catalog.delete_rows_of(flavorid, _Spec,
                                            _Spec.key == key)
    if deleted != 1:
        raise exception.FlavorExtraSpecsNotFound(flavor_id=flavorid,
                                                 extra_specs_key=key)
