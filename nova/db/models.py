"""SQLAlchemy declarative models: the database schema as Python classes.

The schema itself is created by the versioned migrations in
``nova/db/migrations/versions``; a unit test checks that these models
(with the control plane's, ``nova.db.control_models``) and the migrated
schema agree. Change both together.
"""

import datetime

import sqlalchemy as sa
from sqlalchemy import orm

from nova.db import types

# Names constraints predictably, so later migrations can alter them by name.
NAMING_CONVENTION = {
    'ix': 'ix_%(table_name)s_%(column_0_N_name)s',
    'uq': 'uq_%(table_name)s_%(column_0_N_name)s',
    'fk': 'fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s',
    'pk': 'pk_%(table_name)s',
}

Timestamp = datetime.datetime


class Base(orm.DeclarativeBase):
    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {
        Timestamp: types.UTCDateTime(),
        dict: types.JSONText(),
        list: types.JSONText(),
    }


class TimestampMixin:
    created_at: orm.Mapped[Timestamp | None]
    updated_at: orm.Mapped[Timestamp | None]


def _str(length=255):
    return sa.String(length)


class Instance(TimestampMixin, Base):
    __tablename__ = 'instances'
    __table_args__ = (
        sa.Index(None, 'host', 'deleted'),
        sa.Index(None, 'vm_state', 'deleted'),
        # The usage audit sums a host's instances from this index alone.
        sa.Index('ix_instances_usage', 'host', 'deleted', 'flavor_vcpus',
                 'flavor_memory_mb', 'flavor_disk_gb'),
        # Quota usage is counted per project (0016).
        sa.Index(None, 'project_id', 'deleted'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), unique=True)
    display_name: orm.Mapped[str | None] = orm.mapped_column(_str())
    user_id: orm.Mapped[str | None] = orm.mapped_column(_str())
    project_id: orm.Mapped[str | None] = orm.mapped_column(_str())
    host: orm.Mapped[str | None] = orm.mapped_column(_str())
    node: orm.Mapped[str | None] = orm.mapped_column(_str())
    vm_state: orm.Mapped[str | None] = orm.mapped_column(_str())
    task_state: orm.Mapped[str | None] = orm.mapped_column(_str())
    power_state: orm.Mapped[int] = orm.mapped_column(default=0)
    flavor: orm.Mapped[dict | None]
    # What the flavor takes (objects.Instance writes them with it).
    flavor_vcpus: orm.Mapped[int | None]
    flavor_memory_mb: orm.Mapped[int | None]
    flavor_disk_gb: orm.Mapped[int | None]
    image_ref: orm.Mapped[str | None] = orm.mapped_column(_str())
    # The key pair the server was created with, by name (0011).
    key_name: orm.Mapped[str | None] = orm.mapped_column(_str())
    launched_at: orm.Mapped[Timestamp | None]
    terminated_at: orm.Mapped[Timestamp | None]
    network_info: orm.Mapped[list | None]
    system_metadata: orm.Mapped[dict | None]
    deleted: orm.Mapped[bool] = orm.mapped_column(default=False)
    deleted_at: orm.Mapped[Timestamp | None]
    # The token: the one attempt that may act on the instance now (NULL:
    # none); nova/objects/attempt.py.
    attempt_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    # The instance has disks holding its data (an attempt landed since
    # the last same-host rebuild replaced them).
    disks_exist: orm.Mapped[bool] = orm.mapped_column(
        default=False, server_default=sa.false())
    # The guest's hostname as the API shows it (0011).
    hostname: orm.Mapped[str | None] = orm.mapped_column(_str())
    # Where the owner says the server is reached (0011); never routed.
    access_ip_v4: orm.Mapped[str | None] = orm.mapped_column(_str(39))
    access_ip_v6: orm.Mapped[str | None] = orm.mapped_column(_str(39))
    # The availability zone the create asked for (0015); NULL: none.
    availability_zone: orm.Mapped[str | None] = orm.mapped_column(_str())
    # The server's description (2.19) and who locked it, why (0018).
    display_description: orm.Mapped[str | None] = orm.mapped_column(_str())
    locked_by: orm.Mapped[str | None] = orm.mapped_column(sa.String(16))
    locked_reason: orm.Mapped[str | None] = orm.mapped_column(_str())
    # A rebuild's user_data (2.57), base64 as given; never sent to a guest.
    user_data: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    # OS-DCF:diskConfig AUTO (true) or MANUAL (0020); recorded and shown,
    # nothing resizes the guest's partitions.
    auto_disk_config: orm.Mapped[bool] = orm.mapped_column(
        default=False, server_default=sa.false())


