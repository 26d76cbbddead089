"""Host aggregates, their hosts and metadata; the zone a server asked for.

Revision ID: 0015
Revises: 0013

``aggregates`` are the operator's groups of compute hosts
(``os-aggregates``); a name is unique, and a deleted aggregate is gone
(no soft delete: its name is free again at once). ``aggregate_hosts``
lists the compute hosts of each (by host name: a host may be added before
its service runs no more than Nova allows, so no foreign key to
``services``). ``aggregate_metadata`` holds the key/value pairs; the
``availability_zone`` key is what puts an aggregate's hosts in a zone.

``instances.availability_zone`` is the zone ``POST /servers`` asked for
(NULL: none asked), which an evacuation keeps to; the zone a server is
shown in is its host's.
"""

from alembic import op
import sqlalchemy as sa

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def _times():
    return [sa.Column('created_at', sa.DateTime(timezone=True),
                      nullable=True),
            sa.Column('updated_at', sa.DateTime(timezone=True),
                      nullable=True)]


def upgrade():
    op.create_table(
        'aggregates',
        sa.Column('id', sa.Integer, nullable=False),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        *_times(),
        sa.PrimaryKeyConstraint('id', name='pk_aggregates'),
        sa.UniqueConstraint('uuid', name='uq_aggregates_uuid'),
        sa.UniqueConstraint('name', name='uq_aggregates_name'))
    op.create_table(
        'aggregate_hosts',
        sa.Column('id', sa.Integer, nullable=False),
        sa.Column('aggregate_id', sa.Integer, nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        *_times(),
        sa.PrimaryKeyConstraint('id', name='pk_aggregate_hosts'),
        sa.ForeignKeyConstraint(
            ['aggregate_id'], ['aggregates.id'],
            name='fk_aggregate_hosts_aggregate_id_aggregates'),
        sa.UniqueConstraint('aggregate_id', 'host',
                            name='uq_aggregate_hosts_aggregate_id_host'))
    op.create_index('ix_aggregate_hosts_host', 'aggregate_hosts', ['host'])
    op.create_table(
        'aggregate_metadata',
        sa.Column('id', sa.Integer, nullable=False),
        sa.Column('aggregate_id', sa.Integer, nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        *_times(),
        sa.PrimaryKeyConstraint('id', name='pk_aggregate_metadata'),
        sa.ForeignKeyConstraint(
            ['aggregate_id'], ['aggregates.id'],
            name='fk_aggregate_metadata_aggregate_id_aggregates'),
        sa.UniqueConstraint('aggregate_id', 'key',
                            name='uq_aggregate_metadata_aggregate_id_key'))
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('availability_zone', sa.String(255),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('instances') as batch:
        batch.drop_column('availability_zone')
    op.drop_table('aggregate_metadata')
    op.drop_index('ix_aggregate_hosts_host', 'aggregate_hosts')
    op.drop_table('aggregate_hosts')
    op.drop_table('aggregates')
