"""What a restart does with the spawn attempts a dead process left open:
on the fake driver's real files and a real SQLite database."""

import os

import sqlalchemy as sa

from nova.compute import attempts
from nova.compute import operation
from nova.compute import recovery
from nova.db import api as db_api
from nova.db import models
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.objects import attempt as attempt_obj
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.fixtures import compute as fixtures
from nova.virt import fake
from nova.virt import journal


class TestRecovery(fixtures.ComputeTestCase):

    def spawn_and_die(self, instance, attempt):
        """Spawn as ``attempt`` and never complete it: the process dies
        right after."""
        self.driver.spawn(self.context, instance, {},
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


class TestRecoveryAsksTheToken(TestRecovery):
    """Attempts recorded in the database: whether one landed is read
    there, never from the instance's states (which a stop queued while
    the host was down, a reset-state or a failed evacuation change)."""

    def claimed(self, instance, operation=journal.BUILD, host=None):
        token = attempts.Claim.new(self.context, instance,
                                   host or fixtures.HOST, operation)
        instance.task_state = task_states.SPAWNING
        instance.save(**token.take(instance))
        return token

    def landed_then_died(self):
        """A build whose ACTIVE save landed; the process died before its
        journal was completed (or the journal's removal never reached
        the disk)."""
        instance = self.new_instance()
        token = self.claimed(instance)
        self.spawn_and_die(instance, token.attempt)
        instance.vm_state = vm_states.ACTIVE
        instance.task_state = None
        instance.save(**token.landing(instance))
        return instance, token

    def test_a_landed_build_is_kept_whatever_its_states_are_now(self):
        for change in (
                # A stop queued while the host was down.
                dict(task_state=task_states.POWERING_OFF),
                # An operator's reset-state to error.
                dict(vm_state=vm_states.ERROR),
                # An evacuation that failed and left it in ERROR.
                dict(vm_state=vm_states.ERROR, task_state=None)):
            with self.subTest(change=change):
                instance, token = self.landed_then_died()
                for name, value in change.items():
                    setattr(instance, name, value)
                instance.save()
                before = sha256_tree(self.idir(instance))
                report = self.restart()
                self.assertIn(instance.uuid, report.completed)
                self.assertEqual(before, sha256_tree(self.idir(instance)))
                self.assertEqual(([], []),
                                 self.driver.interrupted_attempts())

    def test_a_build_that_never_landed_is_undone_whatever_its_states(self):
        # An operator reset it to active while the host was down: that
        # says nothing about the build, which never recorded its result.
        instance = self.new_instance()
        token = self.claimed(instance)
        self.spawn_and_die(instance, token.attempt)
        instance.vm_state = vm_states.ACTIVE
        instance.task_state = None
        instance.attempt_id = None
        instance.save()
        report = self.restart()
        self.assertEqual([instance.uuid], report.undone)
        self.assertFalse(os.path.exists(self.idir(instance)))
        self.assertEqual(attempt_obj.FAILED, objects.InstanceAttempt
                         .get_by_uuid(self.context, token.id).status)

    def test_a_dead_attempt_gives_up_its_token(self):
        # With a journal or without one (it died before its spawn
        # began): no token stays with an attempt no process runs.
        with_journal, without = self.new_instance(), self.new_instance()
        first = self.claimed(with_journal)
        self.spawn_and_die(with_journal, first.attempt)
        second = self.claimed(without)
        self.restart()
        for instance, token in ((with_journal, first), (without, second)):
            self.assertIsNone(self.reload(instance).attempt_id)
            self.assertEqual(attempt_obj.FAILED, objects.InstanceAttempt
                             .get_by_uuid(self.context, token.id).status)

    def test_files_a_later_attempt_may_use_are_left_to_it(self):
        # Shared storage: this host's evacuation attempt died; c claimed
        # the instance since, on the same storage, and adopts the
        # directory. The restart takes back this attempt's guest and
        # .part- files only.
        objects.Service(self.context, host='c', binary='nova-compute',
                        topic='compute',
                        storage_identity=self.driver.get_storage_identity()
                        ).create()
        instance = self.new_instance(host='source')
        token = self.claimed(instance, journal.EVACUATION)
        self.spawn_and_die(instance, token.attempt)
        # It had begun one more file when it died.
        [dead], _ = journal.find(self.settings.instances_path,
                                 fixtures.HOST)
        partial = dead.creating('disk.eph0')
        with open(partial, 'wb') as f:
            f.write(b'half')
        self.claimed(instance, journal.EVACUATION, host='c')
        before = sha256_tree(self.idir(instance))
        self.restart()
        del before[os.path.basename(partial)]
        self.assertEqual(before, sha256_tree(self.idir(instance)))
        self.assertEqual(([], []), self.driver.interrupted_attempts())

    def test_taps_go_when_the_instance_row_is_gone(self):
        # An attempt journaled before tokens (no row), whose instance was
        # then removed from the database: its VIFs, recorded in its
        # journal, are unplugged all the same.
        instance = self.new_instance()
        self.spawn_and_die(instance, journal.Attempt.new(journal.BUILD))
        self.assertEqual({fixtures.PORT},
                         set(self.driver.plugged_vifs(instance.uuid)))
        with db_api.session() as session:
            session.execute(sa.delete(models.InstanceActionEvent))
            session.execute(sa.delete(models.InstanceAction))
            session.execute(sa.delete(models.Instance).where(
                models.Instance.uuid == instance.uuid))
        # The hypervisor (and its taps) outlives the process.
        self.driver._live_attempts.clear()
        report = recovery.recover_interrupted_attempts(self.compute,
                                                       self.context)
        self.assertEqual([instance.uuid], report.undone)
        self.assertEqual(frozenset(), self.driver.plugged_vifs(instance.uuid))
        self.assertIsNone(self.driver.domain(instance.uuid))
        self.assertFalse(os.path.exists(self.idir(instance)))


class _StopRecordingDriver(fake.FakeDriver):
    """The fake driver, noting how each guest was stopped."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stops = []

    def power_off(self, instance, timeout=0, retry_interval=0):
        self.stops.append(('power_off', timeout))
        super().power_off(instance, timeout, retry_interval)

    def destroy(self, context, instance, network_info, destroy_disks=True):
        running = self.domain(instance.uuid)
        self.stops.append(('destroy', running.state if running else None))
        super().destroy(context, instance, network_info, destroy_disks)


class TestADeadAttemptsGuestIsPoweredOffAtOnce(TestRecovery):
    """No clean shutdown for the guest of an attempt that never landed:
    it must not write another byte."""

    def test_powered_off_before_it_is_destroyed(self):
        instance = self.new_instance()
        self.spawn_and_die(instance, journal.Attempt.new(journal.BUILD))
        self.assertEqual(power_state.RUNNING,
                         self.driver.domain(instance.uuid).state)
        # The process dies; the hypervisor (and the guest) runs on.
        recording = _StopRecordingDriver(self.virtapi, self.settings)
        recording._domains = self.driver._domains
        recording._vifs = self.driver._vifs
        self.driver = recording
        self.compute = operation.ComputeHost(
            host=fixtures.HOST, settings=self.settings, driver=recording,
            virtapi=self.virtapi)
        recovery.recover_interrupted_attempts(self.compute, self.context)
        self.assertEqual([('power_off', 0), ('destroy', power_state.SHUTDOWN)],
                         recording.stops[:2])
        self.assertIsNone(recording.domain(instance.uuid))
