"""Why a compute host's configured disk leases do not count.

Revision ID: 0009
Revises: 0008

``services.disk_leases_reason``: when the compute service found its
libvirt configured with leases that cannot reach the other hosts sharing
its disks (a lockspace directory on the host's own disk, an NFS mount
keeping locks on the client), it records ``disk_leases`` as ``none`` and
here why; when its mount table could not tell, ``disk_leases`` stays
NULL (unknown) and this says why. ``GET /os-services`` shows it with
``disk_leases``. NULL for every row written before this revision, and
whenever the recorded value needs no explanation.
"""

from alembic import op
import sqlalchemy as sa

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('services') as batch:
        batch.add_column(sa.Column('disk_leases_reason', sa.Text(),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('services') as batch:
        batch.drop_column('disk_leases_reason')
