"""What each host's live instances take, kept as counters.

Revision ID: 0007
Revises: 0006

``host_usage`` holds, per host and node, the number of live instances and
the sum of what their flavors take; ``objects.Instance`` changes it in the
transaction that writes an instance row (``nova/objects/host_usage.py``),
so placement reads one row per candidate host. Filled here from the
instances the database holds; the compute hosts' periodic audit corrects
any later drift.
"""

from alembic import op
import sqlalchemy as sa

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'host_usage',
        sa.Column('host', sa.String(255), primary_key=True),
        sa.Column('node', sa.String(255), primary_key=True),
        sa.Column('instances', sa.Integer(), nullable=False),
        sa.Column('vcpus', sa.Integer(), nullable=False),
        sa.Column('memory_mb', sa.Integer(), nullable=False),
        sa.Column('disk_gb', sa.Integer(), nullable=False))
    instances = sa.table('instances', sa.column('host', sa.String),
                         sa.column('node', sa.String),
                         sa.column('deleted', sa.Boolean),
                         *(sa.column(name, sa.Integer) for name in (
                             'flavor_vcpus', 'flavor_memory_mb',
                             'flavor_disk_gb')))
    node = sa.func.coalesce(instances.c.node, '')

    def total(column):
        return sa.func.coalesce(sa.func.sum(column), 0)
    live = sa.select(
        instances.c.host, node, sa.func.count(),
        total(instances.c.flavor_vcpus), total(instances.c.flavor_memory_mb),
        total(instances.c.flavor_disk_gb),
    ).where(instances.c.host.is_not(None),
            instances.c.deleted == sa.false()).group_by(instances.c.host, node)
    usage = sa.table('host_usage', *(sa.column(name) for name in (
        'host', 'node', 'instances', 'vcpus', 'memory_mb', 'disk_gb')))
    op.get_bind().execute(usage.insert().from_select(
        ['host', 'node', 'instances', 'vcpus', 'memory_mb', 'disk_gb'],
        live))


def downgrade():
    op.drop_table('host_usage')
