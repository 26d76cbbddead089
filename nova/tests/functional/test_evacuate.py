"""Evacuation between hosts with private storage, end to end.

API -> conductor -> target compute over RPC (inproc://), the real manager
and libvirt driver on libvirt's test driver, a real SQLite database; see
``evacuate_harness``. Every test reads back the rows, the domains libvirt
reports on each host, the VIFs and the files.
"""

import os
import threading

from oslo_utils import uuidutils

from nova import context as nova_context
from nova import exception
from nova.model import external_event
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.functional import evacuate_harness as harness
from nova.virt import instancedir
from nova.virt import ownership


class TestEvacuateFailedSpawn(harness.EvacuateTestCase):
    """The evacuation-leftovers bug, exactly (doc/source/cleanup.rst,
    "Background")."""

    def test_failed_spawn_leaves_target_clean_and_retry_succeeds(self):
        instance = self.boot('a')
        a, b = self.kill('a'), self.hosts['b']
        source_files = sha256_tree(a.instance_dir(instance))
        # B lacks the port's bridge: plugging fails for real.
        b.sim.remove_bridge(harness.BRIDGE)

        migration = self.evacuate(instance, host='b')

        self.assertNoTrace(b, instance)
        fault = self.assertFailedOnSource(instance, migration)
        self.assertIn(harness.BRIDGE, fault.message)
        self.assertEqual(
            ('evacuate', 'compute_rebuild_instance', 'Error', 'b'),
            self.events(instance)[-1])
        # The dead source was not touched.
        self.assertEqual(source_files, sha256_tree(a.instance_dir(instance)))

        # Fixed; evacuate again, no reset-state, no manual cleanup.
        b.sim.add_bridge(harness.BRIDGE)
        migration = self.evacuate(instance, host='b')

        self.assertLandedOn('b', instance, migration)
        self.assertEqual(
            ('evacuate', 'compute_rebuild_instance', 'Success', 'b'),
            self.events(instance)[-1])
        self.assertTrue(os.path.isfile(os.path.join(
            b.instance_dir(instance), 'disk')))

    def test_vif_event_timeout_leaves_target_clean(self):
        instance = self.boot('a')
        self.kill('a')
        # B's network backend never confirms the port (1 s timeout).
        b = self.hosts['b']
        b.service.stop()
        b = self.start_compute('b', vif_plugging_timeout=1)
        b.sim.virtapi.deliver = False

        migration = self.evacuate(instance, host='b')

        self.assertNoTrace(b, instance)
        self.assertFailedOnSource(instance, migration)
        b.sim.virtapi.deliver = True
        self.assertLandedOn('b', instance, self.evacuate(instance,
                                                         host='b'))

    def leftover_on(self, host, instance, stamped_by=None,
                    names=('disk', 'console.log', 'disk.eph0')):
        """The instance's directory on ``host`` as an earlier attempt left
        it: files ``names`` and (with ``stamped_by``) the stamp that
        attempt wrote."""
        leftover = host.instance_dir(instance)
        os.makedirs(leftover)
        for name in names:
            with open(os.path.join(leftover, name), 'w') as f:
                f.write('left by an earlier attempt')
        if stamped_by is not None:
            ownership.write(
                instancedir.InstanceDir(host.sim.settings.instances_path,
                                        instance.uuid),
                ownership.OwnerStamp.new(
                    instance.uuid, stamped_by,
                    host.driver.get_storage_identity(), 'evacuation',
                    uuidutils.generate_uuid()))
        return leftover, sha256_tree(leftover)

    def test_leftover_directory_on_the_target_is_no_evidence(self):
        # An earlier attempt on b left the instance's directory there,
        # with no root disk but an ephemeral one and a kernel. Storage is
        # still not shared (the markers differ): the leftover is moved
        # aside whole, so nothing of it is reused, and new disks are
        # built.
        instance = self.boot('a')
        self.kill('a')
        b = self.hosts['b']
        leftover, before = self.leftover_on(
            b, instance, stamped_by='b',
            names=('disk.eph0', 'kernel', 'console.log'))
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        now = sha256_tree(leftover)
        self.assertNotIn('disk.eph0', now)
        self.assertNotIn('kernel', now)
        with open(os.path.join(leftover, 'console.log'), 'rb') as f:
            self.assertNotIn(b'earlier attempt', f.read())
        [moved] = instancedir.list_quarantine(
            b.sim.settings.instances_path)[0]
        kept = sha256_tree(moved.path)
        kept.pop(instancedir.QUARANTINE_REASON)
        self.assertEqual(before, kept)

    def test_a_directory_no_attempt_of_the_target_left_is_kept(self):
        # No stamp (an older release, or copied there by hand): it could
        # be the instance's own disks on storage the evidence misses.
        instance = self.boot('a')
        self.kill('a')
        b = self.hosts['b']
        leftover, before = self.leftover_on(b, instance)
        migration = self.evacuate(instance, host='b')
        # Refused, it ends as every failed evacuation: ERROR, with the
        # reason and what unblocks it in the fault.
        fault = self.assertFailedOnSource(instance, migration,
                                          vm_state='error')
        self.assertIn(leftover, fault.message)
        self.assertIn('no ownership stamp', fault.message)
        self.assertIn('Move it away to evacuate here', fault.message)
        self.assertEqual(before, sha256_tree(leftover))
        self.assertNoTrace(b, instance, disks_gone=False)
        # The operator moves it away; the retry works.
        os.rename(leftover, os.path.join(self.tmp, 'moved-by-operator'))
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)

    def test_target_chosen_by_the_conductor(self):
        instance = self.boot('a')
        self.kill('a')
        migration = self.evacuate(instance)
        self.assertIn(migration.dest_compute, ('b', 'c'))
        self.assertLandedOn(migration.dest_compute, instance, migration)
        other = ({'b', 'c'} - {migration.dest_compute}).pop()
        self.assertNoTrace(self.hosts[other], instance)


