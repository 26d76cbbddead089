"""Migration records."""

from nova import context
from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf


class MigrationTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()
        self.uuid = objects.Instance(self.ctx, host='h1').create().uuid

    def _create(self, **values):
        values.setdefault('instance_uuid', self.uuid)
        values.setdefault('source_compute', 'h1')
        values.setdefault('migration_type', migration_obj.EVACUATION)
        values.setdefault('status', migration_obj.ACCEPTED)
        return objects.Migration(self.ctx, **values).create()

    def test_create_and_get(self):
        migration = self._create(dest_compute='h2')
        by_id = objects.Migration.get_by_id(self.ctx, migration.id)
        by_uuid = objects.Migration.get_by_uuid(self.ctx, migration.uuid)
        self.assertEqual(migration.to_dict(), by_id.to_dict())
        self.assertEqual(migration.to_dict(), by_uuid.to_dict())
        self.assertRaises(exception.MigrationNotFound,
                          objects.Migration.get_by_id, self.ctx, 999)
        self.assertRaises(exception.MigrationNotFound,
                          objects.Migration.get_by_uuid, self.ctx, 'none')

    def test_needs_an_existing_instance(self):
        self.assertRaises(exception.InstanceNotFound, self._create,
                          instance_uuid='00000000-0000-0000-0000-000000000000')
        migration = self._create()
        self.assertRaises(exception.MigrationExists, self._create,
                          uuid=migration.uuid)

    def test_save(self):
        migration = self._create()
        migration.status = migration_obj.PRE_MIGRATING
        migration.dest_compute = 'h2'
        migration.save()
        row = objects.Migration.get_by_id(self.ctx, migration.id)
        self.assertEqual((migration_obj.PRE_MIGRATING, 'h2'),
                         (row.status, row.dest_compute))

    def test_save_with_expected_status(self):
        migration = self._create()
        stale = objects.Migration.get_by_id(self.ctx, migration.id)
        migration.status = migration_obj.FAILED
        migration.save(expected_status=migration_obj.IN_PROGRESS)
        stale.status = migration_obj.DONE
        with self.assertRaises(exception.UnexpectedMigrationStatusError) as c:
            stale.save(expected_status=migration_obj.IN_PROGRESS)
        self.assertEqual(migration_obj.FAILED, c.exception.kwargs['actual'])
        self.assertEqual(migration_obj.FAILED, objects.Migration.get_by_id(
            self.ctx, migration.id).status)

    def test_get_by_filters(self):
        done = self._create(dest_compute='h2', status=migration_obj.DONE)
        failed = self._create(dest_compute='h3', status=migration_obj.FAILED)
        other = self._create(source_compute='h4', migration_type='resize')

        def ids(**filters):
            return [m.id for m in objects.Migration.get_by_filters(
                self.ctx, **filters)]

        self.assertEqual([done.id, failed.id, other.id], ids())
        self.assertEqual([done.id, failed.id], ids(source_compute='h1'))
        self.assertEqual([failed.id], ids(dest_compute='h3'))
        self.assertEqual([done.id, failed.id], ids(
            status=[migration_obj.DONE, migration_obj.FAILED]))
        self.assertEqual([other.id], ids(migration_type='resize',
                                         instance_uuid=self.uuid))
        self.assertEqual([], ids(status=migration_obj.COMPLETED))

    def test_arriving_is_what_evacuations_in_flight_bring(self):
        small = objects.Flavor('1', 'small', 512, 1, 1, swap=1)
        coming = objects.Instance(self.ctx, host='h1', node='n1',
                                  flavor=small).create()
        landed = objects.Instance(self.ctx, host='h2', node='h2',
                                  flavor=small).create()
        no_flavor = objects.Instance(self.ctx, host='h1').create()
        gone = objects.Instance(self.ctx, host='h1', flavor=small).create()
        first = self._create(instance_uuid=coming.uuid, dest_compute='h2',
                             dest_node='h2')
        self._create(instance_uuid=landed.uuid, dest_compute='h2',
                     dest_node='h2', status=migration_obj.PRE_MIGRATING)
        self._create(instance_uuid=no_flavor.uuid, dest_compute='h3')
        self._create(instance_uuid=gone.uuid, dest_compute='h2')
        gone.destroy()
        # Ended, another type, another target: none of them arriving.
        self._create(instance_uuid=coming.uuid, dest_compute='h2',
                     status=migration_obj.FAILED)
        self._create(instance_uuid=coming.uuid, dest_compute='h2',
                     migration_type='resize')
        self._create(instance_uuid=coming.uuid, dest_compute='h4')
        self.assertTrue(first.id)

        with dbf.recorded_statements() as statements:
            arriving = objects.Migration.arriving(self.ctx, ['h2', 'h3'])
        self.assertEqual(1, len(statements))
        self.assertEqual([
            migration_obj.ArrivingInstance(
                'h2', 'h2', coming.uuid, 'h1', 'n1', 1, 512, 2),
            migration_obj.ArrivingInstance(
                'h2', 'h2', landed.uuid, 'h2', 'h2', 1, 512, 2),
            migration_obj.ArrivingInstance(
                'h3', None, no_flavor.uuid, 'h1', None, 0, 0, 0)],
            arriving)
        self.assertEqual([], objects.Migration.arriving(self.ctx, []))
        self.assertEqual([], objects.Migration.arriving(self.ctx, ['h9']))

    def test_newest_evacuations(self):
        def newest(**filters):
            return {uuid: m.id for uuid, m in
                    objects.Migration.newest_evacuations(
                        self.ctx, 'h1', **filters).items()}

        # This instance failed once, then left for good and was cleaned
        # up: its newest evacuation is the completed one.
        self._create(dest_compute='h2', status=migration_obj.FAILED)
        left = self._create(dest_compute='h2',
                            status=migration_obj.COMPLETED)
        # Another one whose newest is done; an older done one and a newer
        # migration of another type or from another host do not count.
        other = objects.Instance(self.ctx, host='h3').create().uuid
        self._create(instance_uuid=other, status=migration_obj.DONE)
        done = self._create(instance_uuid=other, status=migration_obj.DONE)
        self._create(instance_uuid=other, source_compute='h3',
                     status=migration_obj.ACCEPTED)
        self._create(instance_uuid=other, migration_type='resize')
        # Created in the same instant: the higher id is the newer.
        third = objects.Instance(self.ctx, host='h1').create().uuid
        when = objects.Migration.get_by_id(self.ctx, done.id).created_at
        self._create(instance_uuid=third, created_at=when)
        tie = self._create(instance_uuid=third, created_at=when,
                           status=migration_obj.PRE_MIGRATING)

        self.assertEqual({self.uuid: left.id, other: done.id,
                          third: tie.id}, newest())
        self.assertEqual({other: done.id}, newest(status=migration_obj.DONE))
        self.assertEqual({self.uuid: left.id, third: tie.id}, newest(
            status=[migration_obj.COMPLETED, *migration_obj.IN_PROGRESS]))
        self.assertEqual({third: tie.id}, newest(instance_uuid=third))
        self.assertEqual({}, newest(instance_uuid=third,
                                    status=migration_obj.DONE))
        self.assertEqual({}, objects.Migration.newest_evacuations(
            self.ctx, 'h2'))
