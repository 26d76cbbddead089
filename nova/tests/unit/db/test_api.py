"""The engine and sessions against real SQLite files."""

import contextlib
import multiprocessing
import os
import threading

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import models
from nova import exception
from nova.tests import base


def _insert_networks(prefix, count):
    for i in range(count):
        with db_api.session() as session:
            session.execute(sa.insert(models.Network).values(
                uuid='%s-%04d' % (prefix, i), name=prefix, bridge='br0'))


def _child_insert(prefix, count, errors):
    try:
        _insert_networks(prefix, count)
    except Exception as e:  # reported to the parent, which fails the test
        errors.put('%s: %r' % (prefix, e))


_NETWORKS = models.Network.__table__.c


def _rename_bridges(bridge):
    with db_api.writing() as connection:
        connection.execute(sa.update(models.Network.__table__).values(
            bridge=bridge))


def _count_networks():
    with db_api.session(read_only=True) as session:
        return session.scalar(sa.select(sa.func.count()).select_from(
            models.Network))


class DefaultUrlTestCase(base.TestCase):

    def test_default_is_sqlite_under_state_path_created_on_demand(self):
        state_path = os.path.join(self.tmp, 'not', 'yet')
        self.flags(state_path=state_path)
        self.addCleanup(db_api.dispose)
        engine = db_api.get_engine()
        self.assertEqual(os.path.join(state_path, 'nova.sqlite'),
                         engine.url.database)
        self.assertTrue(os.path.isdir(state_path))

    def test_connection_option_wins(self):
        path = os.path.join(self.tmp, 'other.sqlite')
        self.flags(connection='sqlite:///' + path, group='database')
        self.addCleanup(db_api.dispose)
        self.assertEqual(path, db_api.get_engine().url.database)

    def test_dispose_forgets_the_configured_engine(self):
        first = os.path.join(self.tmp, 'first.sqlite')
        db_api.configure('sqlite:///' + first)
        db_api.dispose()
        self.addCleanup(db_api.dispose)
        self.assertEqual(os.path.join(self.state_path, 'nova.sqlite'),
                         db_api.get_engine().url.database)

    def test_bad_url_is_a_configuration_error(self):
        for url in ('not a url', 'nosuchdialect://host/db'):
            self.assertRaises(exception.InvalidConfiguration,
                              db_api.configure, url)

    def test_password_is_hidden_in_messages(self):
        self.assertNotIn('secret', db_api.safe_url(
            'postgresql://nova:secret@127.0.0.1/nova'))


class SQLiteSettingsTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(sqlite_busy_timeout=1234, group='database')
        self.url = self.use_database()

    def _pragma(self, name):
        with db_api.session(read_only=True) as session:
            return session.execute(sa.text('PRAGMA ' + name)).scalar()

    def test_every_connection_is_set_up(self):
        self.assertEqual('wal', self._pragma('journal_mode'))
        self.assertEqual(1, self._pragma('foreign_keys'))
        self.assertEqual(1234, self._pragma('busy_timeout'))

    def test_session_commits_or_rolls_back(self):
        _insert_networks('kept', 1)
        with self.assertRaises(RuntimeError):
            with db_api.session() as session:
                session.execute(sa.insert(models.Network).values(
                    uuid='lost', name='lost', bridge='br0'))
                raise RuntimeError('abort')
        with db_api.session(read_only=True) as session:
            names = session.scalars(sa.select(models.Network.name)).all()
        self.assertEqual(['kept'], names)

    def test_writing_commits_or_rolls_back(self):
        with db_api.writing() as connection:
            connection.execute(sa.insert(models.Network.__table__).values(
                uuid='kept', name='kept', bridge='br0'))
        with self.assertRaises(RuntimeError):
            with db_api.writing() as connection:
                connection.execute(sa.insert(models.Network.__table__).values(
                    uuid='lost', name='lost', bridge='br0'))
                raise RuntimeError('abort')
        with db_api.session() as session:
            names = session.scalars(sa.select(models.Network.name)).all()
        self.assertEqual(['kept'], names)

    def test_a_reading_within_a_reading_shares_its_transaction(self):
        seen = []
        with db_api.reading() as outer:
            with db_api.reading() as inner:
                self.assertIs(outer, inner)
            # The inner end did not end the outer transaction.
            self.assertTrue(outer.in_transaction())

            def read_elsewhere():
                with db_api.reading() as connection:
                    seen.append(connection)

            other = threading.Thread(target=read_elsewhere)
            other.start()
            other.join()
        self.assertIsNot(outer, seen[0])    # another thread: its own
        with db_api.reading() as after:
            self.assertTrue(after.in_transaction())
        self.assertFalse(outer.in_transaction())

    @contextlib.contextmanager
    def _statements_sent(self):
        """Every statement the pooled connections send to SQLite in the
        block (its own trace of them), listed as they go."""
        sent = []
        engine = db_api.get_engine()

        def trace(dbapi_connection, record, proxy):
            dbapi_connection.set_trace_callback(sent.append)

        sa.event.listen(engine.pool, 'checkout', trace)
        try:
            yield sent
        finally:
            sa.event.remove(engine.pool, 'checkout', trace)
            engine.dispose()        # no traced connection stays pooled

    def test_read_one_row_is_one_statement_without_begin(self):
        _insert_networks('kept', 1)
        query = sa.select(_NETWORKS.name, _NETWORKS.bridge).where(
            _NETWORKS.name == sa.bindparam('name'))
        with self._statements_sent() as sent:
            self.assertEqual(('kept', 'br0'),
                             db_api.read_one_row(query, {'name': 'kept'}))
            self.assertIsNone(db_api.read_one_row(query, {'name': 'none'}))
        self.assertEqual(2, len(sent))
        self.assertTrue(all(line.startswith('SELECT') for line in sent),
                        sent)
        # The next transaction of the thread begins as before.
        with self._statements_sent() as sent:
            with db_api.writing() as connection:
                connection.execute(sa.select(_NETWORKS.name)).all()
        self.assertEqual('BEGIN IMMEDIATE', sent[0])

    def test_read_one_row_binds_its_parameters_by_name(self):
        # SQLite's driver takes them by position: in the statement's
        # order, whatever the order of the dict.
        _insert_networks('kept', 2)
        query = sa.select(_NETWORKS.uuid).where(
            _NETWORKS.uuid == sa.bindparam('uuid'),
            _NETWORKS.bridge == sa.bindparam('bridge'))
        self.assertEqual(('kept-0001',), db_api.read_one_row(
            query, {'bridge': 'br0', 'uuid': 'kept-0001'}))
        self.assertIsNone(db_api.read_one_row(
            query, {'bridge': 'kept-0001', 'uuid': 'br0'}))

    def test_read_one_row_within_a_reading_reads_its_snapshot(self):
        _insert_networks('kept', 1)
        query = sa.select(_NETWORKS.bridge).where(
            _NETWORKS.name == sa.bindparam('name'))
        with db_api.reading() as outer:
            outer.execute(sa.select(_NETWORKS.name)).all()  # the snapshot
            _rename_bridges('br1')      # committed by another connection
            self.assertEqual(('br0',), db_api.read_one_row(
                query, {'name': 'kept'}))
            self.assertTrue(outer.in_transaction())
        self.assertEqual(('br1',), db_api.read_one_row(
            query, {'name': 'kept'}))

    @contextlib.contextmanager
    def _a_write_held_elsewhere(self):
        """Another connection holds the write lock (an uncommitted insert
        of network 'held') in the block; the transaction is yielded."""
        self.flags(sqlite_busy_timeout=50, group='database')
        db_api.configure(self.url)
        other = db_api.create_engine(self.url)
        self.addCleanup(other.dispose)
        with other.connect() as holder:
            transaction = holder.begin()
            holder.execute(sa.insert(models.Network).values(
                uuid='held', name='held', bridge='br0'))
            yield transaction

    def test_read_one_row_neither_waits_for_nor_sees_a_held_write(self):
        _insert_networks('kept', 1)
        query = sa.select(sa.func.count(_NETWORKS.id))
        with self._a_write_held_elsewhere() as transaction:
            self.assertEqual((1,), db_api.read_one_row(query, {}))
            transaction.commit()
        self.assertEqual((2,), db_api.read_one_row(query, {}))

    def test_writes_take_the_lock_up_front_reads_do_not(self):
        # Another connection holds the write lock; a writer must wait for
        # it (and here times out), a reader must not.
        with self._a_write_held_elsewhere() as transaction:
            self.assertEqual(0, _count_networks())
            with self.assertRaises(sa_exc.OperationalError) as ctx:
                with db_api.session() as session:
                    session.execute(sa.select(models.Network.id))
            self.assertIn('locked', str(ctx.exception))
            with self.assertRaises(sa_exc.OperationalError) as ctx:
                with db_api.writing() as connection:
                    connection.execute(sa.select(models.Network.id))
            self.assertIn('locked', str(ctx.exception))
            with db_api.reading() as connection:
                self.assertEqual([], connection.execute(
                    sa.select(models.Network.id)).all())
            transaction.rollback()

    def _wait_as_configured_by_default(self):
        # Writers queue for the lock, each waiting for all before it: on a
        # loaded machine that can take longer than setUp's 1.234 s. A
        # lock error must then come from a deadlock, never from the wait.
        self.flags(sqlite_busy_timeout=30000, group='database')
        db_api.configure(self.url)

    def test_many_threads_write_without_lock_errors(self):
        self._wait_as_configured_by_default()
        errors = []

        def write(prefix):
            try:
                _insert_networks(prefix, 25)
            except Exception as e:
                errors.append(e)

        threads = [threading.Thread(target=write, args=('t%d' % i,))
                   for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual([], errors)
        self.assertEqual(8 * 25, _count_networks())

    def test_several_processes_write_without_lock_errors(self):
        self._wait_as_configured_by_default()
        _count_networks()  # the parent has pooled connections now
        mp = multiprocessing.get_context('fork')
        errors = mp.Queue()
        children = [mp.Process(target=_child_insert,
                               args=('p%d' % i, 30, errors))
                    for i in range(3)]
        for child in children:
            child.start()
        for child in children:
            child.join(60)
        self.assertEqual([0, 0, 0], [c.exitcode for c in children])
        self.assertTrue(errors.empty(), errors.get() if
                        not errors.empty() else None)
        self.assertEqual(3 * 30, _count_networks())
