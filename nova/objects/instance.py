"""Instances, and the compare-and-swap save that guards their states.

``Instance(ctx, **fields)`` builds an object without touching the
database; ``create()`` inserts it. ``save()`` writes only what changed, in
one ``UPDATE`` whose ``WHERE`` clause carries the expected task and vm
states, so two requests racing for the same instance cannot both win::

    instance.task_state = task_states.REBUILDING
    instance.save(expected_task_state=[None])   # or raises
"""

import datetime

from oslo_utils import uuidutils
import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import models
from nova import exception
from nova.model import network as network_model
from nova.model import task_states
from nova.model import vm_states
from nova.objects import attempt as attempt_obj
from nova.objects import base
from nova.objects import fields
from nova.objects import flavor as flavor_obj
from nova.objects import host_usage

_READ_DELETED = ('no', 'yes', 'only')
_MEMBERS = models.InstanceGroupMember.__table__


class _MigrationLost(Exception):
    """Raised inside a transaction to roll it back (``save``)."""


# get_by_uuid's statements, by read_deleted, built once: SQLAlchemy then
# finds the compiled form by the statement itself, instead of building
# and hashing a new one at each of the most frequent read of all.
_BY_UUID: dict[str, sa.Select] = {}
# The column each of save()'s expectations checks.
_EXPECTED_COLUMNS = {'expected_task_state': models.Instance.task_state,
                     'expected_vm_state': models.Instance.vm_state,
                     'expected_host': models.Instance.host,
                     'expected_attempt': models.Instance.attempt_id}
# {the expectations' names and shapes: save()'s UPDATE}, each built once;
# its SET clause is made of the parameters given at execution.
_SAVES: dict[tuple, sa.Update] = {}


def _save_statement(shapes: tuple) -> sa.Update:
    update = _SAVES.get(shapes)
    if update is None:
        table = models.Instance
        update = sa.update(table.__table__).where(
            table.uuid == sa.bindparam('row_uuid'), *[
                base.bound_match(_EXPECTED_COLUMNS[name], name, shape)
                for name, shape in shapes]).returning(table.__table__)
        _SAVES[shapes] = update
    return update