class TestEvacuateRefusals(harness.EvacuateTestCase):

    def test_refused_while_the_source_is_up(self):
        instance = self.boot('a')
        with self.assertRaises(exception.ComputeServiceStillUp):
            self.api.evacuate(self.ctx, instance, host='b')
        self.assertEqual([], objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid))
        self.assertTrue(self.hosts['a'].running(instance))

    def test_contradicting_on_shared_storage_is_refused(self):
        instance = self.boot('a')
        self.kill('a')
        with self.assertRaises(exception.InvalidSharedStorage) as cm:
            self.api.evacuate(self.ctx, instance, host='b',
                              on_shared_storage=True)
        message = str(cm.exception)
        self.assertIn('contradicts the evidence', message)
        self.assertIn('not shared', message)
        self.assertIn(self.hosts['b'].driver.get_storage_identity(), message)
        row = self.fresh(instance)
        self.assertEqual(('a', 'active', None),
                         (row.host, row.vm_state, row.task_state))
        self.assertNoTrace(self.hosts['b'], instance)

    def test_no_target_agrees_with_the_claim(self):
        # Unnamed target, on_shared_storage=True: no host shares a's
        # storage, so none is chosen and the evacuation ends at once.
        instance = self.boot('a')
        self.kill('a')
        migration = self.evacuate(instance, on_shared_storage=True)
        self.assertFailedOnSource(instance, migration, vm_state='active')
        self.assertEqual(
            ('evacuate', 'conductor_rebuild_server', 'Error', 'conductor'),
            self.events(instance)[-1])
        for name in ('b', 'c'):
            self.assertNoTrace(self.hosts[name], instance)


