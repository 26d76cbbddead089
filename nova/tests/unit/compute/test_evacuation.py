"""Source-side cleanup after evacuations, against the fake driver's real
files and in-memory domains and a real SQLite database."""

import os

from nova.compute import evacuation
from nova.compute import instance_events
from nova.conf import host_settings
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests import base
from nova.tests.files import sha256_tree
from nova.tests.fixtures import database as dbf
from nova.virt import fake
from nova.virt import instancedir
from nova.virt import ownership
from nova.virt import storage_identity


class EvacuationCleanupTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.path_a = os.path.join(self.tmp, 'a')
        self.path_b = os.path.join(self.tmp, 'b')
        self.driver = self.make_driver('a', self.path_a)
        self.driver.init_host('a')
        self.driver.init_storage_identity()
        self.service_a = dbf.make_service(
            self.ctx, 'a', up=False,
            identity=self.driver.get_storage_identity())
        self.service_b = dbf.make_service(
            self.ctx, 'b', identity=storage_identity.create(self.path_b))
        # The image cache and another instance's files must survive any
        # cleanup.
        os.makedirs(os.path.join(self.path_a, '_base'))
        with open(os.path.join(self.path_a, '_base', 'img'), 'w') as f:
            f.write('base image')

    def make_driver(self, host, path):
        settings = host_settings.HostSettings(host=host,
                                              instances_path=path)
        return fake.FakeDriver(instance_events.ComputeVirtAPI(), settings)

    def booted_here(self, new_host=None, status=None):
        """An instance with a guest on a; optionally evacuated to
        ``new_host`` with a migration in ``status``."""
        instance = dbf.make_instance(self.ctx, 'a')
        self.driver.spawn(self.ctx, instance, {'id': None})
        migration = None
        if status is not None:
            migration = objects.Migration(
                self.ctx, instance_uuid=instance.uuid, source_compute='a',
                dest_compute=new_host, migration_type=migration_obj.
                EVACUATION, status=status).create()
            if status == migration_obj.DONE:
                instance.host = new_host
                instance.save()
        return instance, migration

    def instance_dir(self, instance):
        return os.path.join(self.path_a, instance.uuid)

    def quarantined(self):
        return [(q.instance_uuid, sha256_tree(q.path))
                for q in instancedir.list_quarantine(self.path_a)[0]]

    def migration_status(self, migration):
        return objects.Migration.get_by_id(self.ctx, migration.id).status

    def cleanup(self):
        return evacuation.destroy_evacuated_instances(self.ctx, 'a',
                                                      self.driver)

    def assertBaseKept(self):
        self.assertTrue(os.path.isfile(os.path.join(self.path_a, '_base',
                                                    'img')))


