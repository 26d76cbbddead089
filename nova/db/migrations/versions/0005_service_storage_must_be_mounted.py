"""Whether a compute host's recorded storage must be a mount point.

Revision ID: 0005
Revises: 0004

``services.storage_must_be_mounted``: the storage identity the compute
service recorded was read from a marker flagged by ``nova-manage host
init-storage --mount-point``. The service keeps it so that, when the mount
is missing and the flagged marker is hidden under it, it still knows that
the directory it then sees is not its storage (NULL: not said, as for
every row written before this revision).
"""

from alembic import op
import sqlalchemy as sa

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('services') as batch:
        batch.add_column(sa.Column('storage_must_be_mounted', sa.Boolean(),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('services') as batch:
        batch.drop_column('storage_must_be_mounted')