class Instance(base.NovaObject):
    model = models.Instance
    fields = {
        'id': fields.Integer(),
        # A new object has its uuid at once: layers below (the virt
        # driver, paths under instances_path) need it before any create().
        'uuid': fields.String(default=uuidutils.generate_uuid),
        'user_id': fields.String(),
        'project_id': fields.String(),
        'display_name': fields.String(),
        'host': fields.String(),
        'node': fields.String(),
        'vm_state': fields.String(),
        'task_state': fields.String(),
        'power_state': fields.Integer(default=0, nullable=False),
        'flavor': fields.Object(flavor_obj.Flavor),
        'image_ref': fields.String(),
        # The key pair the server was created with, by name.
        'key_name': fields.String(),
        'launched_at': fields.DateTime(),
        'terminated_at': fields.DateTime(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
        'deleted': fields.Boolean(default=False, nullable=False),
        'deleted_at': fields.DateTime(),
        'network_info': fields.NetworkInfo(),
        'system_metadata': fields.Dict(),
        # The token: the attempt that may act on the instance now
        # (``nova/objects/attempt.py``); None when none may.
        'attempt_id': fields.String(),
        # The instance has disks that hold its data (a durable fact, set
        # when an attempt lands; never read from the vm_state).
        'disks_exist': fields.Boolean(default=False, nullable=False),
        # The guest's hostname as the API shows it; None for a row
        # written before it was stored (the API derives it then).
        'hostname': fields.String(),
        # Where the owner says the server is reached (``accessIPv4``,
        # ``accessIPv6``), in canonical form; nothing here routes them.
        'access_ip_v4': fields.String(),
        'access_ip_v6': fields.String(),
        # The availability zone the create asked for (None: none): an
        # evacuation keeps to it. The zone shown is the host's
        # (``nova.compute.availability_zones``).
        'availability_zone': fields.String(),
        # The owner's description of the server (microversion 2.19).
        'display_description': fields.String(),
        # Who locked the server (``locks.OWNER`` or ``locks.ADMIN``; None:
        # unlocked) and why (2.73); a locked server refuses every change
        # asked by anyone but an administrator.
        'locked_by': fields.String(),
        'locked_reason': fields.String(),
        # What a rebuild was given as ``user_data`` (base64, as given);
        # shown by the API, handed to no guest (there is no metadata
        # service or config drive here).
        'user_data': fields.String(),
        # ``OS-DCF:diskConfig``: AUTO (true) or MANUAL, as the create, the
        # last rebuild or an update asked; recorded and shown, never acted
        # on (the root disk is the flavor's size either way).
        'auto_disk_config': fields.Boolean(default=False, nullable=False),
    }

    # The fields as attributes, for readers and type checkers (their
    # values live on the instance; see base.NovaObject).
    id: int | None
    uuid: str | None
    user_id: str | None
    project_id: str | None
    display_name: str | None
    host: str | None
    node: str | None
    vm_state: str | None
    task_state: str | None
    power_state: int
    flavor: 'flavor_obj.Flavor | None'
    image_ref: str | None
    key_name: str | None
    launched_at: datetime.datetime | None
    terminated_at: datetime.datetime | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None
    deleted: bool
    deleted_at: datetime.datetime | None
    network_info: network_model.NetworkInfo
    system_metadata: dict
    attempt_id: str | None
    disks_exist: bool
    hostname: str | None
    access_ip_v4: str | None
    access_ip_v6: str | None
    availability_zone: str | None
    display_description: str | None
    locked_by: str | None
    locked_reason: str | None
    user_data: str | None
    auto_disk_config: bool

    @property
    def locked(self) -> bool:
        return self.locked_by is not None

    def create(self, and_action=None, and_give_back=None,
               and_ports=()) -> 'Instance':
        """INSERT the instance (``InstanceExists`` when its UUID is taken).

        ``and_action``: the ``InstanceAction`` that creates it
        (``InstanceAction.starting``), inserted in the same transaction.
        ``and_ports``: ``Port`` objects whose changed fields (their
        binding to the instance's host) are written in the same
        transaction (``PortNotFound``, nothing written, when one is gone).
        ``and_give_back``: the ``host_lease.Lease`` (or
        ``host_lease.Together``) this row's claim on its host was made
        under, given back in the same transaction (the row
        is not written when the lease was lost: ``HostClaimLeaseLost``).
        """
        if self.id is not None:
            raise exception.InternalError(
                err='instance %s is already created' % self.uuid)
        if self.uuid is None:
            self.uuid = uuidutils.generate_uuid()
        if not uuidutils.is_uuid_like(self.uuid):
            raise exception.InvalidUUID(uuid=self.uuid)
        if self.vm_state is None:
            self.vm_state = vm_states.BUILDING
        now = base.utcnow()
        self.created_at = self.created_at or now
        self.updated_at = now

        def also(session, values):
            host_usage.move(session, None, host_usage.share_of_values(values))
            if and_action is not None:
                and_action.write_in(session)
            for port in and_ports:
                port.write_in(session)
            if and_give_back is not None:
                and_give_back.give_back_in(session)

        try:
            self._db_insert(
                conflict=exception.InstanceExists(name=self.uuid), also=also)
        except Exception:
            if and_action is not None and and_action.id is not None:
                and_action._forget_id()
            raise
        return self

    @classmethod
    def _query(cls, read_deleted='no'):
        """SELECT of instances, as Core rows (``_db_select``)."""
        if read_deleted not in _READ_DELETED:
            raise exception.InvalidInput(
                reason='read_deleted must be one of %s' % (_READ_DELETED,))
        query = cls._db_select()
        if read_deleted == 'no':
            query = query.where(models.Instance.deleted.is_(False))
        elif read_deleted == 'only':
            query = query.where(models.Instance.deleted.is_(True))
        return query

    @classmethod
    def get_by_uuid(cls, context, uuid, read_deleted='no') -> 'Instance':
        query = _BY_UUID.get(read_deleted)
        if query is None:
            query = _BY_UUID[read_deleted] = cls._query(
                read_deleted).where(
                    models.Instance.uuid == sa.bindparam('instance_uuid'))
        with db_api.reading() as connection:
            row = connection.execute(query, {'instance_uuid': uuid}).first()
        if row is None:
            raise exception.InstanceNotFound(instance_id=uuid)
        return cls._from_db_object(context, row)

    @classmethod
    def find(cls, context, uuid) -> 'Instance | None':
        """The instance, deleted or not, or None if the database never
        had it (what the cleanup workflows ask: whose is this?)."""
        try:
            return cls.get_by_uuid(context, uuid, read_deleted='yes')
        except exception.InstanceNotFound:
            return None

    def _db_values(self, names=None) -> dict:
        values = super()._db_values(names)
        if 'flavor' in values:
            # What the flavor takes, as columns placement sums.
            flavor = self.flavor
            values.update(
                flavor_vcpus=flavor.vcpus if flavor else None,
                flavor_memory_mb=flavor.memory_mb if flavor else None,
                flavor_disk_gb=flavor.disk_gb if flavor else None)
        return values

    @classmethod
    def flavor_totals(cls, context, host: str, node: str | None = None,
                      exclude_uuid: str | None = None
                      ) -> tuple[int, int, int]:
        """(vCPUs, MiB of memory, GiB of disk) the flavors of the live
        instances on ``host`` (and ``node``) add up to, ``exclude_uuid``
        left out; disk is root + ephemeral + swap rounded up to a GiB.

        Read from the host's counters (``host_usage``, kept with every
        write of an instance row): one row per node, whatever the number
        of instances (placement reads it at every choice).
        """
        return host_usage.totals(host, node=node, exclude_uuid=exclude_uuid)

    @classmethod
    def flavor_totals_by_host(cls, context, hosts,
                              exclude_uuid: str | None = None
                              ) -> dict[str, tuple[int, int, int]]:
        """``flavor_totals`` of each of ``hosts``, in one read."""
        return host_usage.totals_by_host(hosts, exclude_uuid=exclude_uuid)

    @classmethod
    def get_all(cls, context, host=None, vm_state=None,
                include_deleted=False) -> list['Instance']:
        query = cls._query('yes' if include_deleted else 'no')
        if host is not None:
            query = query.where(models.Instance.host == host)
        if vm_state is not None:
            query = query.where(
                base.matches(models.Instance.vm_state, vm_state))
        query = query.order_by(models.Instance.created_at,
                               models.Instance.id)
        with db_api.reading() as connection:
            rows = connection.execute(query).all()
        return [cls._from_db_object(context, r) for r in rows]

    @classmethod
    def get_by_host(cls, context, host) -> list['Instance']:
        return cls.get_all(context, host=host)

    def save(self, expected_task_state=base.UNSET,
             expected_vm_state=base.UNSET,
             expected_host=base.UNSET, and_migration=None,
             expected_attempt=base.UNSET, and_attempt=None,
             and_event=None, and_ports=()) -> None:
        """Write the changed fields; compare-and-swap on the states.

        ``expected_host`` (a host or a list; ``None`` means no host yet)
        is checked against the row's host before this save's own change
        of it, in the same ``UPDATE``: a compute host claiming an instance
        an evacuation moved away loses, atomically.

        ``expected_attempt``: the attempt token (``attempt_id``) the row
        must still hold (``AttemptSuperseded`` otherwise): an attempt
        records its result only while it is the instance's.
        ``and_attempt``: an ``InstanceAttempt`` inserted (a claim) or
        updated (its status) in the same transaction.

        ``and_event``: an ``InstanceActionEvent`` whose changed fields (its
        end) are written in the same transaction: the state and the
        action's record of it change together, in one commit. An event not
        written yet (``InstanceActionEvent.record(deferred=True)``) is
        inserted: its start, with the claim of what it records.

        ``and_ports``: ``Port`` objects whose changed fields (a binding)
        are written in the same transaction (``PortNotFound``, nothing
        written, when one is gone).

        ``and_migration``: ``(migration, expected_status)``, or a list of
        such pairs, whose changed fields are written in the same
        transaction, each by compare-and-swap on its status (with no
        change, only its ``updated_at``: a check that holds the row until
        the commit): every row changes or none does
        (``UnexpectedMigrationStatusError`` when a migration lost, the
        instance row then untouched). A migration not written is reloaded
        from the database.

        Raises ``InstanceNotOnThisHost`` for the host,
        ``UnexpectedTaskStateError`` (``...DeletingTaskState...`` when the
        instance is being deleted, ``UnexpectedVMStateError`` for the
        vm_state) and leaves the object as it was when no row matched.
        """
        changed = self.obj_what_changed() - {'id', 'uuid', 'updated_at'}
        checks = any(e is not base.UNSET for e in (
            expected_task_state, expected_vm_state, expected_host,
            expected_attempt))
        if not changed and not checks and and_event is None and \
                not and_ports:
            return
        values = self._db_values(changed)
        values['updated_at'] = base.utcnow()
        table = models.Instance
        expected = tuple((name, value) for name, value in (
            ('expected_task_state', expected_task_state),
            ('expected_vm_state', expected_vm_state),
            ('expected_host', expected_host),
            ('expected_attempt', expected_attempt))
            if value is not base.UNSET)
        update = _save_statement(tuple(
            (name, base.match_shape(value)) for name, value in expected))
        # The values as parameters: built into the statement, they cost
        # more than the UPDATE itself.
        params = dict(values, row_uuid=self.uuid)
        for name, value in expected:
            base.bind_match(name, value, params)
        migrations = ([] if and_migration is None
                      else list(and_migration)
                      if isinstance(and_migration, list)
                      else [and_migration])
        moves = bool(changed & host_usage.SHARE_FIELDS)
        try:
            with db_api.writing() as connection:
                if moves:
                    # Locked until the commit: the share the counters
                    # give back is the one this UPDATE replaces.
                    before = host_usage.share_of(connection, self.uuid,
                                                 lock=True)
                db_obj = connection.execute(update, params).first()
                if db_obj is not None:
                    for migration, expected in migrations:
                        self._save_migration(connection, migration, expected)
                    if and_attempt is not None:
                        and_attempt.write_in(connection)
                    if and_event is not None:
                        and_event.write_in(connection)
                    for port in and_ports:
                        port.write_in(connection)
                    if moves:
                        host_usage.move(connection, before,
                                        host_usage.share_of_row(db_obj))
                    self._update_from_db_object(db_obj)
                    return
                columns = table.__table__.c
                actual = connection.execute(
                    sa.select(columns.task_state, columns.vm_state,
                              columns.host, columns.attempt_id,
                              columns.deleted).where(
                        columns.uuid == self.uuid)).first()
        except _MigrationLost as lost:
            # The transaction rolled back: no row changed. The migrations
            # written before the one that lost hold values that never
            # reached the database.
            for migration, _ in migrations:
                migration.refresh()
            migration, expected = lost.args
            raise exception.UnexpectedMigrationStatusError(
                migration_id=migration.id, expected=expected,
                actual=migration.status)
        # The instance lost: no migration was written.
        for migration, _ in migrations:
            migration.refresh()
        self._raise_conflict(actual, expected_task_state, expected_vm_state,
                             expected_host, expected_attempt)

    @staticmethod
    def _save_migration(session, migration, expected_status):
        # The row as written comes back with the UPDATE (RETURNING).
        row = session.execute(migration.update_statement(
            expected_status)).first()
        if row is None:
            raise _MigrationLost(migration, expected_status)
        migration._update_from_db_object(row)

    def _raise_conflict(self, actual, expected_task, expected_vm,
                        expected_host, expected_attempt=base.UNSET):
        if actual is None:
            raise exception.InstanceNotFound(instance_id=self.uuid)
        actual_task, actual_vm, actual_host, actual_attempt, deleted = actual
        if expected_attempt is not base.UNSET and (
                actual_attempt not in base.as_list(expected_attempt)):
            # The token first: whoever holds it now owns the instance,
            # whatever its other columns say.
            expected = base.as_list(expected_attempt)
            raise exception.AttemptSuperseded(
                attempt=expected[0] if len(expected) == 1 else expected,
                instance_uuid=self.uuid,
                why=attempt_obj.why_not_current(
                    actual_attempt, bool(deleted), expected[0]),
                step='recording its result', expected=expected_attempt,
                actual=actual_attempt)
        # The host first: an instance moved away is not ours whatever its
        # states say.
        if expected_host is not base.UNSET and (
                actual_host not in base.as_list(expected_host)):
            raise exception.InstanceNotOnThisHost(
                instance_uuid=self.uuid, expected=expected_host,
                actual=actual_host)
        if expected_task is not base.UNSET and (
                actual_task not in base.as_list(expected_task)):
            cls = (exception.UnexpectedDeletingTaskStateError
                   if actual_task == task_states.DELETING
                   else exception.UnexpectedTaskStateError)
            raise cls(instance_uuid=self.uuid, expected=expected_task,
                      actual=actual_task)
        raise exception.UnexpectedVMStateError(
            instance_uuid=self.uuid, expected=expected_vm, actual=actual_vm)

    def refresh(self) -> None:
        """Reload every field from the database (deleted rows too)."""
        fresh = self.get_by_uuid(self._context, self.uuid, read_deleted='yes')
        self._update_from_db_object_of(fresh)

    def _update_from_db_object_of(self, other: 'Instance') -> None:
        for name in self.fields:
            object.__setattr__(self, name, getattr(other, name))
        self.obj_reset_changes()

    def destroy(self) -> None:
        """Soft delete: the row stays, marked deleted."""
        now = base.utcnow()
        self.deleted = True
        self.deleted_at = now
        self.terminated_at = self.terminated_at or now
        self.vm_state = vm_states.DELETED
        self.task_state = None
        self.save()
        # A deleted server is in no group: the group's members and its
        # policy's counts stop naming it.
        self.leave_group(self._context, self.uuid)

    @staticmethod
    def leave_group(context, instance_uuid: str) -> None:
        """Take the server out of its server group, if it is in one.

        The member row only: the groups themselves are the control
        plane's (``nova.objects.instance_group``), which nova-compute,
        deleting servers, does not load.
        """
        with db_api.writing() as connection:
            connection.execute(sa.delete(_MEMBERS).where(
                _MEMBERS.c.instance_uuid == instance_uuid))
