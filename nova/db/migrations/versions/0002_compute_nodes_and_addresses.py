"""Compute node capacity, and fixed IP addresses of networks and ports.

Revision ID: 0002
Revises: 0001

``compute_nodes``: what each compute host's hypervisor reports (capacity
and use), so that a conductor in another process can choose an evacuation
target. ``networks.cidr`` and ``ports.ip_address``: the fixed address the
network backend gives each port, shown by ``nova list`` as
``public=10.0.0.5``.
"""

from alembic import op
import sqlalchemy as sa

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'compute_nodes',
        sa.Column('id', sa.Integer, nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('hypervisor_hostname', sa.String(255), nullable=False),
        sa.Column('hypervisor_type', sa.String(255), nullable=True),
        sa.Column('vcpus', sa.Integer, nullable=False),
        sa.Column('memory_mb', sa.Integer, nullable=False),
        sa.Column('local_gb', sa.Integer, nullable=False),
        sa.Column('vcpus_used', sa.Integer, nullable=False),
        sa.Column('memory_mb_used', sa.Integer, nullable=False),
        sa.Column('local_gb_used', sa.Integer, nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_compute_nodes'),
        sa.UniqueConstraint('host', 'hypervisor_hostname',
                            name='uq_compute_nodes_host_node'))
    with op.batch_alter_table('networks') as batch:
        batch.add_column(sa.Column('cidr', sa.String(43), nullable=True))
    with op.batch_alter_table('ports') as batch:
        batch.add_column(sa.Column('ip_address', sa.String(39),
                                   nullable=True))
        batch.create_unique_constraint('uq_ports_network_ip',
                                       ['network_uuid', 'ip_address'])


def downgrade():
    with op.batch_alter_table('ports') as batch:
        batch.drop_constraint('uq_ports_network_ip', type_='unique')
        batch.drop_column('ip_address')
    with op.batch_alter_table('networks') as batch:
        batch.drop_column('cidr')
    op.drop_table('compute_nodes')