class TestDone(EvacuationCleanupTestCase):

    def test_not_shared_removes_domain_and_moves_disks_aside(self):
        bystander, _ = self.booted_here()
        kept = sha256_tree(self.instance_dir(bystander))
        instance, migration = self.booted_here('b', migration_obj.DONE)
        before = sha256_tree(self.instance_dir(instance))
        report = self.cleanup()
        self.assertEqual([instance.uuid], report.completed)
        self.assertEqual([instance.uuid], report.quarantined)
        self.assertIsNone(self.driver.domain(instance.uuid))
        self.assertFalse(os.path.exists(self.instance_dir(instance)))
        # Moved, not deleted: byte for byte in quarantine.
        [(uuid, moved)] = self.quarantined()
        moved.pop(instancedir.QUARANTINE_REASON)
        self.assertEqual((instance.uuid, before), (uuid, moved))
        self.assertEqual(migration_obj.COMPLETED,
                         self.migration_status(migration))
        self.assertIn(instance.uuid, report.do_not_touch)
        # Nothing else was touched.
        self.assertBaseKept()
        self.assertEqual(kept, sha256_tree(self.instance_dir(bystander)))
        self.assertIsNotNone(self.driver.domain(bystander.uuid))
        self.assertNotIn(bystander.uuid, report.do_not_touch)

    def test_shared_removes_domain_but_keeps_disks(self):
        # b mounts a's directory: its recorded identity is a's.
        self.service_b.storage_identity = self.service_a.storage_identity
        self.service_b.save()
        instance, migration = self.booted_here('b', migration_obj.DONE)
        before = sha256_tree(self.instance_dir(instance))
        report = self.cleanup()
        self.assertEqual([instance.uuid], report.completed)
        self.assertEqual([], report.quarantined)
        self.assertIsNone(self.driver.domain(instance.uuid))
        self.assertEqual(before, sha256_tree(self.instance_dir(instance)))
        self.assertEqual(migration_obj.COMPLETED,
                         self.migration_status(migration))

    def test_a_directory_the_new_owner_stamped_is_never_touched(self):
        # The mirror case: b mounted the shared storage late and its row
        # still says another identity, so the identities say "not
        # shared"; but b re-stamped the directory when it spawned the
        # evacuated instance there, so it is b's, and a keeps off it.
        instance, migration = self.booted_here('b', migration_obj.DONE)
        idir = instancedir.InstanceDir(self.path_a, instance.uuid)
        ownership.write(idir, ownership.OwnerStamp.new(
            instance.uuid, 'b', self.driver.get_storage_identity(),
            'evacuation', migration.uuid, migration.uuid))
        before = sha256_tree(idir.path)
        report = self.cleanup()
        self.assertEqual([instance.uuid], report.completed)
        self.assertEqual([], report.quarantined)
        self.assertIn('the new owner', report.kept[instance.uuid])
        self.assertEqual(before, sha256_tree(idir.path))

    def test_a_directory_without_stamp_is_kept(self):
        instance, migration = self.booted_here('b', migration_obj.DONE)
        os.unlink(os.path.join(self.instance_dir(instance), '.nova-owner'))
        before = sha256_tree(self.instance_dir(instance))
        report = self.cleanup()
        self.assertEqual([], report.quarantined)
        self.assertIn('no ownership stamp', report.kept[instance.uuid])
        self.assertEqual(before, sha256_tree(self.instance_dir(instance)))

    def test_a_stamp_naming_another_instance_keeps_everything(self):
        instance, migration = self.booted_here('b', migration_obj.DONE)
        other = objects.Instance(self.ctx)
        with open(os.path.join(self.instance_dir(instance), '.nova-owner'),
                  'w') as f:
            f.write(ownership.OwnerStamp.new(
                other.uuid, 'a', self.driver.get_storage_identity(),
                'build', other.uuid).to_json())
        before = sha256_tree(self.instance_dir(instance))
        report = self.cleanup()
        self.assertEqual([], report.quarantined)
        self.assertIn('names instance', report.kept[instance.uuid])
        self.assertEqual(before, sha256_tree(self.instance_dir(instance)))

    def test_unknown_owner_storage_keeps_disks(self):
        self.service_b.storage_identity = None
        self.service_b.save()
        instance, migration = self.booted_here('b', migration_obj.DONE)
        before = sha256_tree(self.instance_dir(instance))
        report = self.cleanup()
        self.assertEqual([], report.quarantined)
        self.assertEqual(before, sha256_tree(self.instance_dir(instance)))
        self.assertIsNone(self.driver.domain(instance.uuid))

    def test_done_but_still_placed_here_is_left_alone(self):
        instance, migration = self.booted_here('b', migration_obj.ACCEPTED)
        migration.status = migration_obj.DONE
        migration.save()
        report = self.cleanup()
        self.assertIn(instance.uuid, report.errors)
        self.assertIsNotNone(self.driver.domain(instance.uuid))
        self.assertTrue(os.path.isdir(self.instance_dir(instance)))
        self.assertEqual(migration_obj.DONE,
                         self.migration_status(migration))

    def test_one_failure_does_not_stop_the_others(self):
        first, m1 = self.booted_here('b', migration_obj.DONE)
        second, m2 = self.booted_here('b', migration_obj.DONE)
        self.driver.fail_at('destroy')
        report = self.cleanup()
        self.assertEqual([first.uuid], list(report.errors))
        self.assertEqual([second.uuid], report.completed)
        self.assertEqual(migration_obj.DONE, self.migration_status(m1))
        # The next start finishes the job.
        report = self.cleanup()
        self.assertEqual([first.uuid], report.completed)
        self.assertFalse(os.path.exists(self.instance_dir(first)))

    def test_one_instance_is_cleaned_up_on_its_own(self):
        # What the reaper does per instance, under its lock: the other
        # evacuated instance is not touched.
        first, m1 = self.booted_here('b', migration_obj.DONE)
        second, m2 = self.booted_here('b', migration_obj.DONE)
        second_files = sha256_tree(self.instance_dir(second))
        report = evacuation.EvacuationCleanup()
        evacuation.clean_up_evacuated(self.ctx, 'a', self.driver, first,
                                      m1, report)
        self.assertEqual(([first.uuid], [first.uuid], {}),
                         (report.completed, report.quarantined,
                          report.errors))
        self.assertIsNone(self.driver.domain(first.uuid))
        self.assertEqual(migration_obj.COMPLETED, self.migration_status(m1))
        self.assertIsNotNone(self.driver.domain(second.uuid))
        self.assertEqual(second_files,
                         sha256_tree(self.instance_dir(second)))
        self.assertEqual(migration_obj.DONE, self.migration_status(m2))

    def test_one_instance_failing_is_reported_never_raised(self):
        instance, migration = self.booted_here('b', migration_obj.DONE)
        self.driver.fail_at('destroy')
        report = evacuation.EvacuationCleanup()
        evacuation.clean_up_evacuated(self.ctx, 'a', self.driver, instance,
                                      migration, report)
        self.assertEqual([instance.uuid], list(report.errors))
        self.assertEqual([], report.completed)
        self.assertEqual(migration_obj.DONE,
                         self.migration_status(migration))


