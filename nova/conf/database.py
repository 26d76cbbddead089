"""Options of the database connection."""

from oslo_config import cfg

database_group = cfg.OptGroup('database', title='Database options')

database_opts = [
    cfg.StrOpt('connection',
               secret=True,
               help="""
SQLAlchemy URL of the database.

When unset, a SQLite file ``nova.sqlite`` under ``state_path`` is used (WAL
mode, with a busy timeout), which is enough for every host of one machine.
Any SQLAlchemy URL works, for example
``postgresql+psycopg2://nova:secret@127.0.0.1/nova``.
"""),
    cfg.IntOpt('sqlite_busy_timeout',
               default=30000,
               min=0,
               help="Milliseconds SQLite waits on a locked database before "
                    "failing."),
]


def register_opts(conf):
    conf.register_group(database_group)
    conf.register_opts(database_opts, group=database_group)


def list_opts():
    return {database_group: database_opts}
