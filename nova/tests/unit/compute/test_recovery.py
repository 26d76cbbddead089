"""What a restart does with the spawn attempts a dead process left open:
on the fake driver's real files and a real SQLite database."""

import os

from nova.compute import operation
from nova.compute import recovery
from nova.model import vm_states
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.fixtures import compute as fixtures
from nova.virt import fake
from nova.virt import journal


class TestRecovery(fixtures.ComputeTestCase):

    def spawn_and_die(self, instance, attempt):
        """Spawn as ``attempt`` and never complete it: the process dies
        right after."""
        self.driver.spawn(self.context, instance, {}, [], None,
                          network_info=instance.network_info,
                          attempt=attempt)

    def restart(self):
        """A new process: a new driver on the same instances_path."""
        self.driver = fake.FakeDriver(self.virtapi, self.settings)
        self.driver.init_host(fixtures.HOST)
        self.compute = operation.ComputeHost(
            host=fixtures.HOST, settings=self.settings, driver=self.driver,
            virtapi=self.virtapi)
        return recovery.recover_interrupted_attempts(self.compute,
                                                     self.context)

    def idir(self, instance):
        return os.path.join(self.settings.instances_path, instance.uuid)

    def test_a_build_cut_short_is_undone(self):
        instance = self.new_instance()
        self.spawn_and_die(instance, journal.Attempt.new(journal.BUILD))
        self.assertTrue(os.path.isdir(self.idir(instance)))
        report = self.restart()
        self.assertEqual([instance.uuid], report.undone)
        self.assertFalse(os.path.exists(self.idir(instance)))
        self.assertEqual(([], []), self.driver.interrupted_attempts())

    def test_a_build_whose_result_was_recorded_is_kept(self):
        instance = self.new_instance()
        self.spawn_and_die(instance, journal.Attempt.new(journal.BUILD))
        instance.vm_state = vm_states.ACTIVE
        instance.save()
        before = sha256_tree(self.idir(instance))
        report = self.restart()
        self.assertEqual([instance.uuid], report.completed)
        self.assertEqual(before, sha256_tree(self.idir(instance)))
        self.assertEqual(([], []), self.driver.interrupted_attempts())

    def test_an_evacuation_cut_short_on_shared_storage_keeps_the_disks(self):
        # The instance's disks were there (written by its source on the
        # shared storage); the dead attempt adopted the directory.
        instance = self.new_instance(host='source')
        idir = self.idir(instance)
        os.makedirs(idir)
        with open(os.path.join(idir, fake.DISK), 'wb') as f:
            f.write(b'the user\'s data')
        with open(os.path.join(idir, fake.DISK_INFO), 'w') as f:
            f.write('{"disk": "raw"}')
        before = sha256_tree(idir)
        migration = objects.Migration(
            self.context, instance_uuid=instance.uuid,
            source_compute='source', dest_compute=fixtures.HOST,
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.PRE_MIGRATING).create()
        self.spawn_and_die(instance, journal.Attempt.new(
            journal.EVACUATION, migration.uuid))
        self.assertIn('.nova-owner', sha256_tree(idir))
        report = self.restart()
        self.assertEqual([instance.uuid], report.undone)
        self.assertEqual(before, sha256_tree(idir))

    def test_an_evacuation_whose_row_moved_here_landed(self):
        instance = self.new_instance(host='source')
        migration = objects.Migration(
            self.context, instance_uuid=instance.uuid,
            source_compute='source', dest_compute=fixtures.HOST,
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.PRE_MIGRATING).create()
        self.spawn_and_die(instance, journal.Attempt.new(
            journal.EVACUATION, migration.uuid))
        instance.host = fixtures.HOST
        instance.save()
        before = sha256_tree(self.idir(instance))
        report = self.restart()
        self.assertEqual([instance.uuid], report.completed)
        self.assertEqual(before, sha256_tree(self.idir(instance)))

    def test_a_deleted_instance_is_undone(self):
        instance = self.new_instance()
        self.spawn_and_die(instance, journal.Attempt.new(journal.BUILD))
        instance.destroy()
        report = self.restart()
        self.assertEqual([instance.uuid], report.undone)
        self.assertFalse(os.path.exists(self.idir(instance)))

    def test_an_unreadable_journal_is_kept_and_nothing_undone(self):
        instance = self.new_instance()
        self.spawn_and_die(instance, journal.Attempt.new(journal.BUILD))
        [spawn_journal], _ = journal.find(self.settings.instances_path,
                                          fixtures.HOST)
        with open(spawn_journal.path, 'r+') as f:
            content = f.read()
            f.seek(0)
            f.truncate()
            f.write(content[:len(content) // 2])
        before = sha256_tree(self.idir(instance))
        report = self.restart()
        self.assertEqual([spawn_journal.path], report.unreadable)
        self.assertEqual([], report.undone)
        self.assertTrue(os.path.exists(spawn_journal.path))
        self.assertEqual(before, sha256_tree(self.idir(instance)))
