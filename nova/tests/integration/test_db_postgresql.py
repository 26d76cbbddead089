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

    def test_reading_one_reads_in_autocommit_and_gives_it_back(self):
        from psycopg2 import extensions as psycopg2_extensions
        instance = objects.Instance(self.ctx, host='h1').create()
        with db_api.reading_one() as connection:
            driver = connection.connection.driver_connection
            self.assertTrue(driver.autocommit)
            self.assertEqual(instance.host, connection.execute(
                sa.select(models.Instance.host).where(
                    models.Instance.uuid == instance.uuid)).scalar())
            # No transaction block open on the server.
            self.assertEqual(psycopg2_extensions.TRANSACTION_STATUS_IDLE,
                             driver.info.transaction_status)
        # The pooled connection goes back to transactions.
        with db_api.reading() as connection:
            connection.execute(sa.select(sa.literal(1))).scalar()
            driver = connection.connection.driver_connection
            self.assertFalse(driver.autocommit)
            self.assertEqual(psycopg2_extensions.TRANSACTION_STATUS_INTRANS,
                             driver.info.transaction_status)

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


class AvailabilityTestCase(base.TestCase):

    def test_missing_binaries_give_a_reason(self):
        reason = postgresql.missing_reason(os.path.join(self.tmp, 'none'))
        self.assertIn('initdb', reason)
        server = postgresql.PostgreSQLServer(os.path.join(self.tmp, 'pg'),
                                             bin_dir=os.path.join(self.tmp,
                                                                  'none'))
        self.assertRaises(RuntimeError, server.start)
        server.stop()  # never started: nothing to do, no error
