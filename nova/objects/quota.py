"""Quota limits administrators set, at three levels: a quota class, a
project, one user of a project.

Each level is a table of (owner, resource, hard_limit) rows; a resource
without a row has no limit of its own at that level (``nova/compute/
quotas.py`` falls through to the level below). Only limits are stored:
usage is counted from the rows it is made of (``quota_usage.py``).

Example::

    QuotaLimits.for_project('demo').set({'ram': 5120})
    QuotaLimits.for_user('demo', 'alice').get()   # {'ram': 2048, ...}
    QuotaLimits.for_class('default').set({'instances': 20})
    QuotaLimits.for_project('demo').delete()      # and its users' rows
"""

import dataclasses

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import control_models
from nova.objects import base

DEFAULT_CLASS = 'default'
# {(table, owner columns): its SELECT of limits}: each is built once (a
# create reads all three levels, twice).
_LIMITS_OF: dict[tuple[type, tuple[str, ...]], sa.Select] = {}


@dataclasses.dataclass(frozen=True)
class QuotaLimits:
    """The stored limits of one owner: its table and the columns that
    name it (``{'project_id': 'demo'}``, ...)."""
    model: type
    owner: tuple[tuple[str, str], ...]

    @classmethod
    def for_class(cls, class_name: str) -> 'QuotaLimits':
        return cls(control_models.QuotaClass, (('class_name', class_name),))

    @classmethod
    def for_project(cls, project_id: str) -> 'QuotaLimits':
        return cls(control_models.Quota, (('project_id', project_id),))

    @classmethod
    def for_user(cls, project_id: str, user_id: str) -> 'QuotaLimits':
        return cls(control_models.ProjectUserQuota,
                   (('project_id', project_id), ('user_id', user_id)))

    def _where(self, model=None):
        model = model or self.model
        return [getattr(model, name) == value for name, value in self.owner]

    def get(self) -> dict[str, int]:
        """{resource: hard_limit} of the resources this owner has a row
        for."""
        names = tuple(name for name, _ in self.owner)
        query = _LIMITS_OF.get((self.model, names))
        if query is None:
            query = _LIMITS_OF[self.model, names] = sa.select(
                self.model.resource, self.model.hard_limit).where(*[
                    getattr(self.model, name) == sa.bindparam(name)
                    for name in names])
        with db_api.reading() as connection:
            rows = connection.execute(query, dict(self.owner)).all()
        return {resource: limit for resource, limit in rows}

    def set(self, limits: dict[str, int]) -> None:
        """Write ``limits`` (one row per resource, replacing the row
        there was), in one transaction."""
        try:
            self._set(limits)
        except sa_exc.IntegrityError:
            # NOTE: a racing set inserted one of these rows first; the
            # unique constraint refused ours, and now it is an update.
            self._set(limits)

    def _set(self, limits: dict[str, int]) -> None:
        now = base.utcnow()
        with db_api.session() as session:
            for resource, limit in sorted(limits.items()):
                where = self._where() + [self.model.resource == resource]
                updated = session.execute(
                    sa.update(self.model).where(*where)
                    .values(hard_limit=limit, updated_at=now)).rowcount
                if not updated:
                    session.execute(sa.insert(self.model).values(
                        resource=resource, hard_limit=limit,
                        created_at=now, **dict(self.owner)))

    def delete(self) -> None:
        """Forget this owner's limits; for a project, its users' too
        (they were set within the project's)."""
        with db_api.session() as session:
            session.execute(sa.delete(self.model).where(*self._where()))
            if self.model is control_models.Quota:
                user_quota = control_models.ProjectUserQuota
                session.execute(sa.delete(user_quota).where(
                    *self._where(user_quota)))
