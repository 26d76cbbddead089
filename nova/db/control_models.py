"""The tables only the control plane uses: servers' metadata (the API
and nova-hamonitor read it), server groups (their members' table stays
in ``nova.db.models``: a deleted server leaves its group), flavors (with
their access grants and extra specs: an instance carries a copy of its
flavor, so nova-compute never reads them), aggregates, key pairs,
quotas, the scheduler's host claim leases, host evacuations and
nova-hamonitor's leases, alerts and recoveries.

Apart from ``nova.db.models`` (whose ``Base`` they share: one schema,
one ``Base.metadata`` once both are imported) so that nova-compute, which
uses none of them, neither defines nor configures their mappers (about
1 MiB). The migrations create them like every other table.
"""

import sqlalchemy as sa
from sqlalchemy import orm

from nova.db.models import _str
from nova.db.models import Base
from nova.db.models import Timestamp
from nova.db.models import TimestampMixin


class InstanceMetadata(TimestampMixin, Base):
    """One key/value pair of a server's metadata (0018)."""
    __tablename__ = 'instance_metadata'
    __table_args__ = (
        sa.UniqueConstraint('instance_uuid', 'key'),
        # Finding the servers that carry a key (and value).
        sa.Index('ix_instance_metadata_key_value', 'key', 'value'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    instance_uuid: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), sa.ForeignKey('instances.uuid'))
    key: orm.Mapped[str] = orm.mapped_column(_str())
    value: orm.Mapped[str] = orm.mapped_column(_str())


class InstanceGroup(TimestampMixin, Base):
    """A server group (os-server-groups, 0017)."""
    __tablename__ = 'instance_groups'

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), unique=True)
    name: orm.Mapped[str] = orm.mapped_column(_str())
    project_id: orm.Mapped[str] = orm.mapped_column(_str(), index=True)
    user_id: orm.Mapped[str] = orm.mapped_column(_str())
    # affinity, anti-affinity, soft-affinity or soft-anti-affinity.
    policy: orm.Mapped[str] = orm.mapped_column(sa.String(32))
    # anti-affinity's one rule; NULL: one member per host.
    max_server_per_host: orm.Mapped[int | None]


class Flavor(TimestampMixin, Base):
    """A size an instance is built with (os-flavors)."""
    __tablename__ = 'flavors'

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    flavorid: orm.Mapped[str] = orm.mapped_column(_str(), unique=True)
    name: orm.Mapped[str] = orm.mapped_column(_str(), unique=True)
    memory_mb: orm.Mapped[int]
    vcpus: orm.Mapped[int]
    root_gb: orm.Mapped[int]
    ephemeral_gb: orm.Mapped[int] = orm.mapped_column(default=0)
    swap: orm.Mapped[int] = orm.mapped_column(default=0)
    # A private flavor is seen by administrators and the projects in
    # flavor_projects only (0014).
    is_public: orm.Mapped[bool] = orm.mapped_column(
        default=True, server_default=sa.true())
    rxtx_factor: orm.Mapped[float] = orm.mapped_column(
        sa.Float, default=1.0, server_default='1.0')
    description: orm.Mapped[str | None] = orm.mapped_column(sa.Text)


