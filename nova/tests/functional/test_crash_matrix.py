"""kill -9 at every named crash point of build, evacuation and a source's
return, then a restart (``crash_harness``).

After each: no orphan domain, VIF or directory; no spawn journal left
open and no ``.part-`` file; nothing partial ever booted; every disk that
existed before byte for byte as it was; the instance in a state an
operator can act on (ACTIVE where the operation had finished, otherwise
ERROR on its host with a fault); its ports bound to its host; and the
retry works.

``spawn.writing_root_disk`` kills once the root disk is complete under
its ``.part-`` name; ``TestBuildKilledWhileQemuImgWrites`` kills a build
from outside while ``qemu-img`` is still writing it.

``build.after_active`` kills a build whose ACTIVE save landed, before it
completed its journal (``TestBuildCrashAfterActive``): whatever happened
to the instance while the host was down, the restart keeps what the
build made.

The operator's recovery of an evacuation whose target was killed or
stalled at each point is ``test_crash_recovery_matrix``.
"""

import glob
import hashlib
import os

from nova.model import power_state
from nova.model import task_states
from nova import objects
from nova.objects import attempt as attempt_obj
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.functional import crash_harness
from nova.tests.functional import evacuate_harness as harness
from nova.virt import instancedir

BUILD_POINTS = (
    'spawn.after_mkdir', 'spawn.writing_root_disk', 'spawn.after_disk_info',
    'start.after_plug_vifs', 'start.after_define',
    'start.waiting_for_vif_events', 'start.after_resume',
    'build.before_active')
EVACUATION_POINTS = (
    'evacuate.after_claim', 'evacuate.after_ports_bound',
    'rebuild.after_spawning', 'spawn.writing_root_disk',
    'start.waiting_for_vif_events', 'evacuate.before_instance_moves')
REBUILD_POINTS = ('spawn.writing_root_disk', 'start.waiting_for_vif_events')


class CrashMatrixTestCase(crash_harness.CrashTestCase):

    def rebuild_and_wait(self, instance):
        self.api.rebuild(self.ctx, self.fresh(instance))
        self.wait_for(lambda: self.fresh(instance).task_state is None,
                      'rebuild of %s' % instance.uuid)
        return self.fresh(instance)

    def assertHardRebootBootsNothing(self, host, instance):
        """The owner hard-reboots the ERROR instance a crashed spawn left:
        its disks were removed with the dead attempt, so the reboot fails
        with the disk missing and boots nothing (it must never boot a
        partial disk, nor make a blank one in its place)."""
        self.api.reboot(self.ctx, self.fresh(instance), 'HARD')
        self.wait_for(lambda: self.fresh(instance).task_state is None,
                      'hard reboot of %s' % instance.uuid)
        self.assertFalse(host.has_domain(instance))
        self.assertFalse(os.path.exists(host.instance_dir(instance)))
        self.assertEqual('error', self.fresh(instance).vm_state)
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid)
        self.assertIn('No disk at %s' % host.instance_dir(instance),
                      fault.message)


def _points(points):
    """One test method per crash point: ``test_<point with _>``."""
    return harness.one_test_per_point(points, 'crash_at', doc='kill -9 at %s')


@_points(BUILD_POINTS)
class TestBuildCrashes(CrashMatrixTestCase):
    """A build on ``a`` dies at each point; ``a`` restarts."""

    def crash_at(self, point):
        bystander = self.boot('a')
        bystander_files = sha256_tree(self.hosts['a'].instance_dir(
            bystander))
        instance, network_info = self.new_instance()
        dumped = self.crash('a', 'build', point, instance=instance,
                            network_info=network_info)
        a = self.restart_after_crash('a')

        self.assertErrorWithFault(instance, 'a', 'build')
        self.assertNoTrace(a, instance)
        self.assertNoJournalsOrParts('a')
        self.assertPortsBoundToItsHost(instance)
        self.assertNoPartialDiskBooted(dumped)
        # The other instance of the host is untouched and still runs.
        self.assertEqual(bystander_files,
                         sha256_tree(a.instance_dir(bystander)))
        self.assertTrue(a.running(bystander))
        self.assertHardRebootBootsNothing(a, instance)
        # An ERROR instance with no domain and no disks can be rebuilt.
        row = self.rebuild_and_wait(instance)
        self.assertEqual(('a', 'active', power_state.RUNNING),
                         (row.host, row.vm_state, row.power_state))
        self.assertTrue(a.running(instance))
        self.assertPortsBoundToItsHost(instance)
        self.assertNoPartialDiskBooted()


