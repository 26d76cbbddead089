"""Initial schema.

Revision ID: 0001
Revises: none

Written out in full rather than generated from ``nova.db.models``: a
migration must keep producing the same schema after the models change.
"""

from alembic import op
import sqlalchemy as sa

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def _ts(name):
    return sa.Column(name, sa.DateTime(timezone=True), nullable=True)


def _str(name, nullable=True, length=255):
    return sa.Column(name, sa.String(length), nullable=nullable)


def _id(table):
    return (sa.Column('id', sa.Integer, nullable=False),
            sa.PrimaryKeyConstraint('id', name='pk_' + table))


def _uuid(table, column='uuid'):
    return (sa.Column(column, sa.String(36), nullable=False),
            sa.UniqueConstraint(column, name='uq_%s_%s' % (table, column)))


def _times():
    return (_ts('created_at'), _ts('updated_at'))


def _fk(table, column, ref_table, ref_column):
    return sa.ForeignKeyConstraint(
        [column], ['%s.%s' % (ref_table, ref_column)],
        name='fk_%s_%s_%s' % (table, column, ref_table))


def upgrade():
    op.create_table(
        'instances', *_id('instances'), *_uuid('instances'),
        _str('display_name'), _str('user_id'), _str('project_id'),
        _str('host'), _str('node'), _str('vm_state'), _str('task_state'),
        sa.Column('power_state', sa.Integer, nullable=False),
        sa.Column('flavor', sa.Text, nullable=True),
        _str('image_ref'), _ts('launched_at'), _ts('terminated_at'),
        sa.Column('network_info', sa.Text, nullable=True),
        sa.Column('system_metadata', sa.Text, nullable=True),
        *_times(),
        sa.Column('deleted', sa.Boolean, nullable=False),
        _ts('deleted_at'))
    op.create_index('ix_instances_host_deleted', 'instances',
                    ['host', 'deleted'])
    op.create_index('ix_instances_vm_state_deleted', 'instances',
                    ['vm_state', 'deleted'])

    op.create_table(
        'instance_faults', *_id('instance_faults'),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('code', sa.Integer, nullable=False),
        _str('message'), sa.Column('details', sa.Text, nullable=True),
        _str('host'), _ts('created_at'),
        _fk('instance_faults', 'instance_uuid', 'instances', 'uuid'))
    op.create_index('ix_instance_faults_instance_uuid_created_at',
                    'instance_faults', ['instance_uuid', 'created_at'])

    op.create_table(
        'instance_actions', *_id('instance_actions'),
        _str('action', nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        _str('request_id'), _str('user_id'), _str('project_id'),
        _ts('start_time'), _ts('finish_time'), _str('message'),
        *_times(),
        _fk('instance_actions', 'instance_uuid', 'instances', 'uuid'))
    op.create_index('ix_instance_actions_instance_uuid_request_id',
                    'instance_actions', ['instance_uuid', 'request_id'])

    op.create_table(
        'instance_actions_events', *_id('instance_actions_events'),
        sa.Column('action_id', sa.Integer, nullable=False),
        _str('event', nullable=False),
        _ts('start_time'), _ts('finish_time'), _str('result'),
        sa.Column('traceback', sa.Text, nullable=True), _str('host'),
        sa.Column('details', sa.Text, nullable=True), *_times(),
        _fk('instance_actions_events', 'action_id', 'instance_actions',
            'id'))
    op.create_index('ix_instance_actions_events_action_id_event',
                    'instance_actions_events', ['action_id', 'event'])

    op.create_table(
        'migrations', *_id('migrations'), *_uuid('migrations'),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        _str('source_compute'), _str('dest_compute'), _str('source_node'),
        _str('dest_node'), _str('migration_type'), _str('status'),
        *_times(),
        _fk('migrations', 'instance_uuid', 'instances', 'uuid'))
    for columns in (['source_compute', 'status'], ['dest_compute', 'status'],
                    ['instance_uuid', 'status']):
        op.create_index('ix_migrations_' + '_'.join(columns), 'migrations',
                        columns)

    op.create_table(
        'services', *_id('services'), *_uuid('services'),
        _str('host', nullable=False), _str('binary', nullable=False),
        _str('topic'),
        sa.Column('report_count', sa.Integer, nullable=False),
        sa.Column('disabled', sa.Boolean, nullable=False),
        _str('disabled_reason'),
        sa.Column('forced_down', sa.Boolean, nullable=False),
        _str('storage_identity'), _ts('last_seen_up'), *_times(),
        sa.UniqueConstraint('host', 'binary',
                            name='uq_services_host_binary'))

    op.create_table(
        'flavors', *_id('flavors'),
        _str('flavorid', nullable=False), _str('name', nullable=False),
        sa.Column('memory_mb', sa.Integer, nullable=False),
        sa.Column('vcpus', sa.Integer, nullable=False),
        sa.Column('root_gb', sa.Integer, nullable=False),
        sa.Column('ephemeral_gb', sa.Integer, nullable=False),
        sa.Column('swap', sa.Integer, nullable=False), *_times(),
        sa.UniqueConstraint('flavorid', name='uq_flavors_flavorid'),
        sa.UniqueConstraint('name', name='uq_flavors_name'))

    op.create_table(
        'networks', *_id('networks'), *_uuid('networks'),
        _str('name', nullable=False), _str('bridge', nullable=False),
        *_times())

    op.create_table(
        'ports', *_id('ports'), *_uuid('ports'),
        sa.Column('network_uuid', sa.String(36), nullable=False),
        sa.Column('mac_address', sa.String(17), nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=True),
        _str('binding_host'),
        sa.Column('status', sa.String(16), nullable=False),
        _str('device_owner'), *_times(),
        sa.UniqueConstraint('mac_address', name='uq_ports_mac_address'),
        sa.CheckConstraint(
            "status IN ('DOWN', 'BUILD', 'ACTIVE', 'ERROR')",
            name='ck_ports_status'),
        _fk('ports', 'network_uuid', 'networks', 'uuid'))
    op.create_index('ix_ports_network_uuid', 'ports', ['network_uuid'])
    op.create_index('ix_ports_instance_uuid', 'ports', ['instance_uuid'])
