"""alembic environment: runs on the connection ``nova.db.migration`` gives.

Only online migrations, and only through ``nova.db.migration.db_sync``.
"""

from alembic import context

connection = context.config.attributes.get('connection')
if connection is None:
    raise RuntimeError('run migrations through nova.db.migration.db_sync')

context.configure(connection=connection,
                  target_metadata=None,
                  render_as_batch=connection.dialect.name == 'sqlite',
                  transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