class TestBuildCrashAfterActive(CrashMatrixTestCase):
    """A build on ``a`` dies at ``build.after_active``: its ACTIVE save
    landed (the attempt recorded ``landed``), its journal is still open.
    While ``a`` is down a stop is queued, or the operator resets the
    instance to error, or nothing happens. The restart asks the database
    whether the attempt landed, not the instance's states: it keeps the
    disks byte for byte and the guest, and completes the journal, in
    every case; then the instance is reconciled as its states say."""

    def crashed_after_active(self):
        instance, network_info = self.new_instance()
        dumped = self.crash('a', 'build', 'build.after_active',
                            instance=instance, network_info=network_info)
        row = self.fresh(instance)
        self.assertEqual(('a', 'active', None, None),
                         (row.host, row.vm_state, row.task_state,
                          row.attempt_id))
        self.assertEqual(
            [attempt_obj.LANDED],
            [r.status for r in objects.InstanceAttempt.get_by_instance(
                self.ctx, instance.uuid)])
        self.assertEqual(1, len(self.open_journals('a')[0]))
        idir = self.hosts['a'].instance_dir(instance)
        files = sha256_tree(idir)
        disk = self.keep_disk(os.path.join(idir, instancedir.DISK))
        return instance, files, disk, dumped

    def restart_keeps_the_build(self, instance, files, disk, dumped):
        a = self.restart_after_crash('a')
        self.assertNoJournalsOrParts('a')
        self.assertEqual(files, sha256_tree(a.instance_dir(instance)))
        self.assertDiskKept(disk)
        self.assertTrue(a.has_domain(instance))
        self.assertEqual(
            [attempt_obj.LANDED],
            [r.status for r in objects.InstanceAttempt.get_by_instance(
                self.ctx, instance.uuid)])
        self.assertIsNone(self.fresh(instance).attempt_id)
        self.assertPortsBoundToItsHost(instance)
        self.assertNoPartialDiskBooted(dumped)
        return a

    def test_stop_queued_while_down(self):
        instance, *kept = self.crashed_after_active()
        # What the API's stop leaves when no compute service takes its
        # cast: the task, and the action.
        row = self.fresh(instance)
        row.task_state = task_states.POWERING_OFF
        row.save(expected_task_state=[None])
        objects.InstanceAction.action_start(self.ctx, instance.uuid, 'stop')
        a = self.restart_keeps_the_build(instance, *kept)
        # The restart finishes the stop: the guest is off, not removed.
        row = self.fresh(instance)
        self.assertEqual(('stopped', None, power_state.SHUTDOWN),
                         (row.vm_state, row.task_state, row.power_state))
        self.assertFalse(a.running(instance))

    def test_reset_to_error_while_down(self):
        instance, *kept = self.crashed_after_active()
        self.api.reset_state(self.ctx, self.fresh(instance), 'error')
        a = self.restart_keeps_the_build(instance, *kept)
        # An ERROR instance is not started or stopped at a restart: its
        # guest runs on as the hypervisor kept it.
        row = self.fresh(instance)
        self.assertEqual(('error', None, power_state.RUNNING),
                         (row.vm_state, row.task_state, row.power_state))
        self.assertTrue(a.running(instance))

    def test_nothing_while_down(self):
        instance, *kept = self.crashed_after_active()
        a = self.restart_keeps_the_build(instance, *kept)
        row = self.fresh(instance)
        self.assertEqual(('active', None, power_state.RUNNING),
                         (row.vm_state, row.task_state, row.power_state))
        self.assertTrue(a.running(instance))


