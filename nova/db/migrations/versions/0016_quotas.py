"""Quota limits set by administrators; what is used is always counted.

Revision ID: 0016
Revises: 0013

``quotas`` holds the limits an administrator set for a project
(``PUT /os-quota-sets/{project}``), ``project_user_quotas`` those set for
one user of a project (``?user_id=``), and ``quota_classes`` those of a
quota class (``os-quota-class-sets``; only the ``default`` class applies
to projects). A resource without a row has the limit of the next level
down (user, project, ``default`` class, ``[quota]`` option). There is no
usage or reservation table: usage is counted from the rows it is made of
(instances, key pairs) every time, so it cannot drift from them.

``ix_instances_project_id_deleted`` serves those counts.
"""

from alembic import op
import sqlalchemy as sa

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def _limits_table(name: str, *owner: str) -> None:
    """A table of (owner..., resource, hard_limit), one row per owner and
    resource."""
    op.create_table(
        name,
        sa.Column('id', sa.Integer, nullable=False),
        *[sa.Column(column, sa.String(255), nullable=False)
          for column in owner],
        sa.Column('resource', sa.String(255), nullable=False),
        sa.Column('hard_limit', sa.Integer, nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('id', name='pk_%s' % name),
        sa.UniqueConstraint(*owner, 'resource', name='uq_%s_%s_resource'
                            % (name, '_'.join(owner))))


def upgrade():
    _limits_table('quotas', 'project_id')
    _limits_table('project_user_quotas', 'project_id', 'user_id')
    _limits_table('quota_classes', 'class_name')
    op.create_index('ix_instances_project_id_deleted', 'instances',
                    ['project_id', 'deleted'])


def downgrade():
    op.drop_index('ix_instances_project_id_deleted', 'instances')
    op.drop_table('quota_classes')
    op.drop_table('project_user_quotas')
    op.drop_table('quotas')
