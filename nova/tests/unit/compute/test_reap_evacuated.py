"""Part a of the orphan reaper: a host that comes back without a restart
stops what was evacuated away from it (``nova/compute/reap_evacuated.py``),
against real test-driver domains, real files and a real SQLite database.
"""

import os
from unittest import mock

from nova.compute import reap_report

from nova.model import task_states
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.fixtures.reaper import HOST
from nova.tests.fixtures.reaper import ReaperTestCase
from nova.virt import instancedir
from nova.virt.libvirt import guest as libvirt_guest


class TestEvacuatedAway(ReaperTestCase):
    """a. A host that comes back without a restart stops what was
    evacuated away from it."""

    def evacuated(self, **fields):
        instance = self.guest('compute2', **fields)
        return instance, self.migration(instance, HOST, 'compute2',
                                        migration_obj.DONE)

    def test_done_evacuation_is_cleaned_up_like_at_a_restart(self):
        own = self.guest()
        instance, migration = self.evacuated()
        own_files = sha256_tree(self.idir(own))
        before = sha256_tree(self.idir(instance))
        self.assertTrue(self.host.is_running(instance.uuid))
        report = self.reap()
        finding = self.finding(report, reap_report.EVACUATED, instance.uuid)
        self.assertEqual(reap_report.CLEAN, finding.action)
        self.assertIn('quarantine', finding.reason)
        self.assertEqual({own.uuid}, self.host.domain_uuids())
        self.assertFalse(os.path.exists(self.idir(instance)))
        [moved] = instancedir.list_quarantine(self.path)[0]
        after = sha256_tree(moved.path)
        after.pop(instancedir.QUARANTINE_REASON)
        self.assertEqual((instance.uuid, before),
                         (moved.instance_uuid, after))
        self.assertEqual(migration_obj.COMPLETED,
                         self.migration_status(migration))
        self.assertEqual(own_files, sha256_tree(self.idir(own)))
        self.assertTrue(self.host.is_running(own.uuid))
        self.assertEqual([], report.errors)

    def test_the_stale_guest_is_powered_off_never_shut_down_cleanly(self):
        # A clean shutdown would let the guest OS write to disks another
        # host may run by now (shared storage without leases).
        instance, migration = self.evacuated()
        with mock.patch.object(libvirt_guest.Guest, 'shutdown',
                               side_effect=AssertionError('ACPI shutdown')):
            report = self.reap()
        self.assertEqual([], report.errors)
        self.assertEqual(set(), self.host.domain_uuids())
        self.assertEqual(migration_obj.COMPLETED,
                         self.migration_status(migration))

    def test_dry_run_changes_nothing(self):
        instance, migration = self.evacuated()
        before = sha256_tree(self.path)
        report = self.reap(dry_run=True)
        finding = self.finding(report, reap_report.EVACUATED, instance.uuid)
        self.assertEqual(reap_report.CLEAN, finding.action)
        self.assertIn('would be powered off', finding.reason)
        self.assertIn('(to quarantine)', finding.reason)
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual(before, sha256_tree(self.path))
        self.assertEqual(migration_obj.DONE,
                         self.migration_status(migration))

    def assertCleaned(self, report, instance, migration):
        """The stale guest is gone from compute1, its directory moved to
        quarantine (compute2's storage is its own), the migration
        completed."""
        finding = self.finding(report, reap_report.EVACUATED, instance.uuid)
        self.assertEqual(reap_report.CLEAN, finding.action, finding)
        self.assertNotIn(instance.uuid, self.host.domain_uuids())
        self.assertFalse(os.path.exists(self.idir(instance)))
        self.assertIn(instance.uuid, [
            q.instance_uuid for q in instancedir.list_quarantine(
                self.path)[0]])
        self.assertEqual(migration_obj.COMPLETED,
                         self.migration_status(migration))
        return finding

    def assertHeldBack(self, report, instance, migration, why):
        self.assertKept(report, reap_report.EVACUATED, instance.uuid, why)
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertTrue(os.path.isdir(self.idir(instance)))
        self.assertEqual(migration_obj.DONE,
                         self.migration_status(migration))

    def test_a_task_on_the_new_host_holds_back_no_stale_guest(self):
        # Issue 19, case 4: a user's stop on compute2 that takes its time
        # kept every stale guest of compute1 running, both copies of
        # each instance at once. The task runs on compute2's copy, never
        # on this one: both stale guests go in one run.
        busy, busy_migration = self.evacuated(
            task_state=task_states.POWERING_OFF)
        idle, idle_migration = self.evacuated()
        before = sha256_tree(self.path)
        report = self.reap(dry_run=True)
        for instance in (busy, idle):
            finding = self.finding(report, reap_report.EVACUATED,
                                   instance.uuid)
            self.assertEqual(reap_report.CLEAN, finding.action, finding)
            self.assertIn('would be powered off', finding.reason)
        self.assertEqual(before, sha256_tree(self.path))
        self.assertEqual({busy.uuid, idle.uuid}, self.host.domain_uuids())

        report = self.reap()
        self.assertEqual([], report.errors)
        finding = self.assertCleaned(report, busy, busy_migration)
        self.assertIn('task powering-off there does not involve',
                      finding.reason)
        self.assertCleaned(report, idle, idle_migration)
        self.assertEqual(set(), self.host.domain_uuids())
        self.assertEqual(frozenset(), self.host.plugged_vifs())
        # compute2's task is compute2's: the row is as it was.
        row = objects.Instance.get_by_uuid(self.ctx, busy.uuid)
        self.assertEqual(('compute2', task_states.POWERING_OFF),
                         (row.host, row.task_state))

    def test_a_migration_between_other_hosts_holds_back_nothing(self):
        instance, migration = self.evacuated()
        objects.Migration(
            self.ctx, instance_uuid=instance.uuid,
            source_compute='compute2', dest_compute='compute3',
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.PRE_MIGRATING).create()
        report = self.reap()
        self.assertCleaned(report, instance, migration)

    def test_only_what_involves_this_hosts_copy_is_held_back(self):
        # A migration in progress from this host (of another kind), an
        # evacuation back to it, one whose target is not chosen yet (it
        # may be this host), the lock held here: each keeps its own
        # instance, and only it.
        from_here, from_here_migration = self.evacuated()
        objects.Migration(
            self.ctx, instance_uuid=from_here.uuid, source_compute=HOST,
            dest_compute='compute2', migration_type='migration',
            status=migration_obj.ACCEPTED).create()
        back, back_migration = self.evacuated()
        self.migration(back, 'compute2', HOST, migration_obj.PRE_MIGRATING)
        unchosen, unchosen_migration = self.evacuated()
        self.migration(unchosen, 'compute2', None, migration_obj.ACCEPTED)
        locked, locked_migration = self.evacuated()
        idle, idle_migration = self.evacuated()
        with self.locks.lock(locked.uuid):
            report = self.reap()
        self.assertHeldBack(report, from_here, from_here_migration,
                            'migration compute1 -> compute2 is accepted')
        self.assertHeldBack(report, back, back_migration,
                            'evacuation compute2 -> compute1 is '
                            'pre-migrating')
        self.assertHeldBack(report, unchosen, unchosen_migration,
                            'evacuation compute2 -> None is accepted')
        self.assertHeldBack(report, locked, locked_migration,
                            'holds its lock')
        self.assertCleaned(report, idle, idle_migration)
        self.assertEqual({from_here.uuid, back.uuid, unchosen.uuid,
                          locked.uuid}, self.host.domain_uuids())
        self.assertEqual([], report.errors)

    def test_a_task_while_the_instance_is_placed_here_holds_it_back(self):
        # The database says the instance is this host's (a done
        # evacuation that did not move it cannot be, by design): its task
        # is about this copy.
        instance = self.guest(task_state=task_states.REBOOTING)
        migration = self.migration(instance, HOST, 'compute2',
                                   migration_obj.DONE)
        report = self.reap()
        self.assertHeldBack(report, instance, migration,
                            'task rebooting in progress on this host')

    def test_waits_while_the_instance_lock_is_held(self):
        instance, migration = self.evacuated()
        with self.locks.lock(instance.uuid):
            report = self.reap()
        self.assertKept(report, reap_report.EVACUATED, instance.uuid,
                        'holds its lock')
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual(migration_obj.DONE,
                         self.migration_status(migration))
        # Once free, the next run does it.
        self.reap()
        self.assertEqual(set(), self.host.domain_uuids())
        self.assertEqual(migration_obj.COMPLETED,
                         self.migration_status(migration))

    def test_a_done_evacuation_that_left_the_instance_here_is_left(self):
        instance = self.guest()
        self.migration(instance, HOST, 'compute2', migration_obj.DONE)
        report = self.reap()
        self.assertKept(report, reap_report.EVACUATED, instance.uuid,
                        'still places it here')
        self.assertTrue(self.host.is_running(instance.uuid))
