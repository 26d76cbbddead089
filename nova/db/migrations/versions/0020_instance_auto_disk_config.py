"""The server's OS-DCF:diskConfig.

Revision ID: 0020
Revises: 0019

``instances.auto_disk_config`` is true when the create, the last rebuild
or an update asked for ``AUTO``, false for ``MANUAL`` (the API shows it as
``OS-DCF:diskConfig``). It is recorded and shown only: the root disk is
made the flavor's size either way and nothing here resizes the guest's
partitions (doc/source/api.rst). Every row written before this revision
is false, which is the ``MANUAL`` the API showed for it.
"""

from alembic import op
import sqlalchemy as sa

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('auto_disk_config', sa.Boolean,
                                   nullable=False,
                                   server_default=sa.false()))


def downgrade():
    with op.batch_alter_table('instances') as batch:
        batch.drop_column('auto_disk_config')
