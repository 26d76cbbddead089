"""The one writer of a compute host's storage identity: at start and with
every heartbeat, from the marker read live."""

import os

from oslo_utils import uuidutils

from nova.compute import instance_events
from nova.compute import storage_report
from nova.conf import host_settings
from nova import exception
from nova import objects
from nova.tests import base
from nova.tests.fixtures import database as dbf
from nova.tests.unit.virt import test_storage_identity
from nova.virt import fake
from nova.virt import storage_identity


class StorageReportTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.path = os.path.join(self.tmp, 'instances')
        self.row = dbf.make_service(self.ctx, 'b')

    def reporter(self, **settings):
        settings = host_settings.HostSettings(
            host='b', instances_path=self.path, **settings)
        driver = fake.FakeDriver(instance_events.ComputeVirtAPI(), settings)
        driver.init_host('b')
        return storage_report.StorageReporter('b', driver)

    def recorded(self):
        return objects.Service.get_by_id(self.ctx, self.row.id)

    def start(self, reporter):
        """init_host, then the service reads its row again."""
        status = reporter.record_at_start(self.ctx)
        self.row = self.recorded()
        return status

    def heartbeat(self, reporter):
        """What Service.heartbeat does with the manager's hook."""
        reporter.update(self.row)
        self.row.heartbeat()
        return self.recorded()

    def marker(self):
        return storage_identity.marker_path(self.path)


class TestFirstStart(StorageReportTestCase):

    def test_an_empty_instances_path_gets_an_identity(self):
        status = self.reporter().record_at_start(self.ctx)
        self.assertTrue(status.identity)
        self.assertEqual(status.identity,
                         self.recorded().storage_identity)

    def test_one_holding_instances_does_not(self):
        os.makedirs(os.path.join(self.path, uuidutils.generate_uuid()))
        status = self.reporter().record_at_start(self.ctx)
        self.assertIsNone(status.identity)
        self.assertIsNone(self.recorded().storage_identity)
        self.assertFalse(os.path.lexists(self.marker()))

    def test_a_host_that_recorded_one_never_gets_a_new_one(self):
        # The mount is missing at start: an empty mount point.
        self.row.storage_identity = uuidutils.generate_uuid()
        self.row.save()
        os.makedirs(self.path)
        self.reporter().record_at_start(self.ctx)
        self.assertFalse(os.path.lexists(self.marker()))
        row = self.recorded()
        self.assertEqual(self.row.storage_identity, row.storage_identity)
        self.assertTrue(row.disabled)
        self.assertTrue(row.disabled_reason.startswith('AUTO: '))
        self.assertIn('instance storage is missing', row.disabled_reason)


class TestHeartbeat(StorageReportTestCase):

    def test_a_mount_that_appears_late_is_recorded_at_the_next_heartbeat(
            self):
        reporter = self.reporter()
        local = self.start(reporter).identity
        # The NFS mount appears over instances_path: another marker.
        shared = os.path.join(self.tmp, 'nfs')
        nfs_identity = storage_identity.create(shared)
        os.rename(self.path, self.path + '.local')
        os.symlink(shared, self.path)
        self.assertEqual(local, self.recorded().storage_identity)
        row = self.heartbeat(reporter)
        self.assertEqual(nfs_identity, row.storage_identity)
        self.assertFalse(row.disabled)

    def test_storage_that_goes_disables_and_that_comes_back_enables(self):
        reporter = self.reporter()
        identity = self.start(reporter).identity
        os.rename(self.marker(), self.marker() + '.away')
        row = self.heartbeat(reporter)
        self.assertTrue(row.disabled)
        self.assertEqual(identity, row.storage_identity)
        self.assertRaises(exception.StorageUnavailable,
                          reporter.check_writable)
        os.rename(self.marker() + '.away', self.marker())
        row = self.heartbeat(reporter)
        self.assertFalse(row.disabled)
        self.assertIsNone(row.disabled_reason)
        reporter.check_writable()

    def test_an_operators_disable_is_left_alone(self):
        reporter = self.reporter()
        self.start(reporter)
        os.rename(self.marker(), self.marker() + '.away')
        self.heartbeat(reporter)
        # Meanwhile the operator disables it for a reason of their own.
        row = self.recorded()
        row.disabled_reason = 'maintenance'
        row.save()
        os.rename(self.marker() + '.away', self.marker())
        row = self.heartbeat(reporter)
        self.assertEqual((True, 'maintenance'),
                         (row.disabled, row.disabled_reason))

    def test_a_required_mount_that_is_missing(self):
        reporter = self.reporter(instances_path_must_be_mounted=True)
        status = self.start(reporter)
        self.assertIn('not a mount point', status.unavailable_reason)
        row = self.recorded()
        self.assertTrue(row.disabled)
        self.assertIn('not a mount point', row.disabled_reason)
        with self.assertRaises(exception.StorageUnavailable):
            reporter.check_writable()
        # Nothing was written into the bare mount point.
        self.assertFalse(os.path.lexists(self.marker()))


