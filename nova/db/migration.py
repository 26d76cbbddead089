"""Schema migrations: alembic, driven from code.

The scripts live in ``nova/db/migrations/versions`` inside the package, so
no ``alembic.ini`` is needed at run time::

    from nova.db import migration
    migration.db_sync()          # create or upgrade to the newest schema
    migration.db_version()       # '0001', or None for an empty database
"""

import os

from alembic import command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script
from oslo_log import log as logging

from nova.db import api as db_api
from nova import exception

LOG = logging.getLogger(__name__)

MIGRATIONS_DIR = os.path.join(os.path.dirname(__file__), 'migrations')


def _config(connection=None) -> alembic_config.Config:
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', MIGRATIONS_DIR)
    cfg.attributes['connection'] = connection
    return cfg


def _scripts() -> alembic_script.ScriptDirectory:
    return alembic_script.ScriptDirectory.from_config(_config())


def head_version() -> str:
    return _scripts().get_current_head()


def known_versions() -> list[str]:
    """Every revision, oldest first."""
    return [s.revision for s in reversed(list(_scripts().walk_revisions()))]


def db_version(engine=None) -> str | None:
    """The schema version of the database; None when it has none yet."""
    engine = engine or db_api.get_engine()
    with engine.connect() as connection:
        context = alembic_migration.MigrationContext.configure(connection)
        return context.get_current_revision()


def db_sync(version: str | None = None, engine=None) -> str:
    """Create the schema or upgrade it to ``version`` (default: newest).

    Downgrades are refused: they would drop data. Returns the version the
    database has afterwards.
    """
    known = known_versions()
    target = version or known[-1]
    if target not in known:
        raise exception.InvalidInput(
            reason='unknown schema version %r; known versions: %s'
                   % (target, ', '.join(known)))
    engine = engine or db_api.get_engine()
    current = db_version(engine)
    if current is not None and current in known and (
            known.index(current) > known.index(target)):
        raise exception.InvalidInput(
            reason='database is at version %s, newer than %s; downgrade '
                   'is not supported' % (current, target))
    # NOTE: one transaction for the whole upgrade; on SQLite it starts
    # with BEGIN IMMEDIATE, so processes syncing at once run one after the
    # other and the later ones find the work done.
    with engine.begin() as connection:
        command.upgrade(_config(connection), target)
    LOG.info('Database schema is at version %s', target)
    return target
