"""The database engine of this process and the sessions that use it.

Usage::

    from nova.db import api as db_api

    db_api.configure('sqlite:////var/lib/nova/nova.sqlite')  # optional
    with db_api.session() as session:      # one transaction
        session.execute(...)

Without ``configure()`` the engine is built on first use from
``[database] connection`` or, when that is unset,
``sqlite:///$state_path/nova.sqlite``.

SQLite is set up for many threads and several processes: WAL journal (so
readers never block the writer), ``busy_timeout`` from
``[database] sqlite_busy_timeout``, foreign keys on, and every read-write
transaction opened with ``BEGIN IMMEDIATE``. The last point matters: a
deferred transaction that reads and then writes can fail at once with
"database is locked" when another writer got in between, whatever the
busy timeout; taking the write lock up front makes it wait instead.
"""

import contextlib
import contextvars
import os
import sqlite3
import threading
import time

from oslo_log import log as logging
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy import exc as sa_exc
from sqlalchemy import orm
from sqlalchemy import pool

from nova.conf import CONF
from nova import exception

LOG = logging.getLogger(__name__)

_READ_ONLY = 'nova_read_only'

_lock = threading.Lock()
# The engine, and the same with the read-only option, derived with it:
# deriving it per session cost more than the session's own query.
_engines_now: tuple[sa.engine.Engine, sa.engine.Engine] | None = None


def default_url() -> str:
    """The URL used when ``[database] connection`` is unset."""
    os.makedirs(CONF.state_path, exist_ok=True)
    return 'sqlite:///' + os.path.join(CONF.state_path, 'nova.sqlite')


def configured_url() -> str:
    return CONF.database.connection or default_url()


def _enable_wal(cursor, timeout: float):
    """Put the database in WAL mode, waiting up to ``timeout`` s for it.

    NOTE: the switch needs the database to itself for a moment. When two
    connections to a new database try it at once, SQLite breaks the
    deadlock by answering "database is locked" at once to one of them,
    without its busy handler. WAL is a property of the file: once one
    connection switched, the others find it on, so a short retry ends
    either way.
    """
    deadline = time.monotonic() + timeout
    while True:
        if cursor.execute('PRAGMA journal_mode').fetchone()[0] == 'wal':
            return
        try:
            cursor.execute('PRAGMA journal_mode = WAL')
            return
        except sqlite3.OperationalError as e:
            if 'locked' not in str(e) or time.monotonic() > deadline:
                raise
        time.sleep(0.01)


def _on_sqlite_connect(dbapi_connection, connection_record):
    # NOTE: pysqlite's own transaction handling issues a deferred BEGIN
    # lazily; take control of BEGIN ourselves (see _on_sqlite_begin).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute('PRAGMA busy_timeout = %d'
                       % CONF.database.sqlite_busy_timeout)
        _enable_wal(cursor, CONF.database.sqlite_busy_timeout / 1000.0)
        cursor.execute('PRAGMA foreign_keys = ON')
    finally:
        cursor.close()


# Whether the transaction this thread is beginning only reads: set by
# reading() and session(read_only=True) around their BEGIN, read by
# _sqlite_begin, which sees the DBAPI connection only.
_beginning_read_only = contextvars.ContextVar('nova_beginning_read_only',
                                              default=False)


@contextlib.contextmanager
def _beginning(read_only: bool):
    token = _beginning_read_only.set(read_only)
    try:
        yield
    finally:
        _beginning_read_only.reset(token)


def _sqlite_begin(dbapi_connection) -> None:
    # NOTE: the dialect's own BEGIN (a no-op for pysqlite, whose own
    # transaction handling is off: _on_sqlite_connect), replaced on this
    # engine's dialect rather than done in a "begin" event: an engine
    # with a connection event joins every connection's dispatch to the
    # engine's, and each statement then walks both (a third of the cost
    # of a one-row read). SQLAlchemy wraps what this raises as for any
    # statement ("database is locked" is an OperationalError).
    dbapi_connection.driver_connection.execute(
        'BEGIN DEFERRED' if _beginning_read_only.get()
        else 'BEGIN IMMEDIATE')