class TestBuildKilledWhileQemuImgWrites(CrashMatrixTestCase):
    """A build on ``a`` is killed (SIGKILL, from the test) while
    ``qemu-img`` is still writing its raw root disk: the moment no crash
    point can reach, since the write happens in ``qemu-img``."""

    HOST_SETTINGS = {'a': {'images_type': 'raw'}}
    IMAGE_MB = 64           # a write of a quarter second: easy to catch
    TRIES = 3

    def big_image(self):
        """A raw image of non-zero bytes (qemu-img skips zeros, so a
        blank image would leave nothing to write); its metadata and the
        sha256 of its content."""
        block = os.urandom(1024 * 1024)
        source = os.path.join(self.tmp, 'big.raw')
        digest = hashlib.sha256()
        with open(source, 'wb') as f:
            for _ in range(self.IMAGE_MB):
                f.write(block)
                digest.update(block)
        try:
            image = self.images.add_from_file(source, name='big',
                                              disk_format='raw')
        finally:
            os.unlink(source)
        return image, digest.hexdigest()

    def _file_sha256(self, path, size):
        digest = hashlib.sha256()
        with open(path, 'rb') as f:
            digest.update(f.read(size))
        return digest.hexdigest()

    def kill_while_writing(self, instance, network_info):
        """Kill the build as soon as its root disk is growing; (what the
        child left, the file being written). The disk is looked for under
        its final name too, so that a build writing it there is caught
        (and fails the test), not missed."""
        idir = self.hosts['a'].instance_dir(instance)
        seen = {'blocks': 0, 'still': 0}

        def writing():
            paths = (glob.glob(os.path.join(idir, 'disk.part-*'))
                     + glob.glob(os.path.join(idir, 'disk')))
            if not paths:
                return False
            try:
                blocks = os.stat(paths[0]).st_blocks
            except FileNotFoundError:
                return False        # renamed meanwhile: look again
            seen['path'] = paths[0]
            # Written to already, and more since the last look.
            growing = blocks > seen['blocks'] > 0
            seen['blocks'] = blocks
            if growing:
                return True
            # Not growing for a while (qemu-img done, resizing): kill all
            # the same while the file is there; not a mid-write kill
            # then, which the caller sees from its content.
            seen['still'] += 1
            return seen['still'] > 100
        dumped = self.kill_when('a', 'build', writing, instance=instance,
                                network_info=network_info)
        return dumped, seen['path']

    def test_kill_while_qemu_img_writes_the_root_disk(self):
        image, image_sha = self.big_image()
        size = self.IMAGE_MB * 1024 * 1024
        tried = []
        for _ in range(self.TRIES):
            instance, network_info = self.new_instance(image=image)
            tried.append(instance)
            dumped, part = self.kill_while_writing(instance, network_info)
            # The kill came while the root disk had only its .part- name.
            self.assertTrue(os.path.basename(part).startswith('disk.part-'),
                            part)
            self.assertTrue(os.path.isfile(part))
            self.assertFalse(os.path.exists(os.path.join(
                os.path.dirname(part), 'disk')))
            if self._file_sha256(part, size) != image_sha:
                break           # killed in the middle of the write
            # qemu-img had finished: try again (the next child's init_host
            # recovers this attempt, as a restart does).
        a = self.restart_after_crash('a')

        for instance in tried:
            self.assertErrorWithFault(instance, 'a', 'build')
            self.assertNoTrace(a, instance)
            self.assertPortsBoundToItsHost(instance)
        self.assertNoJournalsOrParts('a')
        self.assertNoPartialDiskBooted(dumped)
        instance = tried[-1]
        self.assertHardRebootBootsNothing(a, instance)
        row = self.rebuild_and_wait(instance)
        self.assertEqual(('a', 'active', power_state.RUNNING),
                         (row.host, row.vm_state, row.power_state))
        # The rebuilt raw disk has the image's whole content.
        self.assertNoPartialDiskBooted()


@_points(REBUILD_POINTS)
class TestRebuildCrashes(CrashMatrixTestCase):
    """A same-host rebuild on ``a`` dies at each point of its spawn (the
    old disks were removed on purpose before it); ``a`` restarts."""

    def crash_at(self, point):
        instance = self.boot('a')
        dumped = self.crash('a', 'rebuild', point, instance=instance)
        a = self.restart_after_crash('a')

        # Not left rebuilding: ERROR with a fault saying so.
        self.assertErrorWithFault(instance, 'a', 'rebuild')
        self.assertNoTrace(a, instance)
        self.assertNoJournalsOrParts('a')
        self.assertPortsBoundToItsHost(instance)
        self.assertNoPartialDiskBooted(dumped)
        row = self.rebuild_and_wait(instance)
        self.assertEqual(('a', 'active', power_state.RUNNING),
                         (row.host, row.vm_state, row.power_state))
        self.assertPortsBoundToItsHost(instance)
        self.assertNoPartialDiskBooted()


