"""Host-evacuate runs, recorded: the conductor runs them, clients poll.

Revision ID: 0013
Revises: 0012

``host_evacuations`` holds one row per run of host-evacuate (``POST
/os-host-evacuations``): the failed host, the operator's options, the
run's status and the conductor that runs it, so that a conductor that
starts again marks the runs it owned ``interrupted`` instead of leaving
them ``running`` forever. ``host_evacuation_instances`` holds one row per
instance of the host: its outcome, where it is, and every attempt made
for it (JSON: target, outcome, migration, message).
"""

from alembic import op
import sqlalchemy as sa

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'host_evacuations',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('source_host', sa.String(255), nullable=False),
        sa.Column('target_host', sa.String(255), nullable=True),
        sa.Column('on_shared_storage', sa.Boolean(), nullable=True),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('conductor', sa.String(255), nullable=True),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=True),
        sa.Column('skipped_targets', sa.Text(), nullable=True),
        sa.Column('message', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint('uuid', name='uq_host_evacuations_uuid'))
    op.create_index('ix_host_evacuations_conductor_status',
                    'host_evacuations', ['conductor', 'status'])
    op.create_table(
        'host_evacuation_instances',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('evacuation_uuid', sa.String(36),
                  sa.ForeignKey('host_evacuations.uuid',
                                name='fk_host_evacuation_instances_'
                                     'evacuation_uuid_host_evacuations'),
                  nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('outcome', sa.String(16), nullable=False),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('vm_state_before', sa.String(255), nullable=True),
        sa.Column('attempts', sa.Text(), nullable=True),
        sa.Column('message', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint(
            'evacuation_uuid', 'instance_uuid',
            name='uq_host_evacuation_instances_evacuation_uuid_'
                 'instance_uuid'))
    op.create_index('ix_host_evacuation_instances_evacuation_uuid',
                    'host_evacuation_instances', ['evacuation_uuid'])


def downgrade():
    op.drop_index('ix_host_evacuation_instances_evacuation_uuid',
                  'host_evacuation_instances')
    op.drop_table('host_evacuation_instances')
    op.drop_index('ix_host_evacuations_conductor_status',
                  'host_evacuations')
    op.drop_table('host_evacuations')
