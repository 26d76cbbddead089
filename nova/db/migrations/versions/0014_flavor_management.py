"""Flavors an administrator manages: access, extra specs, description.

Revision ID: 0014
Revises: 0013

``flavors`` gains ``is_public`` (a private flavor is seen only by
administrators and the projects granted access), ``rxtx_factor`` and
``description`` (microversion 2.55); every flavor written before this
revision is public, with a factor of 1.0 and no description.
``flavor_projects`` holds the projects granted access to a private flavor
(``os-flavor-access``), ``flavor_extra_specs`` a flavor's key/value specs
(``os-extra_specs``). Both reference the flavor's row id, so a flavor
created again under the same flavorid never inherits the old rows.
"""

from alembic import op
import sqlalchemy as sa

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def _times():
    return (sa.Column('created_at', sa.DateTime(timezone=True),
                      nullable=True),
            sa.Column('updated_at', sa.DateTime(timezone=True),
                      nullable=True))


def upgrade():
    with op.batch_alter_table('flavors') as batch:
        batch.add_column(sa.Column('is_public', sa.Boolean(),
                                   nullable=False,
                                   server_default=sa.true()))
        batch.add_column(sa.Column('rxtx_factor', sa.Float(),
                                   nullable=False, server_default='1.0'))
        batch.add_column(sa.Column('description', sa.Text(),
                                   nullable=True))
    op.create_table(
        'flavor_projects',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('flavor_id', sa.Integer(),
                  sa.ForeignKey('flavors.id',
                                name='fk_flavor_projects_flavor_id_flavors'),
                  nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        *_times(),
        sa.UniqueConstraint('flavor_id', 'project_id',
                            name='uq_flavor_projects_flavor_id_project_id'))
    op.create_table(
        'flavor_extra_specs',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('flavor_id', sa.Integer(),
                  sa.ForeignKey('flavors.id',
                                name='fk_flavor_extra_specs_flavor_id_'
                                     'flavors'),
                  nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        *_times(),
        sa.UniqueConstraint('flavor_id', 'key',
                            name='uq_flavor_extra_specs_flavor_id_key'))


def downgrade():
    op.drop_table('flavor_extra_specs')
    op.drop_table('flavor_projects')
    with op.batch_alter_table('flavors') as batch:
        batch.drop_column('description')
        batch.drop_column('rxtx_factor')
        batch.drop_column('is_public')
