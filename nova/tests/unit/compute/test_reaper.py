"""The orphan reaper as a whole (``nova/compute/reaper.py``): its pending
deletes (part b), what it asks the driver to remove (parts d and e) and
its runs through the compute manager, against real test-driver domains,
real files under instances_path (qcow2 overlays on real base images) and
a real SQLite database. Parts a and c have tests of their own
(``test_reap_evacuated.py``, ``test_reap_domains.py``).
"""

import os
import subprocess
import sys

from oslo_concurrency import lockutils
from oslo_utils import uuidutils

from nova.compute import manager as compute_manager
from nova.compute import reap_report
from nova.compute import reaper
from nova import context as nova_context
from nova import objects
from nova.objects import migration as migration_obj
from nova import periodic
from nova.tests.files import age
from nova.tests.files import sha256_tree
from nova.tests.files import write
from nova.tests.fixtures import compute as compute_fixtures
from nova.tests.fixtures import database as dbf
from nova.tests.fixtures import libvirt_host as fixtures
from nova.tests.fixtures.reaper import HOST
from nova.tests.fixtures.reaper import ReaperTestCase
from nova.virt import instancedir
from nova.virt import journal
from nova.virt.libvirt import imagecache
from nova.virt import storage_identity


class StaleFilesTestCase(ReaperTestCase):

    def part(self, instance, name='disk', attempt=None, old=True):
        """A .part- file of ``attempt`` (a new id by default) in the
        instance's directory."""
        attempt = attempt or uuidutils.generate_uuid()
        path = write(os.path.join(self.idir(instance),
                                  journal.part_name(name, attempt)),
                     'half written')
        if old:
            age(path)
        return path