class TestNotDone(EvacuationCleanupTestCase):

    def test_in_progress_touches_nothing_and_is_not_started(self):
        for status in migration_obj.IN_PROGRESS:
            instance, migration = self.booted_here('b', status)
            before = sha256_tree(self.instance_dir(instance))
            report = self.cleanup()
            self.assertIn(instance.uuid, report.in_progress)
            self.assertIn(instance.uuid, report.do_not_touch)
            self.assertIsNotNone(self.driver.domain(instance.uuid))
            self.assertEqual(before,
                             sha256_tree(self.instance_dir(instance)))
            self.assertEqual(status, self.migration_status(migration))

    def test_failed_evacuation_leaves_the_instance_ours(self):
        instance, migration = self.booted_here('b', migration_obj.FAILED)
        report = self.cleanup()
        self.assertEqual([instance.uuid], report.failed)
        self.assertNotIn(instance.uuid, report.do_not_touch)
        self.assertIsNotNone(self.driver.domain(instance.uuid))
        self.assertTrue(os.path.isdir(self.instance_dir(instance)))
        self.assertEqual(migration_obj.FAILED,
                         self.migration_status(migration))

    def test_newest_evacuation_decides(self):
        # Failed once, then succeeded: the instance is b's now.
        instance, first = self.booted_here('b', migration_obj.FAILED)
        objects.Migration(self.ctx, instance_uuid=instance.uuid,
                          source_compute='a', dest_compute='b',
                          migration_type=migration_obj.EVACUATION,
                          status=migration_obj.DONE).create()
        instance.host = 'b'
        instance.save()
        report = self.cleanup()
        self.assertEqual([instance.uuid], report.completed)
        self.assertIsNone(self.driver.domain(instance.uuid))

    def test_a_completed_newest_evacuation_is_left_alone(self):
        # Failed once, then done and cleaned up: the older failure says
        # nothing any more (it is not "still this host's own").
        instance, first = self.booted_here('b', migration_obj.FAILED)
        objects.Migration(self.ctx, instance_uuid=instance.uuid,
                          source_compute='a', dest_compute='b',
                          migration_type=migration_obj.EVACUATION,
                          status=migration_obj.COMPLETED).create()
        instance.host = 'b'
        instance.save()
        self.driver.destroy(self.ctx, instance, None, destroy_disks=True)
        report = self.cleanup()
        self.assertEqual(([], [], [], [], {}), (
            report.completed, report.failed, report.in_progress,
            report.orphans, report.errors))
        self.assertEqual(migration_obj.FAILED, self.migration_status(first))


class TestOrphans(EvacuationCleanupTestCase):

    def test_domain_of_instance_placed_elsewhere_is_reported_not_deleted(self):
        instance, _ = self.booted_here()
        instance.host = 'b'
        instance.save()
        before = sha256_tree(self.instance_dir(instance))
        report = self.cleanup()
        self.assertEqual([instance.uuid], report.orphans)
        self.assertIn(instance.uuid, report.do_not_touch)
        self.assertIsNotNone(self.driver.domain(instance.uuid))
        self.assertEqual(before, sha256_tree(self.instance_dir(instance)))

    def test_domain_unknown_to_the_database_is_reported_not_deleted(self):
        stranger = objects.Instance(self.ctx)       # never created
        self.driver.spawn(self.ctx, stranger, {'id': None})
        report = self.cleanup()
        self.assertEqual([stranger.uuid], report.orphans)
        self.assertIsNotNone(self.driver.domain(stranger.uuid))
        self.assertTrue(os.path.isdir(self.instance_dir(stranger)))

    def test_own_instances_are_not_orphans(self):
        instance, _ = self.booted_here()
        report = self.cleanup()
        self.assertEqual([], report.orphans)
        self.assertEqual(set(), report.do_not_touch)
