"""Schema migrations on real SQLite files."""

import os
import threading

from alembic import autogenerate
from alembic import migration as alembic_migration
import sqlalchemy as sa

from nova.db import api as db_api
# Its tables, in models.Base.metadata with those of models.
from nova.db import control_models  # noqa: F401
from nova.db import migration
from nova.db import models
from nova import exception
from nova.tests import base


HEAD = '0022'


class MigrationTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.url = 'sqlite:///' + os.path.join(self.tmp, 'fresh.sqlite')
        db_api.configure(self.url)
        self.addCleanup(db_api.dispose)

    def _tables(self):
        return set(sa.inspect(db_api.get_engine()).get_table_names())

    def test_empty_database_has_no_version(self):
        self.assertIsNone(migration.db_version())

    def test_sync_creates_every_table_and_is_idempotent(self):
        self.assertEqual(HEAD, migration.db_sync())
        self.assertEqual(HEAD, migration.db_version())
        expected = set(models.Base.metadata.tables) | {'alembic_version'}
        self.assertEqual(expected, self._tables())
        self.assertEqual(HEAD, migration.db_sync())
        self.assertEqual(HEAD, migration.head_version())

    def test_0006_fills_what_the_flavors_of_existing_rows_take(self):
        migration.db_sync('0005')
        flavor = ('{"ephemeral_gb": 5, "flavorid": "2", "memory_mb": 2048, '
                  '"name": "large", "root_gb": 10, "swap": 1, "vcpus": 2}')
        with db_api.get_engine().begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO instances (uuid, host, power_state, deleted, "
                "flavor) VALUES ('i1', 'h1', 0, 0, :flavor), "
                "('i2', 'h1', 0, 0, NULL)"), {'flavor': flavor})
        self.assertEqual('0006', migration.db_sync('0006'))
        with db_api.get_engine().connect() as conn:
            rows = conn.execute(sa.text(
                'SELECT uuid, flavor_vcpus, flavor_memory_mb, flavor_disk_gb '
                'FROM instances ORDER BY uuid')).all()
        # 10 root + 5 ephemeral + 1 MiB of swap taking a whole GiB.
        self.assertEqual([('i1', 2, 2048, 16), ('i2', None, None, None)],
                         [tuple(r) for r in rows])

    def test_0020_existing_rows_show_manual_disk_config(self):
        migration.db_sync('0019')
        with db_api.get_engine().begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO instances (uuid, host, power_state, deleted) "
                "VALUES ('i1', 'h1', 0, 0)"))
        self.assertEqual('0020', migration.db_sync('0020'))
        with db_api.get_engine().connect() as conn:
            rows = conn.execute(sa.text(
                'SELECT uuid, auto_disk_config FROM instances')).all()
        self.assertEqual([('i1', False)],
                         [(uuid, bool(auto)) for uuid, auto in rows])

    def test_0007_counts_the_live_instances_of_each_host(self):
        migration.db_sync('0006')
        with db_api.get_engine().begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO instances (uuid, host, node, power_state, "
                "deleted, flavor_vcpus, flavor_memory_mb, flavor_disk_gb) "
                "VALUES ('i1', 'h1', 'n1', 0, 0, 2, 2048, 20), "
                "('i2', 'h1', 'n1', 0, 0, 1, 512, 1), "
                "('i3', 'h1', NULL, 0, 0, NULL, NULL, NULL), "
                "('i4', 'h2', 'n2', 0, 1, 4, 4096, 40), "
                "('i5', NULL, NULL, 0, 0, 8, 8192, 80)"))
        self.assertEqual('0007', migration.db_sync('0007'))
        with db_api.get_engine().connect() as conn:
            rows = conn.execute(sa.text(
                'SELECT host, node, instances, vcpus, memory_mb, disk_gb '
                'FROM host_usage ORDER BY host, node')).all()
        # Deleted and host-less instances take nothing anywhere.
        self.assertEqual([('h1', '', 1, 0, 0, 0),
                          ('h1', 'n1', 2, 3, 2560, 21)],
                         [tuple(r) for r in rows])

    def test_0008_says_which_instances_have_disks(self):
        # An instance that ran has disks somewhere; one that never
        # launched (a failed first build) has none. No attempt holds any.
        migration.db_sync('0007')
        with db_api.get_engine().begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO instances (uuid, host, power_state, deleted, "
                "vm_state, launched_at) VALUES "
                "('i1', 'h1', 0, 0, 'error', '2026-01-01 00:00:00'), "
                "('i2', 'h1', 0, 0, 'error', NULL)"))
        self.assertEqual('0008', migration.db_sync('0008'))
        with db_api.get_engine().connect() as conn:
            rows = conn.execute(sa.text(
                'SELECT uuid, disks_exist, attempt_id FROM instances '
                'ORDER BY uuid')).all()
        self.assertEqual([('i1', True, None), ('i2', False, None)],
                         [(r[0], bool(r[1]), r[2]) for r in rows])
        self.assertIn('instance_attempts', self._tables())

    def test_0010_keeps_old_faults_with_no_owner_message(self):
        # Nothing safe can be derived from an old row's text: NULL, which
        # the API shows the owner as the sentence of the code.
        migration.db_sync('0009')
        with db_api.get_engine().begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO instances (uuid, host, power_state, deleted, "
                "disks_exist) VALUES ('i1', 'h1', 0, 0, 0)"))
            conn.execute(sa.text(
                "INSERT INTO instance_faults (instance_uuid, code, "
                "message, details, host) VALUES ('i1', 409, 'fence "
                "compute-17 first', 'Traceback ...', 'h1')"))
            conn.execute(sa.text(
                "INSERT INTO instance_actions (action, instance_uuid) "
                "VALUES ('start', 'i1')"))
            conn.execute(sa.text(
                "INSERT INTO instance_actions_events (action_id, event, "
                "result, details) VALUES (1, 'compute_start_instance', "
                "'Error', 'fence compute-17 first')"))
        self.assertEqual('0010', migration.db_sync('0010'))
        with db_api.get_engine().connect() as conn:
            fault = conn.execute(sa.text(
                'SELECT message, details, user_message '
                'FROM instance_faults')).one()
            event = conn.execute(sa.text(
                'SELECT details, user_details '
                'FROM instance_actions_events')).one()
        self.assertEqual(('fence compute-17 first', 'Traceback ...', None),
                         tuple(fault))
        self.assertEqual(('fence compute-17 first', None), tuple(event))

    def test_0011_leaves_old_instances_without_hostname_or_access_ips(self):
        # NULL: the API derives the hostname from the display name, as it
        # showed it before, and shows empty access addresses.
        migration.db_sync('0010')
        with db_api.get_engine().begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO instances (uuid, display_name, power_state, "
                "deleted, disks_exist) VALUES ('i1', 'web 1', 0, 0, 0)"))
        self.assertEqual('0011', migration.db_sync('0011'))
        with db_api.get_engine().connect() as conn:
            row = conn.execute(sa.text(
                'SELECT display_name, hostname, access_ip_v4, access_ip_v6 '
                'FROM instances')).one()
        self.assertEqual(('web 1', None, None, None), tuple(row))

    def test_0012_adds_key_pairs_and_keeps_servers_without_a_key(self):
        migration.db_sync('0011')
        with db_api.get_engine().begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO instances (uuid, host, power_state, deleted, "
                "disks_exist) VALUES ('i1', 'h1', 0, 0, 0)"))
        self.assertEqual('0012', migration.db_sync('0012'))
        insert = sa.text(
            "INSERT INTO key_pairs (name, user_id, fingerprint, "
            "public_key, type) VALUES ('k', :user, 'f', 'ssh-rsa A', "
            "'ssh')")
        with db_api.get_engine().begin() as conn:
            key_name = conn.execute(sa.text(
                'SELECT key_name FROM instances')).scalar_one()
            conn.execute(insert, {'user': 'alice'})
            # The same name for another user is another key pair.
            conn.execute(insert, {'user': 'bob'})
        self.assertIsNone(key_name)
        with db_api.get_engine().begin() as conn:
            self.assertRaises(sa.exc.IntegrityError, conn.execute, insert,
                              {'user': 'alice'})

    def test_0014_keeps_old_flavors_public_with_no_specs(self):
        migration.db_sync('0013')
        with db_api.get_engine().begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO flavors (flavorid, name, memory_mb, vcpus, "
                "root_gb, ephemeral_gb, swap) VALUES ('1', 'm1', 64, 1, 1, "
                "0, 0)"))
        self.assertEqual('0014', migration.db_sync('0014'))
        with db_api.get_engine().begin() as conn:
            row = conn.execute(sa.text(
                'SELECT id, is_public, rxtx_factor, description '
                'FROM flavors')).one()
            self.assertEqual((True, 1.0, None), (bool(row[1]), row[2],
                                                 row[3]))
            insert = sa.text(
                "INSERT INTO flavor_projects (flavor_id, project_id) "
                "VALUES (:id, 'p1')")
            conn.execute(insert, {'id': row[0]})
        with db_api.get_engine().begin() as conn:
            # One grant per project and flavor.
            self.assertRaises(sa.exc.IntegrityError, conn.execute, insert,
                              {'id': row[0]})

    def test_sync_to_a_named_version(self):
        self.assertEqual('0001', migration.db_sync('0001'))
        self.assertEqual('0001', migration.db_version())
        self.assertNotIn('compute_nodes', self._tables())

    def test_upgrade_from_0001_keeps_rows_and_adds_columns(self):
        migration.db_sync('0001')
        engine = db_api.get_engine()
        with engine.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO networks (uuid, name, bridge) "
                "VALUES ('n1', 'public', 'br-public')"))
        self.assertEqual('0002', migration.db_sync('0002'))
        with engine.connect() as conn:
            row = conn.execute(sa.text(
                'SELECT name, bridge, cidr FROM networks')).one()
        self.assertEqual(('public', 'br-public', None), tuple(row))
        self.assertIn('compute_nodes', self._tables())

    def test_unknown_version_is_refused_and_nothing_created(self):
        self.assertRaises(exception.InvalidInput, migration.db_sync, '0999')
        self.assertEqual(set(), self._tables())

    def test_models_match_the_migrated_schema(self):
        migration.db_sync()
        with db_api.get_engine().connect() as connection:
            context = alembic_migration.MigrationContext.configure(
                connection, opts={'compare_type': True})
            diff = autogenerate.compare_metadata(context,
                                                 models.Base.metadata)
        self.assertEqual([], diff)

    def test_indexes_queries_need(self):
        migration.db_sync()
        inspector = sa.inspect(db_api.get_engine())

        def indexed(table):
            return [i['column_names'] for i in inspector.get_indexes(table)]

        self.assertIn(['host', 'deleted'], indexed('instances'))
        self.assertIn(['instance_uuid', 'request_id'],
                      indexed('instance_actions'))
        for columns in (['source_compute', 'status'],
                        ['dest_compute', 'status']):
            self.assertIn(columns, indexed('migrations'))

    def test_concurrent_syncs_from_separate_engines(self):
        # Two processes starting at once each run db_sync with their own
        # engine; both must succeed and the schema be made once.
        engines = [db_api.create_engine(self.url) for _ in range(3)]
        results, errors = [], []
        barrier = threading.Barrier(len(engines))

        def sync(engine):
            barrier.wait()
            try:
                results.append(migration.db_sync(engine=engine))
            except Exception as e:
                errors.append(e)
            finally:
                engine.dispose()

        threads = [threading.Thread(target=sync, args=(e,))
                   for e in engines]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual([], errors)
        self.assertEqual([HEAD] * 3, results)
        self.assertEqual(HEAD, migration.db_version())