class InstanceAttempt(TimestampMixin, Base):
    """One attempt that may make a guest run or change an instance's
    disks: claimed with the token, ``landed`` with its result."""
    __tablename__ = 'instance_attempts'
    __table_args__ = (
        # A restart's recovery: the attempts its host claimed and never
        # ended.
        sa.Index(None, 'host', 'status'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), unique=True)
    instance_uuid: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), sa.ForeignKey('instances.uuid'), index=True)
    host: orm.Mapped[str] = orm.mapped_column(_str())
    operation: orm.Mapped[str] = orm.mapped_column(_str())
    migration_uuid: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(36))
    status: orm.Mapped[str] = orm.mapped_column(sa.String(16))


class InstanceFault(Base):
    __tablename__ = 'instance_faults'
    __table_args__ = (sa.Index(None, 'instance_uuid', 'created_at'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    instance_uuid: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), sa.ForeignKey('instances.uuid'))
    code: orm.Mapped[int]
    # Long enough for a refusal's reason and what unblocks it.
    message: orm.Mapped[str | None] = orm.mapped_column(_str(1024))
    # What the server's owner reads instead of ``message`` (0010).
    user_message: orm.Mapped[str | None] = orm.mapped_column(_str())
    details: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    host: orm.Mapped[str | None] = orm.mapped_column(_str())
    created_at: orm.Mapped[Timestamp | None]


class InstanceAction(TimestampMixin, Base):
    __tablename__ = 'instance_actions'
    __table_args__ = (sa.Index(None, 'instance_uuid', 'request_id'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    action: orm.Mapped[str] = orm.mapped_column(_str())
    instance_uuid: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), sa.ForeignKey('instances.uuid'))
    request_id: orm.Mapped[str | None] = orm.mapped_column(_str())
    user_id: orm.Mapped[str | None] = orm.mapped_column(_str())
    project_id: orm.Mapped[str | None] = orm.mapped_column(_str())
    start_time: orm.Mapped[Timestamp | None]
    finish_time: orm.Mapped[Timestamp | None]
    message: orm.Mapped[str | None] = orm.mapped_column(_str())


class InstanceActionEvent(TimestampMixin, Base):
    __tablename__ = 'instance_actions_events'
    __table_args__ = (sa.Index(None, 'action_id', 'event'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    action_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('instance_actions.id'))
    event: orm.Mapped[str] = orm.mapped_column(_str())
    start_time: orm.Mapped[Timestamp | None]
    finish_time: orm.Mapped[Timestamp | None]
    result: orm.Mapped[str | None] = orm.mapped_column(_str())
    traceback: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    host: orm.Mapped[str | None] = orm.mapped_column(_str())
    details: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    # What the server's owner reads instead of ``details`` (0010).
    user_details: orm.Mapped[str | None] = orm.mapped_column(_str())


class Migration(TimestampMixin, Base):
    __tablename__ = 'migrations'
    __table_args__ = (
        sa.Index(None, 'source_compute', 'status'),
        sa.Index(None, 'dest_compute', 'status'),
        sa.Index(None, 'instance_uuid', 'status'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), unique=True)
    instance_uuid: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), sa.ForeignKey('instances.uuid'))
    source_compute: orm.Mapped[str | None] = orm.mapped_column(_str())
    dest_compute: orm.Mapped[str | None] = orm.mapped_column(_str())
    source_node: orm.Mapped[str | None] = orm.mapped_column(_str())
    dest_node: orm.Mapped[str | None] = orm.mapped_column(_str())
    migration_type: orm.Mapped[str | None] = orm.mapped_column(_str())
    status: orm.Mapped[str | None] = orm.mapped_column(_str())


class Service(TimestampMixin, Base):
    __tablename__ = 'services'
    __table_args__ = (sa.UniqueConstraint('host', 'binary'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), unique=True)
    host: orm.Mapped[str] = orm.mapped_column(_str())
    binary: orm.Mapped[str] = orm.mapped_column(_str())
    topic: orm.Mapped[str | None] = orm.mapped_column(_str())
    report_count: orm.Mapped[int] = orm.mapped_column(default=0)
    disabled: orm.Mapped[bool] = orm.mapped_column(default=False)
    disabled_reason: orm.Mapped[str | None] = orm.mapped_column(_str())
    forced_down: orm.Mapped[bool] = orm.mapped_column(default=False)
    storage_identity: orm.Mapped[str | None] = orm.mapped_column(_str())
    # The storage of that identity is mounted at instances_path: while it
    # is not a mount point, the host's storage is missing (NULL: not said).
    storage_must_be_mounted: orm.Mapped[bool | None] = orm.mapped_column()
    # What the host's libvirt takes: lockd, sanlock, none (NULL: unknown).
    disk_leases: orm.Mapped[str | None] = orm.mapped_column(_str())
    # Why configured leases count as none (or unknown): they cannot reach
    # the other hosts (nova/virt/libvirt/lease_reach.py). NULL otherwise.
    disk_leases_reason: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    last_seen_up: orm.Mapped[Timestamp | None]


