"""Part c of the orphan reaper: orphan domains
(``nova/compute/reap_domains.py``), against real test-driver domains, real
files and a real SQLite database.
"""

from unittest import mock

from nova.compute import reap_report

from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.fixtures.reaper import HOST
from nova.tests.fixtures.reaper import ReaperTestCase
from nova.virt.libvirt import guest as libvirt_guest


class TestOrphanDomains(ReaperTestCase):
    """c. Domains of deleted instances and of failed evacuations to this
    host are stopped, never their disks; everything else is kept."""

    def failed_evacuation_to_here(self, **fields):
        instance = self.guest('compute2', **fields)
        self.migration(instance, 'compute2', HOST, migration_obj.FAILED)
        return instance

    def test_stops_a_failed_evacuations_guest_and_keeps_its_disks(self):
        instance = self.failed_evacuation_to_here()
        before = sha256_tree(self.idir(instance))
        self.assertTrue(self.host.is_running(instance.uuid))
        report = self.reap()
        finding = self.finding(report, reap_report.DOMAIN, instance.uuid)
        self.assertEqual(reap_report.STOP, finding.action)
        self.assertIn('evacuation', finding.reason)
        self.assertEqual(set(), self.host.domain_uuids())
        self.assertEqual(frozenset(), self.host.plugged_vifs())
        self.assertEqual(before, sha256_tree(self.idir(instance)))
        # The database is not the reaper's to change.
        row = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        self.assertEqual(('compute2', vm_states.ACTIVE),
                         (row.host, row.vm_state))

    def test_an_orphan_is_powered_off_never_shut_down_cleanly(self):
        instance = self.failed_evacuation_to_here()
        with mock.patch.object(libvirt_guest.Guest, 'shutdown',
                               side_effect=AssertionError('ACPI shutdown')):
            report = self.reap()
        self.assertEqual(reap_report.STOP, self.finding(
            report, reap_report.DOMAIN, instance.uuid).action)
        self.assertEqual(set(), self.host.domain_uuids())

    def test_stops_a_deleted_instances_guest_and_keeps_its_disks(self):
        # Deleted on compute2 (where the database had it last): its guest
        # here is an orphan, its disks not this host's to judge.
        instance = self.guest('compute2')
        instance.destroy()
        before = sha256_tree(self.idir(instance))
        report = self.reap()
        self.assertEqual(reap_report.STOP, self.finding(
            report, reap_report.DOMAIN, instance.uuid).action)
        self.assertEqual(set(), self.host.domain_uuids())
        self.assertEqual(before, sha256_tree(self.idir(instance)))

    def test_keeps_a_domain_the_database_never_heard_of(self):
        unknown = self.guest(in_database=False)
        report = self.reap()
        self.assertKept(report, reap_report.DOMAIN, unknown.uuid,
                        'not in the database')
        self.assertTrue(self.host.is_running(unknown.uuid))

    def test_keeps_a_domain_whose_instance_has_a_task_in_progress(self):
        busy = self.failed_evacuation_to_here(
            task_state=task_states.REBUILDING)
        report = self.reap()
        self.assertKept(report, reap_report.DOMAIN, busy.uuid,
                        'task rebuilding in progress')
        self.assertTrue(self.host.is_running(busy.uuid))

    def test_keeps_a_domain_whose_instance_is_migrating(self):
        instance = self.failed_evacuation_to_here()
        self.migration(instance, 'compute2', HOST, migration_obj.ACCEPTED)
        deleted = self.guest()
        deleted.destroy()
        self.migration(deleted, HOST, 'compute2',
                       migration_obj.PRE_MIGRATING)
        report = self.reap()
        self.assertKept(report, reap_report.DOMAIN, instance.uuid, 'accepted')
        self.assertKept(report, reap_report.DOMAIN, deleted.uuid,
                        'pre-migrating')
        self.assertEqual({instance.uuid, deleted.uuid},
                         self.host.domain_uuids())

    def test_keeps_a_domain_whose_instance_lock_is_held(self):
        instance = self.failed_evacuation_to_here()
        with self.locks.lock(instance.uuid):
            report = self.reap()
        self.assertKept(report, reap_report.DOMAIN, instance.uuid,
                        'holds its lock')
        self.assertTrue(self.host.is_running(instance.uuid))

    def test_keeps_other_orphans_for_the_audit(self):
        elsewhere = self.guest('compute2')
        unplaced = self.guest(None)
        back = self.guest('compute2')
        self.migration(back, HOST, 'compute2', migration_obj.FAILED)
        report = self.reap()
        self.assertKept(report, reap_report.DOMAIN, elsewhere.uuid,
                        'no migration explains it')
        self.assertKept(report, reap_report.DOMAIN, unplaced.uuid, 'no host')
        self.assertKept(report, reap_report.DOMAIN, back.uuid,
                        'compute1 -> compute2, failed')
        self.assertEqual({elsewhere.uuid, unplaced.uuid, back.uuid},
                         self.host.domain_uuids())

    def test_own_instances_are_not_even_reported(self):
        own = self.guest()
        report = self.reap()
        self.assertEqual([], [f for f in report.findings
                              if f.instance_uuid == own.uuid])
        self.assertTrue(self.host.is_running(own.uuid))

    def test_dry_run_stops_nothing(self):
        instance = self.failed_evacuation_to_here()
        report = self.reap(dry_run=True)
        self.assertEqual(reap_report.STOP, self.finding(
            report, reap_report.DOMAIN, instance.uuid).action)
        self.assertTrue(report.dry_run)
        self.assertTrue(self.host.is_running(instance.uuid))
