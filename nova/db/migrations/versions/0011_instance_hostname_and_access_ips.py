"""What a server create names beyond its display name.

Revision ID: 0011
Revises: 0010

``instances.hostname``: the guest's hostname as the API shows it
(``OS-EXT-SRV-ATTR:hostname``), given at create from microversion 2.90 or
derived from the display name. ``instances.access_ip_v4`` and
``access_ip_v6``: the addresses the owner says the server is reached at
(``accessIPv4``, ``accessIPv6``); nothing here routes them.

Rows written before this revision keep NULL: the API shows the hostname
derived from their display name, and empty access addresses, which is
what it showed for them before.
"""

from alembic import op
import sqlalchemy as sa

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('hostname', sa.String(255),
                                   nullable=True))
        # 39: the longest IPv6 address written out in full.
        batch.add_column(sa.Column('access_ip_v4', sa.String(39),
                                   nullable=True))
        batch.add_column(sa.Column('access_ip_v6', sa.String(39),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('instances') as batch:
        batch.drop_column('access_ip_v6')
        batch.drop_column('access_ip_v4')
        batch.drop_column('hostname')
