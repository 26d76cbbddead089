"""Evacuation between hosts that share their instances directory.

Hosts ``a`` and ``b`` mount one directory as ``instances_path`` (the same
path here, as an NFS mount would be); ``c`` has its own. Whether storage
is shared is decided from the identity marker each host records, never
from an instance directory being there.
"""

import os

from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.functional import evacuate_harness as harness


class SharedStorageTestCase(harness.EvacuateTestCase):
    SHARED = ('a', 'b')

    def setUp(self):
        super().setUp()
        self.assertEqual(self.hosts['a'].driver.get_storage_identity(),
                         self.hosts['b'].driver.get_storage_identity())
        self.assertNotEqual(self.hosts['a'].driver.get_storage_identity(),
                            self.hosts['c'].driver.get_storage_identity())


class TestSharedStorage(SharedStorageTestCase):

    def test_failed_spawn_keeps_the_disks_and_the_retry_boots_them(self):
        instance = self.boot('a')
        a = self.kill('a')
        b = self.hosts['b']
        path = a.instance_dir(instance)
        self.assertEqual(path, b.instance_dir(instance))
        before = sha256_tree(path)
        self.assertIn('disk', before)
        b.sim.remove_bridge(harness.BRIDGE)

        migration = self.evacuate(instance, host='b')

        self.assertFailedOnSource(instance, migration)
        self.assertNoTrace(b, instance, disks_gone=False)
        self.assertEqual(before, sha256_tree(path))

        b.sim.add_bridge(harness.BRIDGE)
        migration = self.evacuate(instance, host='b')

        self.assertLandedOn('b', instance, migration)
        # Booted from the very same disk: not rebuilt from the image.
        self.assertEqual(before['disk'], sha256_tree(path)['disk'])
        guest = b.driver.host.get_guest(instance.uuid)
        self.assertIn(os.path.join(path, 'disk'), guest.get_xml())

    def test_explicit_false_is_refused(self):
        instance = self.boot('a')
        self.kill('a')
        before = sha256_tree(self.hosts['a'].instance_dir(instance))
        with self.assertRaises(exception.InvalidSharedStorage) as cm:
            self.api.evacuate(self.ctx, instance, host='b',
                              on_shared_storage=False)
        self.assertIn('storage is shared', str(cm.exception))
        self.assertEqual(before, sha256_tree(
            self.hosts['a'].instance_dir(instance)))
        self.assertIsNone(self.fresh(instance).task_state)

    def test_unverifiable_false_is_refused_by_the_target(self):
        # The source recorded no identity (an older release), so the API
        # cannot check "False" and casts; the target sees the instance's
        # directory, cannot tell it from a leftover, and refuses before
        # touching anything (trusting it would delete the only disks).
        instance = self.boot('a')
        a = self.kill('a')
        service = objects.Service.get_by_host_and_binary(
            self.ctx, 'a', 'nova-compute')
        service.storage_identity = None
        service.save()
        path = a.instance_dir(instance)
        before = sha256_tree(path)
        self.assertIn('disk', before)

        migration = self.evacuate(instance, host='b',
                                  on_shared_storage=False)

        fault = self.assertFailedOnSource(instance, migration,
                                          vm_state='error')
        self.assertIn('source host a has no storage identity',
                      fault.message)
        self.assertIn(path, fault.message)
        self.assertEqual(before, sha256_tree(path))
        self.assertNoTrace(self.hosts['b'], instance, disks_gone=False)
        self.assertIn(('evacuate', 'compute_rebuild_instance', 'Error',
                       'b'), self.events(instance))

    def test_explicit_true_to_a_private_host_is_refused(self):
        instance = self.boot('a')
        self.kill('a')
        with self.assertRaises(exception.InvalidSharedStorage):
            self.api.evacuate(self.ctx, instance, host='c',
                              on_shared_storage=True)
        self.assertNoTrace(self.hosts['c'], instance)

    def test_explicit_true_picks_the_sharing_host(self):
        instance = self.boot('a')
        self.kill('a')
        migration = self.evacuate(instance, on_shared_storage=True)
        self.assertLandedOn('b', instance, migration)
        self.assertNoTrace(self.hosts['c'], instance)

    def test_evacuation_to_a_private_host_builds_new_disks(self):
        instance = self.boot('a')
        a = self.kill('a')
        shared_files = sha256_tree(a.instance_dir(instance))
        migration = self.evacuate(instance, host='c')
        self.assertLandedOn('c', instance, migration)
        self.assertTrue(os.path.isfile(os.path.join(
            self.hosts['c'].instance_dir(instance), 'disk')))
        self.assertEqual(shared_files, sha256_tree(a.instance_dir(instance)))


class TestSharedStorageSourceRestart(SharedStorageTestCase):

    def test_source_removes_its_domain_and_keeps_the_shared_disks(self):
        instance = self.boot('a')
        self.kill('a')
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        path = self.hosts['b'].instance_dir(instance)
        before = sha256_tree(path)

        a = self.restart('a')

        self.assertFalse(a.has_domain(instance))
        self.assertEqual(before, sha256_tree(path))
        self.assertEqual(migration_obj.COMPLETED,
                         self.fresh(migration).status)
        self.assertTrue(self.hosts['b'].running(instance))

    def test_to_a_private_host_the_source_deletes_its_copy(self):
        # a shares with b but the instance went to c: a's copy is a copy.
        instance = self.boot('a')
        self.kill('a')
        migration = self.evacuate(instance, host='c')
        self.assertLandedOn('c', instance, migration)

        a = self.restart('a')

        self.assertNoTrace(a, instance)
        self.assertTrue(os.path.isfile(os.path.join(
            self.hosts['c'].instance_dir(instance), 'disk')))
        self.assertEqual(migration_obj.COMPLETED,
                         self.fresh(migration).status)
