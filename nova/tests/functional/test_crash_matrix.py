"""kill -9 at every named crash point of build, evacuation and a source's
return, then a restart (``crash_harness``).

After each: no orphan domain, VIF or directory; no spawn journal left
open and no ``.part-`` file; nothing partial ever booted; every disk that
existed before byte for byte as it was; the instance in a state an
operator can act on (ACTIVE where the operation had finished, otherwise
ERROR on its host with a fault); and the retry works.
"""

import os

from nova.compute import power_state
from nova.compute import rpcapi as compute_rpcapi
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.image import qemu_img
from nova.network import api as network_api
from nova.tests.functional import crash_harness
from nova.tests.functional import evacuate_harness as harness
from nova.virt import instancedir
from nova.virt.libvirt import imagecache

BUILD_POINTS = (
    'spawn.after_mkdir', 'spawn.writing_root_disk', 'spawn.after_disk_info',
    'start.after_plug_vifs', 'start.after_define',
    'start.waiting_for_vif_events', 'start.after_resume',
    'build.before_active')
EVACUATION_POINTS = (
    'evacuate.after_claim', 'spawn.writing_root_disk',
    'start.waiting_for_vif_events', 'evacuate.before_instance_moves')


class CrashMatrixTestCase(crash_harness.CrashTestCase):

    def assertErrorWithFault(self, instance, host, operation):
        row = self.fresh(instance)
        self.assertEqual((host, 'error', None),
                         (row.host, row.vm_state, row.task_state))
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid)
        self.assertIsNotNone(fault)
        self.assertIn('interrupted by a restart', fault.message)
        self.assertIn(operation, fault.message)

    def rebuild_and_wait(self, instance):
        self.api.rebuild(self.ctx, self.fresh(instance))
        self.wait_for(lambda: self.fresh(instance).task_state is None,
                      'rebuild of %s' % instance.uuid)
        return self.fresh(instance)


def _points(points):
    """One test method per crash point: ``test_<point with _>``."""
    def decorate(cls):
        for point in points:
            def test(self, point=point):
                self.crash_at(point)
            test.__name__ = 'test_' + point.replace('.', '_')
            test.__doc__ = 'kill -9 at %s' % point
            setattr(cls, test.__name__, test)
        return cls
    return decorate


@_points(BUILD_POINTS)
class TestBuildCrashes(CrashMatrixTestCase):
    """A build on ``a`` dies at each point; ``a`` restarts."""

    def crash_at(self, point):
        bystander = self.boot('a')
        bystander_files = sha256_tree(self.hosts['a'].instance_dir(
            bystander))
        instance, network_info = self.new_instance()
        self.crash('a', 'build', point, instance=instance,
                   network_info=network_info)
        a = self.restart_after_crash('a')

        self.assertErrorWithFault(instance, 'a', 'build')
        self.assertNoTrace(a, instance)
        self.assertNoJournalsOrParts('a')
        # The other instance of the host is untouched and still runs.
        self.assertEqual(bystander_files,
                         sha256_tree(a.instance_dir(bystander)))
        self.assertTrue(a.running(bystander))
        # An ERROR instance with no domain and no disks can be rebuilt.
        row = self.rebuild_and_wait(instance)
        self.assertEqual(('a', 'active', power_state.RUNNING),
                         (row.host, row.vm_state, row.power_state))
        self.assertTrue(a.running(instance))