class TestStaleParts(StaleFilesTestCase):
    """d. Temporary files that no running attempt or fetch owns."""

    def test_removes_the_part_of_a_dead_attempt_and_nothing_else(self):
        instance = self.guest()
        before = sha256_tree(self.idir(instance))
        part = self.part(instance)
        report = self.reap()
        self.assertEqual(reap_report.REMOVE,
                         self.finding(report, reap_report.PART, part).action)
        self.assertFalse(os.path.exists(part))
        self.assertEqual(before, sha256_tree(self.idir(instance)))
        self.assertTrue(self.host.is_running(instance.uuid))

    def test_keeps_the_part_of_an_attempt_this_driver_runs(self):
        # A spawn whose result its operation has not recorded yet: the
        # attempt runs in this driver until it is completed.
        attempt = journal.Attempt.new(journal.BUILD)
        instance = self.guest(attempt=attempt)
        self.assertIn(attempt.id, self.driver.live_attempts())
        part = self.part(instance, attempt=attempt.id)
        report = self.reap()
        self.assertKept(report, reap_report.PART, part, 'runs in this process')
        self.assertTrue(os.path.exists(part))
        # Completed, it has neither a journal nor a process: its file is
        # a dead process's leftover.
        self.driver.complete_attempt(instance, attempt)
        self.assertEqual(reap_report.REMOVE, self.finding(
            self.reap(), reap_report.PART, part).action)
        self.assertFalse(os.path.exists(part))

    def test_keeps_the_part_of_another_hosts_open_journal(self):
        # compute2 shares this storage and runs an attempt on it.
        instance = self.guest()
        spawn_journal = journal.SpawnJournal.begin(
            instancedir.InstanceDir(self.path, instance.uuid), 'compute2',
            journal.Attempt.new(journal.EVACUATION))
        part = spawn_journal.creating('disk.eph0')
        write(part)
        age(part)
        report = self.reap()
        self.assertKept(report, reap_report.PART, part, 'has a journal')
        self.assertTrue(os.path.exists(part))

    def test_keeps_a_young_part(self):
        instance = self.guest()
        part = self.part(instance, old=False)
        report = self.reap()
        self.assertKept(report, reap_report.PART, part, 'too recently')
        self.assertTrue(os.path.exists(part))

    def test_a_journal_with_a_foreign_name_keeps_every_part(self):
        instance = self.guest()
        part = self.part(instance)
        os.makedirs(journal.journal_dir(self.path), exist_ok=True)
        write(os.path.join(journal.journal_dir(self.path), 'copy.json'))
        report = self.reap()
        self.assertKept(report, reap_report.PART, part,
                        'not named as journals')
        self.assertTrue(os.path.exists(part))

    def test_never_removes_a_directory_or_symlink_named_like_a_part(self):
        instance = self.guest()
        outside = write(os.path.join(self.tmp, 'precious'))
        age(outside)
        link = os.path.join(self.idir(instance), journal.part_name(
            'disk', uuidutils.generate_uuid()))
        os.symlink(outside, link)
        age(link)
        folder = os.path.join(self.idir(instance), journal.part_name(
            'x', uuidutils.generate_uuid()))
        os.mkdir(folder)
        age(folder)
        report = self.reap()
        self.assertKept(report, reap_report.PART, link, 'not a regular file')
        self.assertKept(report, reap_report.PART, folder, 'not a regular file')
        self.assertTrue(os.path.islink(link))
        self.assertTrue(os.path.isdir(folder))
        self.assertTrue(os.path.exists(outside))

    def test_removes_old_journal_temporaries_only(self):
        jdir = journal.journal_dir(self.path)
        os.makedirs(jdir, exist_ok=True)
        name = '%s.%s.json' % (uuidutils.generate_uuid(),
                               uuidutils.generate_uuid())
        old = write(os.path.join(jdir, '%s.journal-%s' % (
            name, uuidutils.generate_uuid())))
        age(old)
        young = write(os.path.join(jdir, '%s.journal-%s' % (
            name, uuidutils.generate_uuid())))
        report = self.reap()
        self.assertEqual(reap_report.REMOVE, self.finding(
            report, reap_report.JOURNAL_TEMP, old).action)
        self.assertKept(report, reap_report.JOURNAL_TEMP, young)
        self.assertEqual([os.path.basename(young)], os.listdir(jdir))

    def test_dry_run_removes_nothing(self):
        instance = self.guest()
        part = self.part(instance)
        report = self.reap(dry_run=True)
        self.assertEqual(reap_report.REMOVE,
                         self.finding(report, reap_report.PART, part).action)
        self.assertTrue(os.path.exists(part))

    def test_nothing_is_removed_from_storage_that_is_not_there(self):
        instance = self.guest()
        part = self.part(instance)
        host = fixtures.make_host(self.tmp, 'compute9',
                                  instances_path=self.path,
                                  image_store_path=self.images.path,
                                  instances_path_must_be_mounted=True)
        self.addCleanup(host.close)
        report = reaper.reap(self.ctx, host.settings, host.driver)
        self.assertKept(report, reap_report.STORAGE, self.path,
                        'not a mount point')
        self.assertTrue(os.path.exists(part))

    def test_nothing_is_removed_when_the_recorded_mount_is_missing(self):
        # The host recorded its storage as a mount point (init-storage
        # --mount-point); instances_path is not one now: what it shows is
        # the directory underneath, never this host's to clean.
        instance = self.guest()
        part = self.part(instance)
        row = objects.Service.get_by_host_and_binary(self.ctx, HOST,
                                                     'nova-compute')
        row.storage_must_be_mounted = True
        row.save()
        report = self.reap()
        self.assertKept(report, reap_report.STORAGE, self.path,
                        'instance storage not mounted')
        self.assertTrue(os.path.exists(part))