def _postgresql_connect_args() -> dict:
    # NOTE: the server, not this process, must end a transaction whose
    # client stopped (see the option's help); libpq passes ``options`` to
    # the server as session settings.
    seconds = CONF.database.idle_in_transaction_timeout
    if not seconds:
        return {}
    return {'options': '-c idle_in_transaction_session_timeout=%d'
                       % (seconds * 1000)}


# A pooled connection to a server database (PostgreSQL) is pinged before
# it is handed out only when it sat in the pool longer than this, in
# seconds. SQLAlchemy's pool_pre_ping pings at every checkout: one more
# round trip per transaction, measured here at 0.25-0.35 ms of a 0.6-0.7
# ms one-row read. A connection used within the second is as good as the
# ping would say; the server may still have gone away since, as it may
# between a ping and the statement after it: the statement then fails
# as a disconnect, SQLAlchemy invalidates every connection pooled before
# that moment, and the next transaction opens a new one.
PING_AFTER_IDLE = 1.0
_RETURNED_AT = 'nova_returned_at'


def create_engine(url: str,
                  ping_after_idle: float = PING_AFTER_IDLE
                  ) -> sa.engine.Engine:
    """Build an engine for ``url`` with this project's settings;
    ``ping_after_idle`` as ``PING_AFTER_IDLE`` (not used on SQLite).

    Raises ``InvalidConfiguration`` for a URL SQLAlchemy cannot use.
    """
    try:
        parsed = sa.engine.make_url(url)
        kwargs = {}
        is_sqlite = parsed.get_backend_name() == 'sqlite'
        if is_sqlite:
            kwargs['connect_args'] = {'check_same_thread': False}
            if parsed.database in (None, '', ':memory:'):
                # One shared connection, or every checkout is a new,
                # empty database.
                kwargs['poolclass'] = pool.StaticPool
            else:
                kwargs['pool_size'] = 10
                kwargs['max_overflow'] = 20
        elif parsed.get_backend_name() == 'postgresql' and \
                'options' not in parsed.query:
            kwargs['connect_args'] = _postgresql_connect_args()
        engine = sa.create_engine(parsed, **kwargs)
    except (sa_exc.ArgumentError, sa_exc.NoSuchModuleError,
            ImportError) as e:
        raise exception.InvalidConfiguration(
            reason='cannot use database URL %r: %s' % (
                safe_url(url), e))
    if is_sqlite:
        event.listen(engine, 'connect', _on_sqlite_connect)
        engine.dialect.do_begin = _sqlite_begin  # type: ignore[method-assign]
    else:
        _ping_when_idle(engine, ping_after_idle)
    return engine


def _ping_when_idle(engine: sa.engine.Engine, after: float) -> None:
    """Ping a pooled connection at checkout when it sat in the pool longer
    than ``after`` seconds (``PING_AFTER_IDLE``); one the server dropped
    is replaced, and every connection pooled before it with it, as
    SQLAlchemy's own pre-ping does."""
    dialect = engine.dialect

    def returned(dbapi_connection, record):
        record.info[_RETURNED_AT] = time.monotonic()

    def checkout(dbapi_connection, record, proxy):
        # A new connection (its info is cleared with the old one) needs
        # no ping.
        since = record.info.get(_RETURNED_AT)
        if since is None or time.monotonic() - since <= after:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as e:
            if dialect.is_disconnect(e, dbapi_connection, None):
                raise sa_exc.InvalidatePoolError(
                    'the server dropped a pooled connection: %s' % e)
            raise

    event.listen(engine.pool, 'checkin', returned)
    event.listen(engine.pool, 'checkout', checkout)


def safe_url(url: str) -> str:
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa_exc.ArgumentError:
        return url


def configure(url: str | None = None) -> sa.engine.Engine:
    """Use ``url`` (or the configured one) from now on in this process."""
    engine = create_engine(url or configured_url())
    _replace(_with_read_only(engine))
    LOG.debug('Database engine configured for %s', engine.url)
    return engine


