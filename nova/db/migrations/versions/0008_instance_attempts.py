"""Attempt tokens: who may make an instance's guest run or change its disks.

Revision ID: 0008
Revises: 0007

``instance_attempts`` holds one row per attempt that may make a guest run
or change an instance's disks (a build, a same-host rebuild, an
evacuation), written in the transaction that claims it, and marked
``landed`` in the transaction that records its result
(``nova/objects/attempt.py``). ``instances.attempt_id`` is the token: the
one attempt that may act on the instance now (NULL: none). Every side
effect of an attempt checks it right before acting; reset-state, a delete
or a newer claim replace it, which stops the older attempt where it
stands.

``instances.disks_exist`` is the durable fact "this instance has disks
that hold its data": set when an attempt lands, cleared when a same-host
rebuild replaces them. Rows written before this revision take it from
``launched_at`` (an instance that ran has disks somewhere): a refusal to
rebuild disks from the image is then the worst that can happen.

``instance_faults.message`` grows from 255 to 1024 characters: a refused
evacuation's fault says what was found and what unblocks it, and the
operator reads both in ``nova show``.
"""

from alembic import op
import sqlalchemy as sa

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('attempt_id', sa.String(36),
                                   nullable=True))
        batch.add_column(sa.Column('disks_exist', sa.Boolean(),
                                   nullable=False,
                                   server_default=sa.false()))
    instances = sa.table('instances',
                         sa.column('launched_at', sa.DateTime),
                         sa.column('disks_exist', sa.Boolean))
    op.get_bind().execute(instances.update().where(
        instances.c.launched_at.is_not(None)).values(disks_exist=True))
    with op.batch_alter_table('instance_faults') as batch:
        batch.alter_column('message', type_=sa.String(1024),
                           existing_type=sa.String(255),
                           existing_nullable=True)
    op.create_table(
        'instance_attempts',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('instance_uuid', sa.String(36),
                  sa.ForeignKey('instances.uuid',
                                name='fk_instance_attempts_instance_uuid_'
                                     'instances'),
                  nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('operation', sa.String(255), nullable=False),
        sa.Column('migration_uuid', sa.String(36), nullable=True),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint('uuid', name='uq_instance_attempts_uuid'))
    op.create_index('ix_instance_attempts_instance_uuid',
                    'instance_attempts', ['instance_uuid'])
    # A restart's recovery: the attempts its host claimed and never ended.
    op.create_index('ix_instance_attempts_host_status',
                    'instance_attempts', ['host', 'status'])


def downgrade():
    op.drop_index('ix_instance_attempts_host_status', 'instance_attempts')
    op.drop_index('ix_instance_attempts_instance_uuid',
                  'instance_attempts')
    op.drop_table('instance_attempts')
    with op.batch_alter_table('instance_faults') as batch:
        batch.alter_column('message', type_=sa.String(255),
                           existing_type=sa.String(1024),
                           existing_nullable=True)
    with op.batch_alter_table('instances') as batch:
        batch.drop_column('disks_exist')
        batch.drop_column('attempt_id')
