"""The disk leases each compute host's libvirt takes.

Revision ID: 0004
Revises: 0003

``services.disk_leases``: what the compute service read from its host's
libvirt configuration at start (``lockd``, ``sanlock``, ``none``; NULL:
not reported or unknown), so that ``GET /os-services`` can say which
hosts share storage without leases (doc/source/cleanup.rst, "Fencing").
"""

from alembic import op
import sqlalchemy as sa

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('services') as batch:
        batch.add_column(sa.Column('disk_leases', sa.String(255),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('services') as batch:
        batch.drop_column('disk_leases')
