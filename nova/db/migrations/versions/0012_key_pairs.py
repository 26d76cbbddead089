"""Key pairs, and the key pair a server was booted with.

Revision ID: 0012
Revises: 0011

``key_pairs`` holds the public keys users imported or had the API
generate (``os-keypairs``): one name per user, whatever the project. The
private key of a generated pair is returned once and never stored, so the
table has no column for it. ``instances.key_name`` is the name a server
was created with (``key_name`` in ``POST /servers``), shown by the server
views; NULL for servers created without one and for every row written
before this revision.
"""

from alembic import op
import sqlalchemy as sa

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'key_pairs',
        sa.Column('id', sa.Integer, nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=False),
        sa.Column('fingerprint', sa.String(255), nullable=False),
        sa.Column('public_key', sa.Text, nullable=False),
        sa.Column('type', sa.String(16), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_key_pairs'),
        sa.UniqueConstraint('user_id', 'name',
                            name='uq_key_pairs_user_id_name'))
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('key_name', sa.String(255),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('instances') as batch:
        batch.drop_column('key_name')
    op.drop_table('key_pairs')