def _with_read_only(engine: sa.engine.Engine):
    return engine, engine.execution_options(**{_READ_ONLY: True})


def _replace(engines) -> None:
    """Make ``engines`` current (None: none) and dispose of the old."""
    global _engines_now
    with _lock:
        old, _engines_now = _engines_now, engines
    if old is not None:
        old[0].dispose()


def _engines() -> tuple[sa.engine.Engine, sa.engine.Engine]:
    """(the engine, its read-only form), built from the configuration at
    the first use."""
    global _engines_now
    with _lock:
        if _engines_now is None:
            _engines_now = _with_read_only(create_engine(configured_url()))
        return _engines_now


def get_engine() -> sa.engine.Engine:
    return _engines()[0]


def dispose() -> None:
    """Close every pooled connection and forget the engine.

    The next ``get_engine()`` builds a new one from the configuration.
    """
    _replace(None)


@contextlib.contextmanager
def session(read_only: bool = False):
    """One transaction: committed on success, rolled back on an exception.

    ``read_only=True`` lets a pure read run alongside writers on SQLite.
    """
    engine = _engines()[1 if read_only else 0]
    with orm.Session(engine, expire_on_commit=False) as db_session:
        with db_session.begin():
            # BEGIN now, not at the first statement: its kind is chosen
            # here (_sqlite_begin).
            with _beginning(read_only):
                db_session.connection()
            yield db_session


_reads = threading.local()


@contextlib.contextmanager
def reading():
    """One read-only transaction on a Core connection, for a statement
    that needs no ORM objects: about half the cost of ``session``. On
    PostgreSQL, reads in autocommit (see below), each statement seeing
    what was committed when it began, as it would in a transaction.

    Within another ``reading()`` of the same thread, the same connection
    and transaction: a caller that makes several reads (a server's view:
    the server, its metadata, its host's service and zone) wraps them in
    one, and pays one BEGIN and COMMIT instead of one per read. It must
    not wait for anything else meanwhile (an RPC call, a lock): the
    transaction stays open until the outer one ends.
    """
    current = getattr(_reads, 'connection', None)
    if current is not None:
        yield current
        return
    # The option set on the connection rather than taken from the
    # read-only engine: an engine derived with options dispatches every
    # event of every statement through both engines' listeners.
    engine = _engines()[0]
    with engine.connect() as connection:
        connection.execution_options(**{_READ_ONLY: True})
        with _autocommit_on_a_server(connection):
            with _beginning(True):
                transaction = connection.begin()
            with transaction:
                _reads.connection = connection
                try:
                    yield connection
                finally:
                    _reads.connection = None


@contextlib.contextmanager
def _autocommit_on_a_server(connection):
    """The reads of ``connection`` in autocommit, on PostgreSQL.

    PostgreSQL reads at READ COMMITTED, where every statement sees what
    was committed when it began, in a transaction or not: the transaction
    bought a read nothing but its BEGIN and COMMIT, two round trips of
    three for a one-row read (0.43-0.49 against 0.32 ms here, idle; more
    on a busy host, where each waits its turn). SQLite keeps its
    transaction: there it is one snapshot for every read.

    Set on the driver's connection, as ``read_one_row`` does, and given
    back before the connection returns to the pool: SQLAlchemy's own
    ``AUTOCOMMIT`` isolation level costs a ``SET
    default_transaction_isolation`` round trip at every return.
    """
    if connection.dialect.name == 'sqlite':
        yield
        return
    with _driver_autocommit(connection.connection.driver_connection,
                            connection.invalidate):
        yield


@contextlib.contextmanager
def _driver_autocommit(driver, discard):
    """The driver's connection ``driver`` in autocommit for the body, then
    back to transactions; ``discard()`` when it cannot go back."""
    driver.autocommit = True
    try:
        yield
    finally:
        try:
            # A connection the server dropped is closed: nothing to give
            # back.
            if not driver.closed:
                driver.autocommit = False
        except Exception as e:
            # Never back to the pool in autocommit: a write transaction
            # on it would commit statement by statement.
            LOG.warning('Discarding a database connection that could not '
                        'leave autocommit: %s', e)
            discard()


