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
    cfg.IntOpt('idle_in_transaction_timeout',
               default=10,
               min=0,
               help="""
Seconds a PostgreSQL server lets a connection of this service sit idle inside
a transaction before it ends the session and releases its locks (the
server's ``idle_in_transaction_session_timeout``). 0 leaves the server's own
setting.

A service stopped in the middle of a transaction (a hung host, a network
partition, SIGSTOP) would otherwise hold its row locks until TCP gives up,
minutes later, and every writer of those rows, such as an operator forcing the
service down, would wait that long. No transaction of this project waits on
anything but the database, so a few seconds is plenty. Not used with SQLite.
"""),
]


def register_opts(conf):
    conf.register_group(database_group)
    conf.register_opts(database_opts, group=database_group)


def list_opts():
    return {database_group: database_opts}