class TestFetchLeftovers(StaleFilesTestCase):
    """d. ``_base/<hash>.part-<uuid>`` of a fetch that died."""

    def leftover(self, old=True):
        base = self.base_of(self.image)
        os.makedirs(os.path.dirname(base), exist_ok=True)
        path = write('%s.part-%s' % (base, uuidutils.generate_uuid()))
        if old:
            age(path)
        return path

    def hold_lock_elsewhere(self):
        """Another host's fetch of the image: a process holding its
        external lock until the test ends."""
        child = subprocess.Popen(
            [sys.executable, '-c',
             'import sys\n'
             'from oslo_concurrency import lockutils\n'
             'with lockutils.lock(sys.argv[1], external=True, '
             'lock_path=sys.argv[2]):\n'
             '    print("held", flush=True)\n'
             '    sys.stdin.read()\n',
             imagecache.lock_name(imagecache.image_hash(self.image.id)),
             os.path.join(self.path, instancedir.LOCKS_DIR)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.addCleanup(child.wait, 30)
        self.addCleanup(child.stdin.close)
        self.assertEqual('held\n', child.stdout.readline())

    def test_removes_an_old_leftover_whose_lock_is_free(self):
        leftover = self.leftover()
        report = self.reap()
        self.assertEqual(reap_report.REMOVE, self.finding(
            report, reap_report.BASE_PART, leftover).action)
        self.assertFalse(os.path.exists(leftover))

    def test_keeps_a_leftover_while_another_process_fetches(self):
        leftover = self.leftover()
        self.hold_lock_elsewhere()
        report = self.reap()
        self.assertKept(report, reap_report.BASE_PART, leftover,
                        'holds its lock')
        self.assertTrue(os.path.exists(leftover))

    def test_keeps_a_leftover_while_a_fetch_here_holds_the_lock(self):
        leftover = self.leftover()
        with lockutils.lock(
                imagecache.lock_name(imagecache.image_hash(self.image.id)),
                external=True, lock_path=os.path.join(
                    self.path, instancedir.LOCKS_DIR)):
            report = self.reap()
        self.assertKept(report, reap_report.BASE_PART, leftover,
                        'holds its lock')
        self.assertTrue(os.path.exists(leftover))

    def test_keeps_a_young_leftover(self):
        leftover = self.leftover(old=False)
        self.assertKept(self.reap(), reap_report.BASE_PART, leftover)
        self.assertTrue(os.path.exists(leftover))

    def test_dry_run_creates_no_lock_file(self):
        leftover = self.leftover()
        lock_file = os.path.join(self.path, instancedir.LOCKS_DIR,
                                 imagecache.lock_name(
                                     imagecache.image_hash('nothing')))
        other = os.path.join(os.path.dirname(leftover), '%s.part-%s' % (
            imagecache.image_hash('nothing'), uuidutils.generate_uuid()))
        age(write(other))
        report = self.reap(dry_run=True)
        self.assertEqual(reap_report.REMOVE, self.finding(
            report, reap_report.BASE_PART, other).action)
        self.assertTrue(os.path.exists(leftover))
        self.assertTrue(os.path.exists(other))
        self.assertFalse(os.path.exists(lock_file))


class TestPendingDeletes(ReaperTestCase):
    """b. What a delete made while this host was down left here goes as
    the delete would have removed it."""

    def deleted_while_down(self, **fields):
        """A guest of compute1 whose row was deleted in the database only
        (the API's local delete: compute1's service was down)."""
        instance = self.guest(**fields)
        instance.destroy()
        return instance

    def assertGone(self, instance):
        self.assertNotIn(instance.uuid, self.host.domain_uuids())
        self.assertFalse(os.path.exists(self.idir(instance)))
        self.assertEqual(frozenset(), self.host.plugged_vifs() & {
            vif.id for vif in instance.network_info})

    def test_the_guest_vifs_and_directory_go(self):
        own = self.guest()
        instance = self.deleted_while_down()
        own_files = sha256_tree(self.idir(own))
        report = self.reap()
        finding = self.finding(report, reap_report.PENDING_DELETE,
                               instance.uuid)
        self.assertEqual(reap_report.DELETE, finding.action)
        self.assertIn('deleted while compute1 was down', finding.reason)
        self.assertGone(instance)
        # Not reported again as an orphan domain; the host's own instance
        # untouched, byte for byte.
        self.assertEqual([], [f for f in report.findings
                              if f.kind == reap_report.DOMAIN])
        self.assertTrue(self.host.is_running(own.uuid))
        self.assertEqual(own_files, sha256_tree(self.idir(own)))

    def test_a_directory_without_a_domain_goes(self):
        instance = self.deleted_while_down()
        self.driver.destroy(self.ctx, instance, instance.network_info,
                            destroy_disks=False)
        self.assertTrue(os.path.isdir(self.idir(instance)))
        self.assertEqual(reap_report.DELETE, self.finding(
            self.reap(), reap_report.PENDING_DELETE, instance.uuid).action)
        self.assertGone(instance)

    def test_a_directory_another_host_stamped_goes_to_quarantine(self):
        instance = self.deleted_while_down()
        with open(os.path.join(self.idir(instance),
                               '.nova-owner')) as f:
            stamp = f.read()
        with open(os.path.join(self.idir(instance), '.nova-owner'),
                  'w') as f:
            f.write(stamp.replace('"compute1"', '"compute2"'))
        before = sha256_tree(self.idir(instance))
        self.reap()
        self.assertFalse(os.path.exists(self.idir(instance)))
        (moved,), _other = instancedir.list_quarantine(self.path)
        self.assertEqual(instance.uuid, moved.instance_uuid)
        after = sha256_tree(moved.path)
        del after[instancedir.QUARANTINE_REASON]   # why it was moved
        self.assertEqual(before, after)

    def test_dry_run_removes_nothing(self):
        instance = self.deleted_while_down()
        before = sha256_tree(self.path)
        report = self.reap(dry_run=True)
        self.assertEqual(reap_report.DELETE, self.finding(
            report, reap_report.PENDING_DELETE, instance.uuid).action)
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual(before, sha256_tree(self.path))

    def test_waits_while_an_evacuation_is_in_progress(self):
        instance = self.deleted_while_down()
        self.migration(instance, HOST, 'compute2',
                       migration_obj.PRE_MIGRATING)
        before = sha256_tree(self.idir(instance))
        report = self.reap()
        self.assertKept(report, reap_report.PENDING_DELETE, instance.uuid,
                        'compute1 -> compute2 is pre-migrating')
        self.assertEqual(before, sha256_tree(self.idir(instance)))

    def test_waits_while_the_instance_lock_is_held(self):
        instance = self.deleted_while_down()
        with self.locks.lock(instance.uuid):
            report = self.reap()
        self.assertKept(report, reap_report.PENDING_DELETE, instance.uuid,
                        'holds its lock')
        self.assertTrue(os.path.isdir(self.idir(instance)))
        self.reap()
        self.assertGone(instance)

    def test_another_hosts_delete_is_not_finished_here(self):
        # Deleted while on compute2: compute1 (sharing nothing with it)
        # keeps the disks; only its orphan guest is stopped (part c).
        instance = self.guest('compute2')
        instance.destroy()
        before = sha256_tree(self.idir(instance))
        report = self.reap()
        self.assertEqual([], [f for f in report.findings
                              if f.kind == reap_report.PENDING_DELETE])
        self.assertEqual(before, sha256_tree(self.idir(instance)))

    def test_nothing_goes_while_the_storage_has_a_problem(self):
        instance = self.deleted_while_down()
        before = sha256_tree(self.idir(instance))
        host = fixtures.make_host(self.tmp, 'compute9',
                                  instances_path=self.path,
                                  image_store_path=self.images.path,
                                  instances_path_must_be_mounted=True)
        self.addCleanup(host.close)
        instance.host = 'compute9'
        report = reaper.reap(self.ctx, host.settings, host.driver)
        self.assertEqual([], [f for f in report.findings
                              if f.kind == reap_report.PENDING_DELETE])
        self.assertEqual(before, sha256_tree(self.idir(instance)))


class TestWithTheManager(compute_fixtures.ComputeTestCase):
    """On the fake driver: parts b and d at init_host (after the interrupted
    attempts were recovered), the periodic task, one failure among
    others."""

    def setUp(self):
        super().setUp()
        self.manager = compute_manager.ComputeManager(self.settings,
                                                      driver=self.driver)
        dbf.make_service(self.context, compute_fixtures.HOST,
                         identity=self.driver.get_storage_identity())

    def test_init_host_removes_stale_parts_and_keeps_live_ones(self):
        instance = self.active_instance()
        idir = instancedir.InstanceDir(self.settings.instances_path,
                                       instance.uuid)
        dead = write(idir.file(journal.part_name(
            'libvirt.xml', uuidutils.generate_uuid())))
        age(dead)
        other_host = journal.SpawnJournal.begin(
            idir, 'compute2', journal.Attempt.new(journal.BUILD))
        kept = write(other_host.creating('disk.swap'))
        age(kept)
        files = set(os.listdir(idir.path))
        self.manager.init_host()
        self.assertEqual(files - {os.path.basename(dead)},
                         set(os.listdir(idir.path)))

    def test_dry_run_option_keeps_everything(self):
        self.flags(reap_orphans_dry_run=True)
        instance = self.active_instance()
        idir = instancedir.InstanceDir(self.settings.instances_path,
                                       instance.uuid)
        dead = write(idir.file(journal.part_name(
            'disk', uuidutils.generate_uuid())))
        age(dead)
        self.manager.init_host()
        self.manager._reap_orphans(nova_context.get_admin_context())
        self.assertTrue(os.path.exists(dead))
        self.flags(reap_orphans_dry_run=False)
        self.manager._reap_orphans(nova_context.get_admin_context())
        self.assertFalse(os.path.exists(dead))

    def test_one_failure_does_not_stop_the_others(self):
        first, second = self.active_instance(), self.active_instance()
        for orphan in (first, second):
            # Deleted on another host: orphan domains here (part c).
            orphan.host = 'compute2'
            orphan.save()
            orphan.destroy()
        idir = instancedir.InstanceDir(self.settings.instances_path,
                                       first.uuid)
        dead = write(idir.file(journal.part_name(
            'disk', uuidutils.generate_uuid())))
        age(dead)
        self.driver.fail_at('destroy')
        report = reaper.reap(self.context, self.settings, self.driver,
                             self.manager.instance_locks)
        [error] = report.errors
        [stopped] = [f for f in report.acted if f.kind == reap_report.DOMAIN]
        self.assertEqual({first.uuid, second.uuid},
                         {error.instance_uuid, stopped.instance_uuid})
        self.assertIsNotNone(self.driver.domain(error.instance_uuid))
        self.assertIsNone(self.driver.domain(stopped.instance_uuid))
        self.assertFalse(os.path.exists(dead))
        # The next run finishes the job.
        self.assertEqual([], reaper.reap(self.context, self.settings,
                                         self.driver).errors)
        self.assertIsNone(self.driver.domain(error.instance_uuid))

    def spacings(self):
        return {t.name: t.spacing for t in periodic.tasks_of(self.manager)}

    def test_interval_default_zero_and_negative(self):
        self.assertEqual(600.0, self.spacings()['_reap_orphans'])
        self.flags(reap_orphans_interval=0, periodic_interval=13)
        self.assertEqual(13.0, self.spacings()['_reap_orphans'])
        self.flags(reap_orphans_interval=-1)
        self.assertNotIn('_reap_orphans', self.spacings())


class TestUnusedBases(ReaperTestCase):
    """e. Base images no disk uses, once old enough."""

    def test_removes_an_old_unused_base_and_keeps_the_one_in_use(self):
        instance = self.guest()
        used = self.base_of(self.image)
        age(used)
        unused = self.unused_base()
        age(unused)
        before = sha256_tree(self.idir(instance))
        report = self.reap()
        self.assertEqual(reap_report.REMOVE,
                         self.finding(report, reap_report.BASE, unused).action)
        self.assertKept(report, reap_report.BASE, used, 'backing file of %s'
                        % os.path.join(self.idir(instance), 'disk'))
        self.assertFalse(os.path.exists(unused))
        self.assertTrue(os.path.exists(used))
        self.assertEqual(before, sha256_tree(self.idir(instance)))
        self.assertTrue(self.host.is_running(instance.uuid))

    def test_keeps_a_young_unused_base(self):
        unused = self.unused_base()
        age(unused, 3600)
        report = self.reap()
        self.assertKept(report, reap_report.BASE, unused, 'less than 86400 s')
        self.assertTrue(os.path.exists(unused))

    def test_the_minimum_age_is_an_option(self):
        self.flags(remove_unused_original_minimum_age_seconds=60,
                   group='image_cache')
        unused = self.unused_base()
        age(unused, 3600)
        self.reap()
        self.assertFalse(os.path.exists(unused))

    def test_a_fetch_makes_a_base_young_again(self):
        unused = self.unused_base()
        age(unused)
        self.driver.image_cache.fetch(self.images,
                                      self.images.find('unused'))
        self.assertKept(self.reap(), reap_report.BASE, unused, 'less than')

    def test_keeps_a_base_a_quarantined_directory_uses(self):
        instance = self.guest()
        instance.destroy()
        self.driver.destroy(self.ctx, instance, instance.network_info,
                            destroy_disks=False)
        instancedir.InstanceDir(self.path, instance.uuid).quarantine('test')
        used = self.base_of(self.image)
        age(used)
        report = self.reap()
        self.assertKept(report, reap_report.BASE, used, 'backing file')
        self.assertTrue(os.path.exists(used))

    def test_a_disk_disk_info_does_not_list_keeps_every_base(self):
        instance = self.guest()
        used = self.base_of(self.image)
        age(used)
        unused = self.unused_base()
        age(unused)
        os.unlink(os.path.join(self.idir(instance), instancedir.DISK_INFO))
        report = self.reap()
        self.assertKept(report, reap_report.BASE, unused,
                        'disk disk is not listed in disk.info')
        self.assertKept(report, reap_report.BASE, used)
        self.assertTrue(os.path.exists(unused))

    def test_a_corrupt_disk_info_keeps_every_base(self):
        instance = self.guest()
        unused = self.unused_base()
        age(unused)
        write(os.path.join(self.idir(instance), instancedir.DISK_INFO),
              '{not json')
        self.assertKept(self.reap(), reap_report.BASE, unused, 'corrupt')
        self.assertTrue(os.path.exists(unused))

    def test_a_qcow2_disk_qemu_img_cannot_read_keeps_every_base(self):
        instance = self.guest()
        unused = self.unused_base()
        age(unused)
        write(os.path.join(self.idir(instance), 'disk'), 'not a qcow2')
        self.assertKept(self.reap(), reap_report.BASE, unused, 'qemu-img')
        self.assertTrue(os.path.exists(unused))

    def test_a_stray_directory_with_disks_keeps_every_base(self):
        unused = self.unused_base()
        age(unused)
        stray = os.path.join(self.path, uuidutils.generate_uuid().upper())
        os.makedirs(stray)
        write(os.path.join(stray, 'disk'))
        self.assertKept(self.reap(), reap_report.BASE, unused, stray)
        self.assertTrue(os.path.exists(unused))

    def test_keeps_a_base_whose_lock_a_fetch_holds(self):
        unused = self.unused_base()
        age(unused)
        with lockutils.lock(
                imagecache.lock_name(os.path.basename(unused)),
                external=True, lock_path=os.path.join(
                    self.path, instancedir.LOCKS_DIR)):
            report = self.reap()
        self.assertKept(report, reap_report.BASE, unused, 'holds its lock')
        self.assertTrue(os.path.exists(unused))

    def test_names_the_cache_does_not_make_are_never_touched(self):
        base_dir = instancedir.base_dir(self.path)
        os.makedirs(base_dir, exist_ok=True)
        foreign = write(os.path.join(base_dir, 'img'))
        age(foreign)
        report = self.reap()
        self.assertEqual([], [f for f in report.findings
                              if f.name == foreign])
        self.assertTrue(os.path.exists(foreign))

    def test_can_be_switched_off(self):
        self.flags(remove_unused_base_images=False, group='image_cache')
        unused = self.unused_base()
        age(unused)
        self.reap()
        self.assertTrue(os.path.exists(unused))

    def test_dry_run_removes_nothing(self):
        unused = self.unused_base()
        age(unused)
        report = self.reap(dry_run=True)
        self.assertEqual(reap_report.REMOVE,
                         self.finding(report, reap_report.BASE, unused).action)
        self.assertTrue(os.path.exists(unused))

    def test_unknown_storage_identity_ages_nothing_out(self):
        unused = self.unused_base()
        age(unused)
        os.unlink(storage_identity.marker_path(self.path))
        row = objects.Service.get_by_host_and_binary(self.ctx, HOST,
                                                     'nova-compute')
        row.storage_identity = None
        row.save()
        report = self.reap()
        self.assertKept(report, reap_report.STORAGE, self.path,
                        'no base image aged out')
        self.assertTrue(os.path.exists(unused))

    def test_lost_storage_removes_nothing(self):
        # The host recorded an identity and its marker is gone (the
        # mount is missing): nothing is removed at all.
        unused = self.unused_base()
        age(unused)
        os.unlink(storage_identity.marker_path(self.path))
        report = self.reap()
        self.assertKept(report, reap_report.STORAGE, self.path,
                        'instance storage is missing')
        self.assertTrue(os.path.exists(unused))