class EvacuationCrashes(CrashMatrixTestCase):
    """An evacuation from a dead ``a`` to ``b`` dies on ``b`` at each
    point; ``b`` restarts; then the evacuation is tried again."""

    def crash_at(self, point):
        instance = self.boot('a')
        a = self.kill('a')
        source_files = sha256_tree(a.instance_dir(instance))
        migration = self.requested_evacuation(instance, 'b')
        dumped = self.crash('b', 'evacuate', point, instance=instance,
                            migration=migration)
        b = self.restart_after_crash('b')

        self.assertErrorWithFault(instance, 'a', 'evacuate')
        self.assertEqual(migration_obj.FAILED, self.fresh(migration).status)
        self.assertNoTrace(b, instance, disks_gone=not self.SHARED)
        self.assertNoJournalsOrParts('b')
        self.assertPortsBoundToItsHost(instance)
        self.assertNoPartialDiskBooted(dumped)
        # The instance's own disks (on a, or shared) are as they were.
        self.assertEqual(source_files, sha256_tree(a.instance_dir(instance)))
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        self.assertPortsBoundToItsHost(instance)
        self.assertNoPartialDiskBooted()
        if self.SHARED:
            self.assertEqual(source_files['disk'],
                             sha256_tree(b.instance_dir(instance))['disk'])


@_points(EVACUATION_POINTS)
class TestEvacuationCrashesPrivateStorage(EvacuationCrashes):
    pass


@_points(tuple(point for point in EVACUATION_POINTS
               if point != 'spawn.writing_root_disk'))
class TestEvacuationCrashesSharedStorage(EvacuationCrashes):
    SHARED = ('a', 'b')

    def test_spawn_writing_root_disk(self):
        # On shared storage the disks are reused, so no root disk is
        # written unless there is none: an instance whose first build
        # failed (its directory removed by that failure) is evacuated,
        # and b dies writing its root disk. That half-written disk must
        # never be booted: not by b's restart, not by the retry, which
        # reports ACTIVE only on a complete disk.
        instance = self.never_built('a')
        self.kill('a')
        migration = self.requested_evacuation(instance, 'b')
        dumped = self.crash('b', 'evacuate', 'spawn.writing_root_disk',
                            instance=instance, migration=migration)
        idir = self.hosts['b'].instance_dir(instance)
        self.assertEqual([], [n for n in os.listdir(idir)
                              if n == 'disk'])      # only disk.part-<id>
        b = self.restart_after_crash('b')
        self.assertErrorWithFault(instance, 'a', 'evacuate')
        self.assertNoTrace(b, instance)
        self.assertNoJournalsOrParts('b')
        self.assertPortsBoundToItsHost(instance)
        self.assertNoPartialDiskBooted(dumped)
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        self.assertPortsBoundToItsHost(instance)
        # A complete overlay of the cached image, not the partial file.
        self.assertNoPartialDiskBooted()


class TestEvacuationCrashAfterTheRowMoved(CrashMatrixTestCase):

    def test_evacuate_after_instance_moves(self):
        # The instance row is b's already: the evacuation landed, and the
        # restart finishes it (migration done, guest kept).
        instance = self.boot('a')
        self.kill('a')
        migration = self.requested_evacuation(instance, 'b')
        dumped = self.crash('b', 'evacuate', 'evacuate.after_instance_moves',
                            instance=instance, migration=migration)
        b = self.restart_after_crash('b')
        self.assertLandedOn('b', instance, migration)
        self.assertNoJournalsOrParts('b')
        self.assertPortsBoundToItsHost(instance)
        self.assertNoPartialDiskBooted(dumped)
        self.assertTrue(os.path.isfile(os.path.join(
            b.instance_dir(instance), 'disk')))


