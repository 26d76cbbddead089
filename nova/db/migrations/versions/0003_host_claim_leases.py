"""Leases on compute hosts' claims, shared by every process that places.

Revision ID: 0003
Revises: 0002

``host_claim_leases``: one row while a process (nova-api placing a new
instance, nova-conductor choosing an evacuation target) reads a host's
usage and writes its claim, so that two processes never both give away
the host's last slot (``nova.objects.host_lease``).
"""

from alembic import op
import sqlalchemy as sa

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'host_claim_leases',
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('holder', sa.String(36), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('host', name='pk_host_claim_leases'))


def downgrade():
    op.drop_table('host_claim_leases')