class EvacuationCrashes(CrashMatrixTestCase):
    """An evacuation from a dead ``a`` to ``b`` dies on ``b`` at each
    point; ``b`` restarts; then the evacuation is tried again."""

    def crash_at(self, point):
        instance = self.boot('a')
        a = self.kill('a')
        source_files = sha256_tree(a.instance_dir(instance))
        migration = self.requested_evacuation(instance, 'b')
        self.crash('b', 'evacuate', point, instance=instance,
                   migration=migration)
        b = self.restart_after_crash('b')

        self.assertErrorWithFault(instance, 'a', 'evacuate')
        self.assertEqual(migration_obj.FAILED, self.fresh(migration).status)
        self.assertNoTrace(b, instance, disks_gone=not self.SHARED)
        self.assertNoJournalsOrParts('b')
        # The instance's own disks (on a, or shared) are as they were.
        self.assertEqual(source_files, sha256_tree(a.instance_dir(instance)))
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
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
        a = self.hosts['a']
        a.sim.remove_bridge(harness.BRIDGE)
        instance, network_info = self.new_instance()
        compute_rpcapi.ComputeAPI().build_and_run_instance(
            self.ctx, instance, host='a', image_meta=self.image,
            network_info=network_info)
        self.wait_for(lambda: self.fresh(instance).vm_state == 'error',
                      'the failed build')
        self.assertFalse(os.path.exists(a.instance_dir(instance)))
        self.kill('a')
        migration = self.requested_evacuation(instance, 'b')
        self.crash('b', 'evacuate', 'spawn.writing_root_disk',
                   instance=instance, migration=migration)
        idir = self.hosts['b'].instance_dir(instance)
        self.assertEqual([], [n for n in os.listdir(idir)
                              if n == 'disk'])      # only disk.part-<id>
        b = self.restart_after_crash('b')
        self.assertErrorWithFault(instance, 'a', 'evacuate')
        self.assertNoTrace(b, instance)
        self.assertNoJournalsOrParts('b')
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        # A complete overlay of the cached image, not the partial file.
        info = qemu_img.info(os.path.join(idir, 'disk'), 'qcow2')
        self.assertEqual(imagecache.ImageCache(
            self.instances_path('b')).path_for(self.image.id),
            info.backing_file)


class TestEvacuationCrashAfterTheRowMoved(CrashMatrixTestCase):

    def test_evacuate_after_instance_moves(self):
        # The instance row is b's already: the evacuation landed, and the
        # restart finishes it (migration done, guest kept).
        instance = self.boot('a')
        self.kill('a')
        migration = self.requested_evacuation(instance, 'b')
        self.crash('b', 'evacuate', 'evacuate.after_instance_moves',
                   instance=instance, migration=migration)
        b = self.restart_after_crash('b')
        self.assertLandedOn('b', instance, migration)
        self.assertNoJournalsOrParts('b')
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

    def test_source_during_cleanup(self):
        instance, migration, copy = self.evacuated_away()
        self.crash('a', 'init_host', 'source.during_cleanup')
        self.assertEqual(migration_obj.DONE, self.fresh(migration).status)
        self.restart_after_crash('a')
        self.assertCleanedUp(instance, migration, copy)

    def test_quarantine_after_rename(self):
        instance, migration, copy = self.evacuated_away()
        self.crash('a', 'init_host', 'quarantine.after_rename')
        self.restart_after_crash('a')
        self.assertCleanedUp(instance, migration, copy)


class TestPortsAfterAnInterruptedEvacuation(CrashMatrixTestCase):

    def test_ports_are_bound_back_to_the_source(self):
        ports = network_api.API()
        ports.create_network(self.ctx, 'public', harness.BRIDGE,
                             '172.24.4.0/24')

        def allocate(ctx, instance):
            network_info = ports.allocate_for_instance(
                ctx, instance, ['public'], host='a')
            instance.network_info = network_info
            instance.save()
            return network_info

        instance = self.boot('a', network_info_for=allocate)
        self.kill('a')
        migration = self.requested_evacuation(instance, 'b')
        self.crash('b', 'evacuate', 'start.waiting_for_vif_events',
                   instance=instance, migration=migration)
        # The dead attempt had bound them to b.
        bound = {p.binding_host for p in objects.Port.get_by_instance_uuid(
            self.ctx, instance.uuid)}
        self.assertEqual({'b'}, bound)
        self.restart_after_crash('b')
        bound = {p.binding_host for p in objects.Port.get_by_instance_uuid(
            self.ctx, instance.uuid)}
        self.assertEqual({'a'}, bound)
        self.assertErrorWithFault(instance, 'a', 'evacuate')


class TestReaperCrash(CrashMatrixTestCase):

    def test_reaper_during_reap(self):
        # Two instances deleted while their host could not be told: their
        # guests still run there. The reaper stops one and dies; the next
        # run after the restart stops the other. Their disks stay (the
        # reaper never deletes one).
        instances = [self.boot('a'), self.boot('a')]
        files = {i.uuid: sha256_tree(self.hosts['a'].instance_dir(i))
                 for i in instances}
        for instance in instances:
            self.fresh(instance).destroy()
        self.crash('a', 'reap', 'reaper.during_reap')
        self.assertEqual(1, len(self.hosts['a'].left_behind))
        a = self.restart_after_crash('a')
        a.manager._reap_orphans(self.ctx)
        for instance in instances:
            self.assertFalse(a.has_domain(instance))
            self.assertEqual(files[instance.uuid],
                             sha256_tree(a.instance_dir(instance)))
        self.assertFalse(a.sim.plugged_vifs())
