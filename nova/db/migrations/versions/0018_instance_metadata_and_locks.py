"""Server metadata, descriptions and locks.

Revision ID: 0018
Revises: 0013

``instance_metadata`` holds the owner's key/value pairs of a server
(``metadata`` in ``POST /servers``, ``/servers/{id}/metadata``), one row
per key, so that a client (Masakari's ``HA_Enabled``) can ask for the
servers that carry a key without reading every instance. A key is unique
per server; the rows of a deleted server stay with its soft-deleted row.

``instances.display_description`` is the server's ``description``
(microversion 2.19). ``instances.locked_by`` says who locked the server
(``owner`` or ``admin``; NULL: unlocked) and ``locked_reason`` why
(2.73). ``instances.user_data`` is what a rebuild was given as
``user_data`` (2.57), base64 as given; nothing here hands it to a guest.
Every row written before this revision is unlocked, has no
description and no metadata, which is what the API showed for it.
"""

from alembic import op
import sqlalchemy as sa

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'instance_metadata',
        sa.Column('id', sa.Integer, nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_instance_metadata'),
        sa.ForeignKeyConstraint(
            ['instance_uuid'], ['instances.uuid'],
            name='fk_instance_metadata_instance_uuid_instances'),
        sa.UniqueConstraint('instance_uuid', 'key',
                            name='uq_instance_metadata_instance_uuid_key'))
    op.create_index('ix_instance_metadata_key_value', 'instance_metadata',
                    ['key', 'value'])
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('display_description', sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column('locked_by', sa.String(16),
                                   nullable=True))
        batch.add_column(sa.Column('locked_reason', sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column('user_data', sa.Text, nullable=True))


def downgrade():
    with op.batch_alter_table('instances') as batch:
        batch.drop_column('user_data')
        batch.drop_column('locked_reason')
        batch.drop_column('locked_by')
        batch.drop_column('display_description')
    op.drop_index('ix_instance_metadata_key_value', 'instance_metadata')
    op.drop_table('instance_metadata')
