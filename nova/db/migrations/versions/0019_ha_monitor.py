"""nova-hamonitor: its lease, its alerts, its host recoveries.

Revision ID: 0019
Revises: 0014

``ha_monitor_leases``: one row per region, the monitor that may act there
and until when (``nova.ha.lease``). ``ha_alerts``: a failed host the
monitor did not recover, and why (no fence agent and private disks).
``ha_host_recoveries``: one row per recovery of a failed host, with the
step it reached and the host-evacuate run it started, so that a host is
recovered once even when it flaps or its monitor restarts midway
(``nova.ha.recovery``).
"""

from alembic import op
import sqlalchemy as sa

revision = '0019'
# NOTE: 0015-0018 are taken by work merged in parallel; whoever merges
# this after them points this at the newest one.
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'ha_monitor_leases',
        sa.Column('region', sa.String(255), nullable=False),
        sa.Column('holder', sa.String(255), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('region', name='pk_ha_monitor_leases'))
    op.create_table(
        'ha_alerts',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True))
    op.create_index('ix_ha_alerts_host', 'ha_alerts', ['host'])
    op.create_table(
        'ha_host_recoveries',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('step', sa.String(16), nullable=False),
        sa.Column('monitor', sa.String(255), nullable=False),
        sa.Column('fenced', sa.Boolean(), nullable=False),
        sa.Column('evacuation_uuid', sa.String(36), nullable=True),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True))
    op.create_index('ix_ha_host_recoveries_host', 'ha_host_recoveries',
                    ['host'])


def downgrade():
    op.drop_index('ix_ha_host_recoveries_host', 'ha_host_recoveries')
    op.drop_table('ha_host_recoveries')
    op.drop_index('ix_ha_alerts_host', 'ha_alerts')
    op.drop_table('ha_alerts')
    op.drop_table('ha_monitor_leases')
