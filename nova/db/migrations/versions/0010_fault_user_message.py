"""What the owner of a server may read about its failures.

Revision ID: 0010
Revises: 0009

A fault's ``message`` and a failed action event's ``details`` are the
operator's text: they name hosts, paths and storage identities, and the
server's owner must not read them. ``instance_faults.user_message`` and
``instance_actions_events.user_details`` hold what the owner reads
instead, written with the row from the exception
(``exception.safe_message_of``): the exception is gone afterwards, and no
plain sentence can be told apart from host names in the stored text.

Rows written before this revision keep NULL: nothing safe can be derived
from their text, so the API shows the owner the sentence of the fault's
code (or of a failed event) instead, never the operator's message.
"""

from alembic import op
import sqlalchemy as sa

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instance_faults') as batch:
        batch.add_column(sa.Column('user_message', sa.String(255),
                                   nullable=True))
    with op.batch_alter_table('instance_actions_events') as batch:
        batch.add_column(sa.Column('user_details', sa.String(255),
                                   nullable=True))


def downgrade():
    with op.batch_alter_table('instance_actions_events') as batch:
        batch.drop_column('user_details')
    with op.batch_alter_table('instance_faults') as batch:
        batch.drop_column('user_message')
