"""Server groups and their members.

Revision ID: 0017
Revises: 0013

``instance_groups`` holds the server groups of ``os-server-groups``: a
name, the owner, one policy (``affinity``, ``anti-affinity``,
``soft-affinity``, ``soft-anti-affinity``) and the one rule the API has,
``max_server_per_host`` (anti-affinity only; NULL: one per host).
``instance_group_members`` says which group a server is in: a server is
in at most one, so the instance's uuid is unique. Rows are deleted, not
marked deleted: a deleted group or server is gone from the API at once.
"""

from alembic import op
import sqlalchemy as sa

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'instance_groups',
        sa.Column('id', sa.Integer, nullable=False),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=False),
        sa.Column('policy', sa.String(32), nullable=False),
        sa.Column('max_server_per_host', sa.Integer, nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_instance_groups'),
        sa.UniqueConstraint('uuid', name='uq_instance_groups_uuid'))
    op.create_index('ix_instance_groups_project_id', 'instance_groups',
                    ['project_id'])
    op.create_table(
        'instance_group_members',
        sa.Column('id', sa.Integer, nullable=False),
        sa.Column('group_uuid', sa.String(36),
                  sa.ForeignKey('instance_groups.uuid',
                                name='fk_instance_group_members_group_uuid_'
                                     'instance_groups'),
                  nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_instance_group_members'),
        sa.UniqueConstraint('instance_uuid',
                            name='uq_instance_group_members_instance_uuid'))
    op.create_index('ix_instance_group_members_group_uuid',
                    'instance_group_members', ['group_uuid'])


def downgrade():
    op.drop_index('ix_instance_group_members_group_uuid',
                  'instance_group_members')
    op.drop_table('instance_group_members')
    op.drop_index('ix_instance_groups_project_id', 'instance_groups')
    op.drop_table('instance_groups')
