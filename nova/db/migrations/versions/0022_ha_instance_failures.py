"""Instance failures, recorded by their compute host for nova-hamonitor.

Revision ID: 0022
Revises: 0021

``ha_instance_failures``: one row per guest that stopped without nova
stopping it (libvirt's lifecycle event), written by the compute host that
saw it, read by the region's one monitor, which posts Masakari's instance
failure notification or starts the instance and records the step it
reached, so that a failure is handled once even across monitor restarts.
"""

from alembic import op
import sqlalchemy as sa

revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'ha_instance_failures',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('event', sa.String(32), nullable=False),
        sa.Column('step', sa.String(16), nullable=False),
        sa.Column('monitor', sa.String(255), nullable=True),
        sa.Column('notification_uuid', sa.String(36), nullable=True),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True))
    op.create_index('ix_ha_instance_failures_instance_uuid',
                    'ha_instance_failures', ['instance_uuid'])
    op.create_index('ix_ha_instance_failures_step', 'ha_instance_failures',
                    ['step'])


def downgrade():
    op.drop_index('ix_ha_instance_failures_step', 'ha_instance_failures')
    op.drop_index('ix_ha_instance_failures_instance_uuid',
                  'ha_instance_failures')
    op.drop_table('ha_instance_failures')
