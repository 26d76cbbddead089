"""What each instance's flavor takes, as columns placement can sum.

Revision ID: 0006
Revises: 0005

``instances.flavor_vcpus``, ``flavor_memory_mb``, ``flavor_disk_gb`` (root
+ ephemeral + swap rounded up to a GiB) repeat the flavor the instance
keeps as JSON, written with it by ``objects.Instance``; the index over the
host and these columns lets placement sum a host's usage from the index
alone (``nova/scheduler/usage.py``). Rows written before this revision get
them from their flavor here.
"""

import json

from alembic import op
import sqlalchemy as sa

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

COLUMNS = ('flavor_vcpus', 'flavor_memory_mb', 'flavor_disk_gb')


def _takes(flavor):
    if not flavor:
        return None, None, None
    swap_gb = -(-int(flavor.get('swap') or 0) // 1024)
    return (int(flavor.get('vcpus') or 0), int(flavor.get('memory_mb') or 0),
            int(flavor.get('root_gb') or 0)
            + int(flavor.get('ephemeral_gb') or 0) + swap_gb)


def upgrade():
    with op.batch_alter_table('instances') as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=True))
    op.create_index('ix_instances_usage', 'instances',
                    ['host', 'deleted', *COLUMNS])
    instances = sa.table('instances', sa.column('id', sa.Integer),
                         sa.column('flavor', sa.Text),
                         *(sa.column(name, sa.Integer) for name in COLUMNS))
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(instances.c.id, instances.c.flavor).where(
            instances.c.flavor.is_not(None))).all()
    for row_id, flavor in rows:
        values = dict(zip(COLUMNS, _takes(json.loads(flavor))))
        connection.execute(instances.update().where(
            instances.c.id == row_id).values(**values))


def downgrade():
    op.drop_index('ix_instances_usage', 'instances')
    with op.batch_alter_table('instances') as batch:
        for name in COLUMNS:
            batch.drop_column(name)