class TestSourceRestart(harness.EvacuateTestCase):

    def test_after_success_the_source_removes_its_copy(self):
        instance = self.boot('a')
        own = self.boot('a')
        a = self.kill('a')
        # Only the compute service died: the guest still runs on a.
        self.assertIn(instance.uuid, {
            o.split('<uuid>')[1].split('</uuid>')[0]
            for o, _ in a.left_behind})
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        own_files = sha256_tree(a.instance_dir(own))

        a = self.restart('a')

        self.assertNoTrace(a, instance, disks_gone=True)
        self.assertEqual(migration_obj.COMPLETED,
                         self.fresh(migration).status)
        self.assertTrue(self.hosts['b'].running(instance))
        self.assertEqual(('b', 'active'), (self.fresh(instance).host,
                                           self.fresh(instance).vm_state))
        # a's own instance and the image cache are untouched.
        self.assertTrue(a.running(own))
        self.assertEqual(own_files, sha256_tree(a.instance_dir(own)))
        self.assertTrue(os.listdir(os.path.join(
            a.sim.settings.instances_path, '_base')))

    def test_after_failure_the_source_removes_nothing(self):
        instance = self.boot('a')
        a = self.kill('a')
        self.hosts['b'].sim.remove_bridge(harness.BRIDGE)
        migration = self.evacuate(instance, host='b')
        self.assertFailedOnSource(instance, migration)
        files = sha256_tree(a.instance_dir(instance))

        a = self.restart('a', host_rebooted=True)

        self.assertTrue(a.has_domain(instance))
        self.assertEqual(files, sha256_tree(a.instance_dir(instance)))
        self.assertEqual(migration_obj.FAILED, self.fresh(migration).status)
        self.assertEqual('a', self.fresh(instance).host)

    def test_during_an_evacuation_the_source_starts_and_deletes_nothing(self):
        instance = self.boot('a')
        own = self.boot('a')
        a = self.kill('a')
        # B will wait for the port's network-vif-plugged event.
        b = self.hosts['b']
        b.sim.virtapi.deliver = False
        b.service.stop()
        b = self.start_compute('b', vif_plugging_timeout=60)
        b.sim.virtapi.deliver = False
        migration = self.api.evacuate(self.ctx, instance, host='b')
        self.wait_for(lambda: b.has_domain(instance), 'spawn on b')
        self.assertEqual(migration_obj.PRE_MIGRATING,
                         self.fresh(migration).status)
        files = sha256_tree(a.instance_dir(instance))

        # The whole host a rebooted and comes back, told to restart the
        # guests that ran before.
        a = self.restart('a', host_rebooted=True,
                         resume_guests_state_on_host_boot=True)

        self.assertFalse(a.running(instance))
        self.assertTrue(a.has_domain(instance))
        self.assertEqual(files, sha256_tree(a.instance_dir(instance)))
        self.assertTrue(a.running(own))      # its own guest was started

        # The network backend confirms the port on b, through the API.
        events = [{'instance_uuid': instance.uuid,
                   'name': 'network-vif-plugged', 'tag': vif.id}
                  for vif in self.fresh(instance).network_info]
        self.api.external_instance_event(self.ctx, [
            external_event.InstanceExternalEvent(**e) for e in events])
        migration = self.wait_for_evacuation(migration)
        self.assertLandedOn('b', instance, migration)
        # Still a's copy stays until a starts again.
        self.assertTrue(a.has_domain(instance))
        a.service.stop()
        a = self.start_compute('a')
        self.assertNoTrace(a, instance)
        self.assertEqual(migration_obj.COMPLETED,
                         self.fresh(migration).status)


class TestConcurrentEvacuations(harness.EvacuateTestCase):

    def test_one_wins_the_other_is_refused_and_leaves_nothing(self):
        instance = self.boot('a')
        self.kill('a')
        outcome = {}
        start = threading.Barrier(2)

        def request(target):
            copy = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
            start.wait()
            try:
                outcome[target] = self.api.evacuate(
                    nova_context.get_admin_context(), copy, host=target)
            except exception.Conflict as e:
                outcome[target] = e

        threads = [threading.Thread(target=request, args=(t,))
                   for t in ('b', 'c')]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        won = [t for t, r in outcome.items()
               if isinstance(r, objects.Migration)]
        lost = [t for t, r in outcome.items() if isinstance(r, Exception)]
        self.assertEqual((1, 1), (len(won), len(lost)))
        self.assertEqual(409, outcome[lost[0]].code)
        migration = self.wait_for_evacuation(outcome[won[0]])
        self.assertLandedOn(won[0], instance, migration)
        self.assertNoTrace(self.hosts[lost[0]], instance)
        self.assertEqual([migration.id], [m.id for m in
                                          objects.Migration.get_by_filters(
                                              self.ctx,
                                              instance_uuid=instance.uuid)])
        self.assertEqual(['create', 'evacuate'],
                         [a.action for a in reversed(
                             objects.InstanceAction.get_by_instance_uuid(
                                 self.ctx, instance.uuid))])


class TestStoppedInstanceThroughAFailedAttempt(harness.EvacuateTestCase):

    def test_a_retry_brings_it_back_stopped(self):
        instance = self.boot('a')
        self.api.stop(self.ctx, self.fresh(instance))
        self.wait_for(lambda: self.fresh(instance).vm_state == 'stopped',
                      'the stop')
        self.kill('a')
        self.hosts['b'].sim.remove_bridge(harness.BRIDGE)
        migration = self.evacuate(instance, host='b')
        self.assertFailedOnSource(instance, migration)
        self.assertEqual('stopped',
                         self.fresh(instance).system_metadata['old_vm_state'])
        migration = self.evacuate(instance, host='c')
        row = self.fresh(instance)
        self.assertEqual(('c', 'stopped', None),
                         (row.host, row.vm_state, row.task_state))
        self.assertNotIn('old_vm_state', row.system_metadata)
        self.assertEqual(migration_obj.DONE, self.fresh(migration).status)
        self.assertTrue(self.hosts['c'].has_domain(instance))
        self.assertFalse(self.hosts['c'].running(instance))