class TestSourceReturnCrashes(CrashMatrixTestCase):
    """``a`` returns after its instance was evacuated to ``b`` (private
    storage) and dies during its cleanup; it starts again."""

    def evacuated_away(self):
        instance = self.boot('a')
        a = self.kill('a')
        copy = sha256_tree(a.instance_dir(instance))
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        return instance, migration, copy

    def assertCleanedUp(self, instance, migration, copy):
        a = self.hosts['a']
        self.assertEqual(migration_obj.COMPLETED,
                         self.fresh(migration).status)
        self.assertNoTrace(a, instance)
        # Moved aside once, whole, never deleted.
        quarantined = instancedir.list_quarantine(
            self.instances_path('a'))[0]
        self.assertEqual([instance.uuid],
                         [q.instance_uuid for q in quarantined])
        moved = sha256_tree(quarantined[0].path)
        moved.pop(instancedir.QUARANTINE_REASON, None)
        self.assertEqual(copy, moved)
        # The new owner's guest is untouched.
        row = self.fresh(instance)
        self.assertEqual(('b', 'active'), (row.host, row.vm_state))
        self.assertTrue(self.hosts['b'].running(instance))
        self.assertPortsBoundToItsHost(instance)

    def test_source_during_cleanup(self):
        instance, migration, copy = self.evacuated_away()
        dumped = self.crash('a', 'init_host', 'source.during_cleanup')
        self.assertEqual(migration_obj.DONE, self.fresh(migration).status)
        self.restart_after_crash('a')
        self.assertCleanedUp(instance, migration, copy)
        self.assertNoPartialDiskBooted(dumped)

    def test_quarantine_after_rename(self):
        instance, migration, copy = self.evacuated_away()
        dumped = self.crash('a', 'init_host', 'quarantine.after_rename')
        self.restart_after_crash('a')
        self.assertCleanedUp(instance, migration, copy)
        self.assertNoPartialDiskBooted(dumped)


class TestPortsAfterAnInterruptedEvacuation(CrashMatrixTestCase):

    def test_ports_are_bound_back_to_the_source(self):
        instance = self.boot('a')
        self.kill('a')
        migration = self.requested_evacuation(instance, 'b')
        self.crash('b', 'evacuate', 'start.waiting_for_vif_events',
                   instance=instance, migration=migration)
        # The dead attempt had bound them to b.
        bound = {p.binding_host for p in objects.Port.get_by_instance_uuid(
            self.ctx, instance.uuid)}
        self.assertEqual({'b'}, bound)
        self.restart_after_crash('b')
        self.assertPortsBoundToItsHost(instance)
        self.assertEqual('a', self.fresh(instance).host)
        self.assertErrorWithFault(instance, 'a', 'evacuate')


class TestReaperCrash(CrashMatrixTestCase):

    def test_reaper_during_reap(self):
        # Two instances live on a; their evacuations to b failed, and b
        # kept a running guest of each (the failure's cleanup could not
        # remove them). b's reaper stops one and dies; the next run after
        # the restart stops the other. (Instances deleted while their
        # host was down are no longer the reaper's orphans: init_host
        # finishes their deletes, pending_deletes.py.) Their disks, on a,
        # stay as they were, and a's guests run on.
        a = self.hosts['a']
        instances = [self.boot('a'), self.boot('a')]
        files = {i.uuid: sha256_tree(a.instance_dir(i)) for i in instances}
        guests = []
        for instance in instances:
            objects.Migration(
                self.ctx, instance_uuid=instance.uuid, source_compute='a',
                source_node='a', dest_compute='b', dest_node='b',
                migration_type=migration_obj.EVACUATION,
                status=migration_obj.FAILED).create()
            guests.append((a.driver.host.get_guest(instance.uuid).get_xml(),
                           power_state.RUNNING))
        self.kill('b').left_behind = guests
        dumped = self.crash('b', 'reap', 'reaper.during_reap')
        self.assertEqual(1, len(self.hosts['b'].left_behind))
        b = self.restart_after_crash('b')
        b.manager._reap_orphans(self.ctx)
        for instance in instances:
            self.assertFalse(b.has_domain(instance))
            self.assertTrue(a.running(instance))
            self.assertEqual(files[instance.uuid],
                             sha256_tree(a.instance_dir(instance)))
            # The reaper stops guests, it never moves ports.
            self.assertPortsBoundToItsHost(instance)
        self.assertNoPartialDiskBooted(dumped)