class TestRecordedMountPoint(StorageReportTestCase):
    """instances_path is an NFS mount whose marker says so (``nova-manage
    host init-storage --mount-point``); the directory under the mount
    point holds the local marker the host made before the mount was set
    up."""

    def setUp(self):
        super().setUp()
        self.mounts = test_storage_identity.MountTable(self)
        self.nfs = os.path.join(self.tmp, 'nfs')
        self.nfs_identity = storage_identity.create(self.nfs,
                                                    mount_point=True)
        # First start on local disk, before the mount was set up.
        self.local_identity = self.start(self.reporter()).identity
        self.mount()

    def mount(self):
        os.rename(self.path, self.path + '.under-the-mount')
        os.symlink(self.nfs, self.path)
        self.mounts.mount(self.nfs)

    def unmount(self):
        os.unlink(self.path)
        os.rename(self.path + '.under-the-mount', self.path)
        self.mounts.unmount(self.nfs)

    def recorded_pair(self, row):
        return row.storage_identity, row.storage_must_be_mounted

    def assertRefused(self, row, reporter):
        self.assertEqual((self.nfs_identity, True), self.recorded_pair(row))
        self.assertTrue(row.disabled)
        self.assertTrue(row.disabled_reason.startswith(
            'AUTO: instance storage not mounted'))
        for word in (self.nfs_identity, self.path, self.local_identity):
            self.assertIn(word, row.disabled_reason)
        with self.assertRaises(exception.StorageUnavailable) as cm:
            reporter.check_writable()
        self.assertIn(self.local_identity, str(cm.exception))

    def test_the_mount_and_its_flag_are_recorded(self):
        reporter = self.reporter()
        self.start(reporter)
        self.assertEqual((self.nfs_identity, True),
                         self.recorded_pair(self.recorded()))
        self.assertFalse(self.recorded().disabled)
        reporter.check_writable()

    def test_a_restart_before_the_mount_keeps_the_record_and_refuses(self):
        self.start(self.reporter())
        self.unmount()
        local = sorted(os.listdir(self.path))
        # The host reboots; nova-compute starts before the NFS mount.
        reporter = self.reporter()
        status = self.start(reporter)
        self.assertEqual(self.local_identity, status.identity)
        self.assertRefused(self.recorded(), reporter)
        # Nothing was written under instances_path.
        self.assertEqual(local, sorted(os.listdir(self.path)))
        row = self.heartbeat(reporter)
        self.assertRefused(row, reporter)
        # The mount is back: enabled again, the record unchanged.
        self.mount()
        row = self.heartbeat(reporter)
        self.assertEqual((self.nfs_identity, True), self.recorded_pair(row))
        self.assertEqual((False, None), (row.disabled, row.disabled_reason))
        reporter.check_writable()

    def test_a_mount_lost_while_running_is_refused_at_the_heartbeat(self):
        reporter = self.reporter()
        self.start(reporter)
        self.unmount()
        self.assertRefused(self.heartbeat(reporter), reporter)

    def test_an_operators_new_record_is_taken_at_the_next_heartbeat(self):
        reporter = self.reporter()
        self.start(reporter)
        self.unmount()
        self.assertRefused(self.heartbeat(reporter), reporter)
        # The NFS storage is gone for good: the operator records the local
        # directory as this host's storage (what "nova-manage host
        # init-storage --force" writes), behind the service's back.
        row = self.recorded()
        row.storage_identity = self.local_identity
        row.storage_must_be_mounted = False
        row.save()
        row = self.heartbeat(reporter)
        self.assertEqual((self.local_identity, False),
                         self.recorded_pair(row))
        self.assertEqual((False, None), (row.disabled, row.disabled_reason))
        reporter.check_writable()

    def test_a_flag_added_to_the_marker_is_recorded(self):
        os.unlink(self.path)
        os.rename(self.path + '.under-the-mount', self.path)
        reporter = self.reporter()
        self.start(reporter)
        self.mounts.mount(self.path)
        storage_identity.mark_mount_point(self.path)
        row = self.heartbeat(reporter)
        self.assertEqual((self.local_identity, True),
                         self.recorded_pair(row))