class HostUsage(Base):
    """What the live instances of one node of a host take, kept in step
    with every write of an instance row (``nova.objects.host_usage``)."""
    __tablename__ = 'host_usage'

    host: orm.Mapped[str] = orm.mapped_column(_str(), primary_key=True)
    # '' for instances with no node recorded (a primary key is not NULL).
    node: orm.Mapped[str] = orm.mapped_column(_str(), primary_key=True)
    instances: orm.Mapped[int] = orm.mapped_column(default=0)
    vcpus: orm.Mapped[int] = orm.mapped_column(default=0)
    memory_mb: orm.Mapped[int] = orm.mapped_column(default=0)
    disk_gb: orm.Mapped[int] = orm.mapped_column(default=0)


class ComputeNode(TimestampMixin, Base):
    """Capacity and use of one hypervisor node, reported by its host."""
    __tablename__ = 'compute_nodes'
    __table_args__ = (
        sa.UniqueConstraint('host', 'hypervisor_hostname',
                            name='uq_compute_nodes_host_node'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    host: orm.Mapped[str] = orm.mapped_column(_str())
    hypervisor_hostname: orm.Mapped[str] = orm.mapped_column(_str())
    hypervisor_type: orm.Mapped[str | None] = orm.mapped_column(_str())
    vcpus: orm.Mapped[int]
    memory_mb: orm.Mapped[int]
    local_gb: orm.Mapped[int]
    vcpus_used: orm.Mapped[int] = orm.mapped_column(default=0)
    memory_mb_used: orm.Mapped[int] = orm.mapped_column(default=0)
    local_gb_used: orm.Mapped[int] = orm.mapped_column(default=0)


class InstanceGroupMember(Base):
    """The group a server is in (at most one).

    Here, while its group is the control plane's
    (``nova.db.control_models.InstanceGroup``): nova-compute takes a
    deleted server out of its group (``Instance.leave_group``) and reads
    no group.
    """
    __tablename__ = 'instance_group_members'

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    group_uuid: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), sa.ForeignKey('instance_groups.uuid'), index=True)
    instance_uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36),
                                                       unique=True)
    created_at: orm.Mapped[Timestamp | None]


class Network(TimestampMixin, Base):
    __tablename__ = 'networks'

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), unique=True)
    name: orm.Mapped[str] = orm.mapped_column(_str())
    bridge: orm.Mapped[str] = orm.mapped_column(_str())
    cidr: orm.Mapped[str | None] = orm.mapped_column(sa.String(43))


PORT_STATUSES = ('DOWN', 'BUILD', 'ACTIVE', 'ERROR')


class Port(TimestampMixin, Base):
    __tablename__ = 'ports'
    __table_args__ = (
        sa.CheckConstraint(
            "status IN ('DOWN', 'BUILD', 'ACTIVE', 'ERROR')",
            name='ck_ports_status'),
        sa.UniqueConstraint('network_uuid', 'ip_address',
                            name='uq_ports_network_ip'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), unique=True)
    network_uuid: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), sa.ForeignKey('networks.uuid'), index=True)
    mac_address: orm.Mapped[str] = orm.mapped_column(
        sa.String(17), unique=True)
    # NOTE: no foreign key: the network layer may create a port before the
    # instance row exists, as Neutron does.
    instance_uuid: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(36), index=True)
    binding_host: orm.Mapped[str | None] = orm.mapped_column(_str())
    status: orm.Mapped[str] = orm.mapped_column(sa.String(16),
                                                default='DOWN')
    device_owner: orm.Mapped[str | None] = orm.mapped_column(_str())
    ip_address: orm.Mapped[str | None] = orm.mapped_column(sa.String(39))


class HaInstanceFailure(TimestampMixin, Base):
    """A guest that stopped on its own (its QEMU died), as its compute
    host saw it; what nova-hamonitor did about it (``nova.ha.
    instance_failure``), so that it is done once."""
    __tablename__ = 'ha_instance_failures'

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    # NOTE: no foreign key: the record outlives a deleted instance's row.
    instance_uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36),
                                                       index=True)
    host: orm.Mapped[str] = orm.mapped_column(_str())
    # What libvirt said: its lifecycle event and detail (STOPPED_FAILED).
    event: orm.Mapped[str] = orm.mapped_column(sa.String(32))
    step: orm.Mapped[str] = orm.mapped_column(sa.String(16), index=True)
    # The monitor (lease holder) that last advanced it.
    monitor: orm.Mapped[str | None] = orm.mapped_column(_str())
    notification_uuid: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(36))
    reason: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
