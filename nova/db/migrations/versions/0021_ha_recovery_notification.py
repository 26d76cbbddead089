"""A host recovery records the Masakari notification it posted.

Revision ID: 0021
Revises: 0020

``ha_host_recoveries.notification_uuid``: with ``[ha] recovery =
masakari`` the monitor hands a failed host to Masakari instead of starting
host-evacuate; the uuid Masakari gave the host-failure notification is
kept with the recovery, so that it is posted once and an operator finds
it (``nova-manage ha recoveries``).
"""

from alembic import op
import sqlalchemy as sa

revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('ha_host_recoveries') as batch:
        batch.add_column(sa.Column('notification_uuid', sa.String(36),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('ha_host_recoveries') as batch:
        batch.drop_column('notification_uuid')