def read_one_row(statement: sa.Select, params: dict) -> tuple | None:
    """The first row of one read ``statement`` (a ``select`` built once,
    at import) with ``params``, as a tuple of the driver's values (no
    result processing: for columns of plain types); None when there is
    none.

    For the attempt token read before every side effect (13 per boot), at
    its cost: one statement is atomic by itself (it sees one committed
    state), so it runs outside a transaction (SQLite: no ``BEGIN``;
    PostgreSQL: autocommit, one round trip); and on the pooled driver
    connection, the SQL compiled once per statement and dialect. Measured
    per read (wall / CPU): PostgreSQL 0.6-0.7 / 0.3 ms through a Core
    connection, 0.2 / 0.1 ms so; SQLite 55 / 24 us CPU. A connection the
    server dropped is replaced and the read made once more (it changes
    nothing). Driver errors are raised as SQLAlchemy's (``DBAPIError``).

    Within a ``reading()`` of the same thread: run in its transaction (it
    then sees that transaction's snapshot).
    """
    current = getattr(_reads, 'connection', None)
    if current is not None:
        row = current.execute(statement, params).first()
        return None if row is None else tuple(row)
    engine = _engines()[0]
    dialect = engine.dialect
    # SQLite: no BEGIN is sent already (its driver's own transaction
    # handling is off); a server database: autocommit.
    server = dialect.name != 'sqlite'
    sql, names = _raw_form(dialect, statement)
    values = (tuple(params[name] for name in names) if names is not None
              else params)
    for last_try in (False, True):
        raw = engine.raw_connection()
        try:
            return _read_raw(raw, sql, values, autocommit=server)
        except dialect.loaded_dbapi.Error as e:
            # A server that went away (restarted) took every pooled
            # connection with it: all go, as SQLAlchemy does on a
            # disconnect, and the read is made once more on a new one.
            gone = server and dialect.is_disconnect(
                e, raw.driver_connection, None)
            if gone:
                raw.invalidate(e)
                engine.dispose()
            if last_try or not gone:
                raise sa_exc.DBAPIError.instance(
                    sql, values, e, dialect.loaded_dbapi.Error,
                    connection_invalidated=gone, dialect=dialect) from e
        finally:
            raw.close()
    raise AssertionError('not reached')


def _read_raw(raw, sql, values, autocommit: bool) -> tuple | None:
    with (_driver_autocommit(raw.driver_connection, raw.invalidate)
          if autocommit else contextlib.nullcontext()):
        cursor = raw.cursor()
        try:
            cursor.execute(sql, values)
            return cursor.fetchone()
        finally:
            cursor.close()


_raw_forms: dict = {}


def _raw_form(dialect, statement) -> tuple[str, tuple[str, ...] | None]:
    """(the SQL of ``statement`` for ``dialect``, the names of its
    parameters in order for a positional driver, None for one that takes
    them by name)."""
    key = (dialect.name, dialect.driver, id(statement))
    form = _raw_forms.get(key)
    if form is None:
        compiled = statement.compile(dialect=dialect)
        names = (tuple(compiled.positiontup or ()) if compiled.positional
                 else None)
        # The statement is kept alive with its form: its id stays its own.
        form = _raw_forms[key] = (compiled.string, names, statement)
    return form[0], form[1]


@contextlib.contextmanager
def writing():
    """One read-write transaction on a Core connection, committed on
    success and rolled back on an exception: for writes of Core
    statements, at about half the cost of ``session`` (an ORM-enabled
    UPDATE through a ``Session`` cost twice a Core one)."""
    with _engines()[0].begin() as connection:
        yield connection


def _forget_after_fork():
    # A child must never use the parent's pooled connections.
    engines = _engines_now
    if engines is not None:
        engines[0].dispose(close=False)


os.register_at_fork(after_in_child=_forget_after_fork)
