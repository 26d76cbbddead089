"""The schema, the compare-and-swap save and the host claim lease against
a real PostgreSQL.

Starts a throwaway cluster (``nova.testing.postgresql``); skipped when the
PostgreSQL binaries are not installed.
"""

import os
import threading
import unittest

import sqlalchemy as sa

from nova import context
from nova.db import api as db_api
from nova.db import migration
from nova.db import models
from nova import objects
from nova.objects import host_usage as usage_obj
from nova.scheduler import usage
from nova.testing import postgresql
from nova.tests import base
from nova.tests.unit.compute import test_evacuation_states
from nova.tests.unit.objects import test_host_lease
from nova.tests.unit.objects import test_host_usage
from nova.tests.unit.objects import test_instance

_MISSING = postgresql.missing_reason()


class _OnPostgreSQL(base.TestCase):
    """A test on a throwaway PostgreSQL cluster of its own."""

    def setUp(self):
        super().setUp()
        # The postgres user must reach the cluster directory.
        os.chmod(self.tmp, 0o711)
        self.server = postgresql.PostgreSQLServer(
            os.path.join(self.tmp, 'pg'))
        self.server.start()
        self.addCleanup(self.server.stop)
        self.use_database(self.server.url)
        self.ctx = context.get_admin_context()


@unittest.skipIf(_MISSING, 'PostgreSQL unavailable: %s' % _MISSING)
class PostgreSQLTestCase(_OnPostgreSQL):

    ITERATIONS = 50

    def test_schema_and_version(self):
        self.assertEqual(migration.head_version(), migration.db_version())
        self.assertEqual(migration.head_version(), migration.db_sync())
        tables = set(sa.inspect(db_api.get_engine()).get_table_names())
        self.assertTrue(set(models.Base.metadata.tables) <= tables)

    def test_round_trip_of_an_instance(self):
        instance = objects.Instance(self.ctx, host='h1',
                                    system_metadata={'a': 'b'}).create()
        loaded = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual(instance.to_dict(), loaded.to_dict())
        self.assertEqual(instance.created_at, loaded.created_at)

    def _backend_of_next_checkout(self, engine):
        """The server process of the connection ``engine`` hands out next
        (the pool's most recently returned one)."""
        with engine.connect() as connection:
            return connection.execute(
                sa.text('SELECT pg_backend_pid()')).scalar()

    def _terminate(self, pid):
        """End one server process, as a server restart does for all, and
        wait until it is gone."""
        # Autocommit: within a transaction pg_stat_activity stays as the
        # transaction first read it.
        admin_engine = sa.create_engine(self.server.url,
                                        isolation_level='AUTOCOMMIT')
        self.addCleanup(admin_engine.dispose)
        with admin_engine.connect() as admin:
            admin.execute(sa.text('SELECT pg_terminate_backend(:pid)'),
                          {'pid': pid})

            def gone():
                return not admin.execute(sa.text(
                    'SELECT count(*) FROM pg_stat_activity WHERE pid = :p'),
                    {'p': pid}).scalar()

            self.assertTrue(base.wait_until(gone, timeout=30))

    def test_read_one_row_reads_in_autocommit_and_gives_it_back(self):
        from psycopg2 import extensions as psycopg2_extensions
        instance = objects.Instance(self.ctx, host='h1').create()
        engine = db_api.get_engine()
        at_return = []

        def returned(dbapi_connection, record, reset_state):
            # Before the pool's rollback: what the read left open.
            at_return.append((dbapi_connection.autocommit,
                              dbapi_connection.info.transaction_status))

        sa.event.listen(engine.pool, 'reset', returned)
        self.addCleanup(sa.event.remove, engine.pool, 'reset', returned)
        query = sa.select(models.Instance.__table__.c.host).where(
            models.Instance.__table__.c.uuid == sa.bindparam('uuid'))
        self.assertEqual(('h1',), db_api.read_one_row(
            query, {'uuid': instance.uuid}))
        # No transaction block was opened, and the connection goes back
        # to transactions.
        self.assertEqual(
            [(False, psycopg2_extensions.TRANSACTION_STATUS_IDLE)],
            at_return)

    def test_reads_run_in_autocommit_and_writes_stay_transactions(self):
        from psycopg2 import extensions as psycopg2_extensions
        instance = objects.Instance(self.ctx, host='h1').create()
        pid = sa.select(sa.func.pg_backend_pid())
        host = sa.select(models.Instance.__table__.c.host).where(
            models.Instance.__table__.c.uuid == sa.bindparam('uuid'))
        with db_api.reading() as connection:
            reader = connection.execute(pid).scalar()
            # The token read within it runs on it, in autocommit too.
            self.assertEqual(('h1',), db_api.read_one_row(
                host, {'uuid': instance.uuid}))
            driver = connection.connection.driver_connection
            self.assertTrue(driver.autocommit)
            self.assertEqual(psycopg2_extensions.TRANSACTION_STATUS_IDLE,
                             driver.info.transaction_status)
        # The same pooled connection, back to transactions: a write that
        # fails is rolled back.
        with self.assertRaises(RuntimeError):
            with db_api.writing() as connection:
                self.assertEqual(reader, connection.execute(pid).scalar())
                driver = connection.connection.driver_connection
                self.assertFalse(driver.autocommit)
                self.assertEqual(
                    psycopg2_extensions.TRANSACTION_STATUS_INTRANS,
                    driver.info.transaction_status)
                connection.execute(sa.update(models.Instance.__table__).where(
                    models.Instance.__table__.c.uuid == instance.uuid).values(
                        host='h2'))
                raise RuntimeError('rolled back')
        self.assertEqual('h1', objects.Instance.get_by_uuid(
            self.ctx, instance.uuid).host)

    def test_a_read_on_a_dropped_connection_leaves_the_pool_sound(self):
        from psycopg2 import extensions as psycopg2_extensions
        instance = objects.Instance(self.ctx, host='h1').create()
        engine = db_api.get_engine()
        self._terminate(self._backend_of_next_checkout(engine))
        # Used within the second: not pinged, the read fails as a
        # disconnect and its connection is discarded.
        with self.assertRaises(sa.exc.OperationalError):
            with db_api.reading() as connection:
                connection.execute(sa.select(sa.literal(1))).scalar()
        self.assertEqual('h1', objects.Instance.get_by_uuid(
            self.ctx, instance.uuid).host)
        with db_api.writing() as connection:
            connection.execute(sa.select(sa.literal(1))).scalar()
            driver = connection.connection.driver_connection
            self.assertFalse(driver.autocommit)
            self.assertEqual(psycopg2_extensions.TRANSACTION_STATUS_INTRANS,
                             driver.info.transaction_status)

    def test_read_one_row_survives_a_dropped_connection(self):
        # The token read before a side effect must not fail an attempt
        # because the server dropped the pooled connection it got (a
        # restart): it is read again on a new one.
        instance = objects.Instance(self.ctx, host='h1').create()
        engine = db_api.get_engine()
        before = self._backend_of_next_checkout(engine)
        self._terminate(before)
        query = sa.select(models.Instance.__table__.c.host).where(
            models.Instance.__table__.c.uuid == sa.bindparam('uuid'))
        self.assertEqual(('h1',), db_api.read_one_row(
            query, {'uuid': instance.uuid}))
        self.assertNotEqual(before, self._backend_of_next_checkout(engine))

    def test_a_connection_idle_in_the_pool_is_pinged_first(self):
        engine = db_api.create_engine(self.server.url, ping_after_idle=0)
        self.addCleanup(engine.dispose)
        before = self._backend_of_next_checkout(engine)
        self._terminate(before)
        # Idle longer than 0 s: pinged, found dropped, replaced.
        self.assertNotEqual(before, self._backend_of_next_checkout(engine))

    def test_a_connection_just_used_is_not_pinged(self):
        # The ping's cost is only paid for a connection left idle: one
        # used within ping_after_idle is handed out as it is. Dropped
        # meanwhile, its statement fails as a disconnect, and every
        # connection pooled before that is replaced.
        engine = db_api.create_engine(self.server.url,
                                      ping_after_idle=3600)
        self.addCleanup(engine.dispose)
        self._terminate(self._backend_of_next_checkout(engine))
        with self.assertRaises(sa.exc.OperationalError) as failed:
            self._backend_of_next_checkout(engine)
        self.assertTrue(failed.exception.connection_invalidated)
        self.assertTrue(self._backend_of_next_checkout(engine))

    def test_compare_and_swap_race(self):
        for _ in range(self.ITERATIONS):
            uuid = objects.Instance(self.ctx, host='h1').create().uuid
            self.assertEqual(['lost', 'won'],
                             test_instance.race_two_evacuations(self.ctx,
                                                                uuid))

    def test_host_lease_has_one_holder_at_a_time(self):
        # On PostgreSQL a losing INSERT aborts its transaction: each
        # attempt must run in a session of its own.
        self.assertEqual((1, 20), test_host_lease.race_for_the_lease(
            self.ctx, 'h1'))

    def test_usage_counters_stay_exact_under_concurrent_moves(self):
        # Row locks, increments and the key order of the counter writes:
        # no lost update, no deadlock, nothing for the audit to correct.
        self.assertEqual([], test_host_usage.race_moves(self.ctx))
        self.assertEqual([], usage_obj.audit('h1'))

    def test_usage_is_kept_by_the_database(self):
        small = objects.Flavor('1', 'small', 512, 1, 1)
        large = objects.Flavor('2', 'large', 2048, 2, 10, ephemeral_gb=5,
                               swap=1)
        for flavor in (small, large, large):
            objects.Instance(self.ctx, host='h1', node='h1',
                             flavor=flavor).create()
        objects.Instance(self.ctx, host='h2', flavor=large).create()
        gone = objects.Instance(self.ctx, host='h1', flavor=large).create()
        gone.destroy()
        self.assertEqual(usage.Need(5, 4608, 1 + 2 * 16),
                         usage.usage(self.ctx, 'h1'))
        self.assertEqual(usage.Need(), usage.usage(self.ctx, 'h3'))

    def test_a_stopped_transaction_gives_its_row_locks_back(self):
        # A nova-compute stopped (SIGSTOP, a hung host) between its
        # heartbeat's UPDATE and COMMIT: the operator's forced_down on
        # the same row must not wait for TCP to give up. The stalled
        # service is a second engine (another process's pool) whose
        # transaction sits idle while holding the row lock.
        self.flags(idle_in_transaction_timeout=1, group='database')
        self.use_database(self.server.url)
        service = objects.Service(self.ctx, host='c1',
                                  binary='nova-compute').create()
        stalled = db_api.create_engine(self.server.url)
        self.addCleanup(stalled.dispose)
        locked, resume, outcome = (threading.Event(), threading.Event(),
                                   [])

        def stalled_heartbeat():
            try:
                with stalled.connect() as conn:
                    with conn.begin():
                        conn.execute(
                            sa.update(models.Service)
                            .where(models.Service.id == service.id)
                            .values(report_count=41))
                        locked.set()
                        # Bounded so that, without the server's timeout,
                        # this test fails rather than hangs.
                        resume.wait(120)
                outcome.append('committed')
            except sa.exc.OperationalError as e:
                outcome.append('ended by the server: %s' % e.orig)

        holder = threading.Thread(target=stalled_heartbeat)
        holder.start()
        self.addCleanup(holder.join)
        self.addCleanup(resume.set)
        self.assertTrue(locked.wait(60))
        service.forced_down = True
        service.save()
        resume.set()
        holder.join()
        self.assertEqual(1, len(outcome))
        self.assertTrue(outcome[0].startswith('ended by the server'),
                        outcome[0])
        self.assertTrue(objects.Service.get_by_id(self.ctx,
                                                  service.id).forced_down)
        self.assertNotEqual(41, objects.Service.get_by_id(
            self.ctx, service.id).report_count)

    def test_stop_is_idempotent(self):
        pid = self.server.pid
        db_api.dispose()
        self.server.stop()
        self.server.stop()
        self.assertFalse(postgresql.pid_alive(pid))
        self.assertIsNone(self.server.pid)


@unittest.skipIf(_MISSING, 'PostgreSQL unavailable: %s' % _MISSING)
class TestEvacuationStatesOnPostgreSQL(test_evacuation_states.TransitionTests,
                                       _OnPostgreSQL):
    """Every step of the evacuation table, and the one-transaction last
    step, on PostgreSQL (row locks, READ COMMITTED)."""


@unittest.skipIf(_MISSING, 'PostgreSQL unavailable: %s' % _MISSING)
class TestLeaseGivenBackWithTheClaimOnPostgreSQL(
        test_host_lease.GivenBackWithTheClaim, _OnPostgreSQL):
    """A claim and its lease's give-back commit together; a lost lease
    rolls the claim back."""


class AvailabilityTestCase(base.TestCase):

    def test_missing_binaries_give_a_reason(self):
        reason = postgresql.missing_reason(os.path.join(self.tmp, 'none'))
        self.assertIn('initdb', reason)
        server = postgresql.PostgreSQLServer(os.path.join(self.tmp, 'pg'),
                                             bin_dir=os.path.join(self.tmp,
                                                                  'none'))
        self.assertRaises(RuntimeError, server.start)
        server.stop()  # never started: nothing to do, no error