class FlavorProject(TimestampMixin, Base):
    """A project granted access to a private flavor (os-flavor-access)."""
    __tablename__ = 'flavor_projects'
    __table_args__ = (sa.UniqueConstraint('flavor_id', 'project_id'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    flavor_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('flavors.id'))
    project_id: orm.Mapped[str] = orm.mapped_column(_str())


class FlavorExtraSpec(TimestampMixin, Base):
    """One key/value spec of a flavor (os-extra_specs)."""
    __tablename__ = 'flavor_extra_specs'
    __table_args__ = (sa.UniqueConstraint('flavor_id', 'key'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    flavor_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('flavors.id'))
    key: orm.Mapped[str] = orm.mapped_column(_str())
    value: orm.Mapped[str] = orm.mapped_column(_str())


class HostClaimLease(Base):
    """Who may write claims on one compute host right now (host_lease)."""
    __tablename__ = 'host_claim_leases'

    host: orm.Mapped[str] = orm.mapped_column(_str(), primary_key=True)
    holder: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    expires_at: orm.Mapped[Timestamp]


class KeyPair(TimestampMixin, Base):
    """A user's public key (os-keypairs); never a private key."""
    __tablename__ = 'key_pairs'
    __table_args__ = (sa.UniqueConstraint('user_id', 'name'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    name: orm.Mapped[str] = orm.mapped_column(_str())
    user_id: orm.Mapped[str] = orm.mapped_column(_str())
    fingerprint: orm.Mapped[str] = orm.mapped_column(_str())
    public_key: orm.Mapped[str] = orm.mapped_column(sa.Text)
    # 'ssh' or 'x509'.
    type: orm.Mapped[str] = orm.mapped_column(sa.String(16))


class Aggregate(TimestampMixin, Base):
    """An operator's group of compute hosts (os-aggregates)."""
    __tablename__ = 'aggregates'

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), unique=True)
    name: orm.Mapped[str] = orm.mapped_column(_str(), unique=True)


class AggregateHost(TimestampMixin, Base):
    __tablename__ = 'aggregate_hosts'
    __table_args__ = (sa.UniqueConstraint('aggregate_id', 'host'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    aggregate_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('aggregates.id'))
    # A host's zone is read by host, for every server shown.
    host: orm.Mapped[str] = orm.mapped_column(_str(), index=True)


class AggregateMetadata(TimestampMixin, Base):
    __tablename__ = 'aggregate_metadata'
    __table_args__ = (sa.UniqueConstraint('aggregate_id', 'key'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    aggregate_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('aggregates.id'))
    key: orm.Mapped[str] = orm.mapped_column(_str())
    value: orm.Mapped[str] = orm.mapped_column(_str())


class _QuotaLimit(TimestampMixin):
    """An owner's limit of one resource (the owner's columns are the
    table's own)."""
    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    resource: orm.Mapped[str] = orm.mapped_column(_str())
    hard_limit: orm.Mapped[int]


class Quota(_QuotaLimit, Base):
    """A project's limit, set by an administrator."""
    __tablename__ = 'quotas'
    __table_args__ = (sa.UniqueConstraint('project_id', 'resource'),)

    project_id: orm.Mapped[str] = orm.mapped_column(_str())


class ProjectUserQuota(_QuotaLimit, Base):
    """One user's limit within a project."""
    __tablename__ = 'project_user_quotas'
    __table_args__ = (
        sa.UniqueConstraint('project_id', 'user_id', 'resource'),)

    project_id: orm.Mapped[str] = orm.mapped_column(_str())
    user_id: orm.Mapped[str] = orm.mapped_column(_str())


class QuotaClass(_QuotaLimit, Base):
    """A quota class's limit (``default``: every project's)."""
    __tablename__ = 'quota_classes'
    __table_args__ = (sa.UniqueConstraint('class_name', 'resource'),)

    class_name: orm.Mapped[str] = orm.mapped_column(_str())


class HostEvacuation(TimestampMixin, Base):
    """One run of host-evacuate: every instance of a failed host."""
    __tablename__ = 'host_evacuations'
    __table_args__ = (
        # A conductor's start: the runs it owned and never ended.
        sa.Index(None, 'conductor', 'status'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), unique=True)
    source_host: orm.Mapped[str] = orm.mapped_column(_str())
    target_host: orm.Mapped[str | None] = orm.mapped_column(_str())
    on_shared_storage: orm.Mapped[bool | None] = orm.mapped_column()
    status: orm.Mapped[str] = orm.mapped_column(sa.String(16))
    # The conductor that runs it (NULL until one takes it).
    conductor: orm.Mapped[str | None] = orm.mapped_column(_str())
    user_id: orm.Mapped[str | None] = orm.mapped_column(_str())
    project_id: orm.Mapped[str | None] = orm.mapped_column(_str())
    # Targets left out for the rest of the run: {host: why}.
    skipped_targets: orm.Mapped[dict | None]
    message: orm.Mapped[str | None] = orm.mapped_column(sa.Text)


class HostEvacuationInstance(TimestampMixin, Base):
    """What became of one instance of a host-evacuate run."""
    __tablename__ = 'host_evacuation_instances'
    __table_args__ = (
        sa.UniqueConstraint('evacuation_uuid', 'instance_uuid'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    evacuation_uuid: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), sa.ForeignKey('host_evacuations.uuid'), index=True)
    # NOTE: no foreign key: the record of a run outlives a deleted
    # instance's row.
    instance_uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    outcome: orm.Mapped[str] = orm.mapped_column(sa.String(16))
    host: orm.Mapped[str | None] = orm.mapped_column(_str())
    vm_state_before: orm.Mapped[str | None] = orm.mapped_column(_str())
    # Every attempt, oldest first: target, outcome, migration, message.
    attempts: orm.Mapped[list | None]
    message: orm.Mapped[str | None] = orm.mapped_column(sa.Text)


class HaMonitorLease(Base):
    """Which nova-hamonitor may act in a region, until when
    (``nova.ha.lease``)."""
    __tablename__ = 'ha_monitor_leases'

    region: orm.Mapped[str] = orm.mapped_column(_str(), primary_key=True)
    holder: orm.Mapped[str] = orm.mapped_column(_str())
    expires_at: orm.Mapped[Timestamp]


class HaAlert(Base):
    """A failed host the monitor could not recover safely, and why."""
    __tablename__ = 'ha_alerts'

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    host: orm.Mapped[str] = orm.mapped_column(_str(), index=True)
    reason: orm.Mapped[str] = orm.mapped_column(sa.Text)
    created_at: orm.Mapped[Timestamp | None]


class HaHostRecovery(TimestampMixin, Base):
    """One recovery of one failed host by nova-hamonitor: how far it got
    (``nova.ha.recovery``), so that it is done once."""
    __tablename__ = 'ha_host_recoveries'

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    host: orm.Mapped[str] = orm.mapped_column(_str(), index=True)
    step: orm.Mapped[str] = orm.mapped_column(sa.String(16))
    # The monitor (lease holder) that last advanced it.
    monitor: orm.Mapped[str] = orm.mapped_column(_str())
    fenced: orm.Mapped[bool]
    # The host-evacuate run it started (NULL until it did).
    evacuation_uuid: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(36))
    # The Masakari notification it posted ([ha] recovery = masakari;
    # NULL until Masakari accepted one).
    notification_uuid: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(36))
    reason: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
