"""Server groups (``os-server-groups``) and the servers in them.

A group belongs to a project; it has one policy and, for anti-affinity,
``max_server_per_host``. A server is in at most one group (the member
row's instance uuid is unique). Where the members are is read from the
database at choice time (``member_hosts``): the host of each live member
plus the target of its evacuation still in flight, so a choice made while
another member is on its way somewhere already sees it there.

Groups are the control plane's (the API, the scheduler): the
``nova.objects`` package does not import this module, and a server
leaves its group with the instance (``Instance.leave_group``, which
``Instance.destroy`` calls), so nova-compute, deleting servers, loads
neither the module nor the groups' table.

Example::

    group = InstanceGroup(name='web', project_id=p, user_id=u,
                          policy=ANTI_AFFINITY).create()
    InstanceGroup.add_member(ctx, group.uuid, instance.uuid)
    InstanceGroup.member_hosts(ctx, group.uuid)   # {'compute1': 1}
"""

import dataclasses
import datetime

from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import control_models
from nova.db import models
from nova import exception
from nova.objects import base
from nova.objects import migration as migration_obj

AFFINITY = 'affinity'
ANTI_AFFINITY = 'anti-affinity'
SOFT_AFFINITY = 'soft-affinity'
SOFT_ANTI_AFFINITY = 'soft-anti-affinity'
POLICIES = (AFFINITY, ANTI_AFFINITY, SOFT_AFFINITY, SOFT_ANTI_AFFINITY)

_Group = control_models.InstanceGroup
_Member = models.InstanceGroupMember


@dataclasses.dataclass
class InstanceGroup:
    name: str
    project_id: str
    user_id: str
    policy: str
    # anti-affinity only; None: one member per host.
    max_server_per_host: int | None = None
    uuid: str = dataclasses.field(default_factory=uuidutils.generate_uuid)
    id: int | None = None
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None
    # The uuids of the servers in the group, oldest member first (read
    # with the group; not written by ``create``).
    members: list[str] = dataclasses.field(default_factory=list)

    @classmethod
    def _from_db_object(cls, db_obj, members: list[str]) -> 'InstanceGroup':
        values = {f.name: getattr(db_obj, f.name)
                  for f in dataclasses.fields(cls) if f.name != 'members'}
        return cls(members=members, **values)

    def create(self) -> 'InstanceGroup':
        if self.policy not in POLICIES:
            raise exception.Invalid(
                reason='unknown server group policy %r' % (self.policy,))
        if (self.max_server_per_host is not None
                and self.policy != ANTI_AFFINITY):
            raise exception.Invalid(
                reason='Only anti-affinity policy supports rules.')
        now = base.utcnow()
        with db_api.session() as session:
            result = session.execute(sa.insert(_Group).values(
                uuid=self.uuid, name=self.name, project_id=self.project_id,
                user_id=self.user_id, policy=self.policy,
                max_server_per_host=self.max_server_per_host,
                created_at=now, updated_at=None))
        self.id = result.inserted_primary_key[0]
        self.created_at = now
        return self

    @staticmethod
    def _members(session, group_uuids) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {uuid: [] for uuid in group_uuids}
        rows = session.execute(
            sa.select(_Member.group_uuid, _Member.instance_uuid)
            .where(_Member.group_uuid.in_(list(group_uuids)))
            .order_by(_Member.id)).all()
        for group_uuid, instance_uuid in rows:
            found[group_uuid].append(instance_uuid)
        return found

    @classmethod
    def get_by_uuid(cls, context, uuid: str) -> 'InstanceGroup':
        with db_api.session(read_only=True) as session:
            db_obj = session.scalars(sa.select(_Group).where(
                _Group.uuid == uuid)).first()
            if db_obj is None:
                raise exception.InstanceGroupNotFound(group_uuid=uuid)
            members = cls._members(session, [uuid])[uuid]
        return cls._from_db_object(db_obj, members)

    @classmethod
    def get_all(cls, context, project_id: str | None = None
                ) -> list['InstanceGroup']:
        """The groups of ``project_id`` (None: of every project), oldest
        first (the order pages follow)."""
        query = sa.select(_Group).order_by(_Group.id)
        if project_id is not None:
            query = query.where(_Group.project_id == project_id)
        with db_api.session(read_only=True) as session:
            rows = session.scalars(query).all()
            members = cls._members(session, [r.uuid for r in rows])
        return [cls._from_db_object(r, members[r.uuid]) for r in rows]

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid: str
                             ) -> 'InstanceGroup | None':
        """The group the server is in, or None."""
        with db_api.reading() as connection:
            group_uuid = connection.scalars(
                sa.select(_Member.group_uuid).where(
                    _Member.instance_uuid == instance_uuid)).first()
        if group_uuid is None:
            return None
        try:
            return cls.get_by_uuid(context, group_uuid)
        except exception.InstanceGroupNotFound:
            return None     # deleted meanwhile: the server is in none

    def destroy(self, context) -> None:
        """Delete the group; its servers stay, in no group."""
        with db_api.session() as session:
            session.execute(sa.delete(_Member).where(
                _Member.group_uuid == self.uuid))
            deleted = session.execute(sa.delete(_Group).where(
                _Group.uuid == self.uuid)).rowcount
        if deleted != 1:
            raise exception.InstanceGroupNotFound(group_uuid=self.uuid)

    @staticmethod
    def add_member(context, group_uuid: str, instance_uuid: str) -> None:
        """Put the server in the group; ``InstanceGroupNotFound`` when the
        group is gone (the foreign key decides, so a group deleted at the
        same moment never gains a member)."""
        try:
            with db_api.session() as session:
                if session.scalars(sa.select(_Group.id).where(
                        _Group.uuid == group_uuid)).first() is None:
                    raise exception.InstanceGroupNotFound(
                        group_uuid=group_uuid)
                session.execute(sa.insert(_Member).values(
                    group_uuid=group_uuid, instance_uuid=instance_uuid,
                    created_at=base.utcnow()))
        except sa_exc.IntegrityError as e:
            raise exception.Conflict(
                reason='server %s could not join server group %s: %s'
                       % (instance_uuid, group_uuid, e.orig))

    @staticmethod
    def member_hosts(context, group_uuid: str,
                     exclude_instance: str | None = None) -> dict[str, int]:
        """How many live members of the group each host has, or is
        receiving (an evacuation in flight to it), ``exclude_instance``
        (the server being placed) left out. A member counts once on
        each host it is on or going to."""
        instances = models.Instance
        with db_api.reading() as connection:
            placed = connection.execute(
                sa.select(instances.uuid, instances.host)
                .join(_Member, _Member.instance_uuid == instances.uuid)
                .where(_Member.group_uuid == group_uuid,
                       instances.deleted == sa.false(),
                       instances.host.is_not(None))).all()
            arriving = connection.execute(
                sa.select(models.Migration.instance_uuid,
                          models.Migration.dest_compute)
                .join(_Member,
                      _Member.instance_uuid == models.Migration.instance_uuid)
                .join(instances,
                      instances.uuid == models.Migration.instance_uuid)
                .where(_Member.group_uuid == group_uuid,
                       instances.deleted == sa.false(),
                       models.Migration.migration_type ==
                       migration_obj.EVACUATION,
                       models.Migration.status.in_(
                           list(migration_obj.IN_PROGRESS)),
                       models.Migration.dest_compute.is_not(None))).all()
        pairs = {(uuid, host) for uuid, host in [*placed, *arriving]
                 if uuid != exclude_instance}
        counts: dict[str, int] = {}
        for _uuid, host in pairs:
            counts[host] = counts.get(host, 0) + 1
        return counts
