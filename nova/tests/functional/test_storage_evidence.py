"""Shared storage decided from fresh evidence, tried the way operators
deploy it: an NFS mount under instances_path that appears late, goes
missing, or hosts cloned from one image.

A "mount" here swaps what a host's ``instances_path`` leads to (a link to
the shared directory in place of the host's own directory), which is what
a mount does to every path under it. In every scenario the instance's
disks survive byte for byte (sha256), the operator is told which hosts and
identities disagree, and the retry or the recovery then works.
"""

import os

from nova.cmd import manage
from nova import objects
from nova.tests.files import sha256_tree
from nova.tests.functional import evacuate_harness as harness
from nova.virt import instancedir
from nova.virt import storage_identity


class StorageEvidenceTestCase(harness.EvacuateTestCase):

    def shared_dir(self):
        return os.path.join(self.tmp, 'shared-instances')

    def mount_shared(self, name):
        """The shared file system gets mounted over ``name``'s
        instances_path (its own directory stays underneath)."""
        path = self.instances_path(name)
        os.makedirs(self.shared_dir(), exist_ok=True)
        os.rename(path, path + '.under-the-mount')
        os.symlink(self.shared_dir(), path)

    def unmount(self, name):
        """The mount goes away: an empty mount point is left."""
        path = self.instances_path(name)
        os.unlink(path)
        os.makedirs(path)

    def recorded(self, name):
        return objects.Service.get_by_host_and_binary(
            self.ctx, name, 'nova-compute').storage_identity

    def heartbeat(self, name):
        self.assertTrue(self.hosts[name].service.heartbeat())

    def fault(self, instance):
        """The fault's message (its first 255 characters) and its details
        (the whole text), together."""
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid)
        self.assertTrue(fault.details.find(fault.message[:100]) >= 0)
        return fault.message + '\n' + fault.details


class TestBootOrderRace(StorageEvidenceTestCase):
    """a's nova-compute started before its NFS mount: it made a local
    marker and recorded it; then the mount (shared with b) appeared."""

    SHARED = ('b',)

    def setUp(self):
        super().setUp()
        self.local_identity = self.recorded('a')
        self.mount_shared('a')
        self.shared_identity = storage_identity.read(
            self.shared_dir()).identity
        self.assertNotEqual(self.local_identity, self.shared_identity)

    def test_a_heartbeat_records_the_mount_and_the_disks_are_reused(self):
        self.heartbeat('a')
        self.assertEqual(self.shared_identity, self.recorded('a'))
        instance = self.boot('a')
        path = self.hosts['a'].instance_dir(instance)
        before = sha256_tree(path)
        self.kill('a')
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        self.assertEqual(before['disk'], sha256_tree(path)['disk'])

    def test_dead_before_its_heartbeat_the_disks_are_kept(self):
        # a dies within report_interval of the mount: its row still says
        # the local identity. b sees a directory a wrote on b's very
        # storage: it refuses, names the stale identity, deletes nothing.
        instance = self.boot('a')
        path = self.hosts['a'].instance_dir(instance)
        before = sha256_tree(path)
        self.kill('a')
        migration = self.evacuate(instance, host='b')
        self.assertFailedOnSource(instance, migration, vm_state='active')
        fault = self.fault(instance)
        for word in ('evidently shared', self.local_identity,
                     self.shared_identity, 'record-storage-identity a',
                     '--force'):
            self.assertIn(word, fault)
        self.assertEqual(before, sha256_tree(path))
        self.assertEqual([], instancedir.list_quarantine(
            self.shared_dir())[0])
        # The operator records a's identity from the shared mount as b
        # sees it; the evacuation then reuses the disks.
        conf = os.path.join(self.tmp, 'manage.conf')
        with open(conf, 'w') as f:
            f.write('[database]\nconnection = sqlite:///%s\n'
                    % os.path.join(self.tmp, 'nova.sqlite'))
        self.assertEqual(0, manage.main([
            '--config-file', conf, 'host', 'record-storage-identity', 'a',
            '--from', self.instances_path('b'), '--force']))
        self.assertEqual(self.shared_identity, self.recorded('a'))
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        self.assertEqual(before['disk'], sha256_tree(path)['disk'])


class TestMirrorCase(StorageEvidenceTestCase):
    """b's row is stale (its mount appeared after its last heartbeat) when
    a, the source, comes back: the identities say "not shared", but b
    re-stamped the directory it now runs the guest from."""

    SHARED = ('a', 'b')

    def test_the_returning_source_keeps_the_new_owners_directory(self):
        instance = self.boot('a')
        path = self.hosts['a'].instance_dir(instance)
        self.kill('a')
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        before = sha256_tree(path)
        stale = objects.Service.get_by_host_and_binary(self.ctx, 'b',
                                                       'nova-compute')
        stale.storage_identity = '99999999-9999-4999-8999-999999999999'
        stale.save()

        self.restart('a')

        self.assertEqual('completed', self.fresh(migration).status)
        self.assertEqual(before, sha256_tree(path))
        self.assertTrue(self.hosts['b'].running(instance))
        self.assertFalse(self.hosts['a'].has_domain(instance))
        self.assertEqual([], instancedir.list_quarantine(
            self.shared_dir())[0])


class TestMountMissingAtEvacuation(StorageEvidenceTestCase):
    SHARED = ('a',)

    def setUp(self):
        super().setUp()
        # b's instances_path is the shared mount, recorded at its start.
        self.hosts['b'].service.stop()
        os.rename(self.instances_path('b'),
                  self.instances_path('b') + '.unused')
        os.symlink(self.shared_dir(), self.instances_path('b'))
        self.heartbeat_row('b', storage_identity.read(
            self.shared_dir()).identity)
        self.start_compute('b')

    def heartbeat_row(self, name, identity):
        row = objects.Service.get_by_host_and_binary(self.ctx, name,
                                                     'nova-compute')
        row.storage_identity = identity
        row.save()

    def test_refused_and_nothing_written_until_the_mount_is_back(self):
        instance = self.boot('a')
        path = self.hosts['a'].instance_dir(instance)
        before = sha256_tree(path)
        self.kill('a')
        self.unmount('b')
        migration = self.evacuate(instance, host='b')
        self.assertFailedOnSource(instance, migration, vm_state='active')
        fault = self.fault(instance)
        self.assertIn('instance storage is missing', fault)
        self.assertIn(self.recorded('b'), fault)
        # Nothing was made on the bare mount point: no marker, no
        # directory of the instance.
        self.assertEqual([], os.listdir(self.instances_path('b')))
        self.assertEqual(before, sha256_tree(path))
        # b's next heartbeat disables it, with the reason.
        self.heartbeat('b')
        row = objects.Service.get_by_host_and_binary(self.ctx, 'b',
                                                     'nova-compute')
        self.assertTrue(row.disabled)
        self.assertIn('AUTO: instance storage is missing',
                      row.disabled_reason)
        # The mount comes back: enabled again, and the retry reuses the
        # disks.
        os.rmdir(self.instances_path('b'))
        os.symlink(self.shared_dir(), self.instances_path('b'))
        self.heartbeat('b')
        self.assertFalse(objects.Service.get_by_host_and_binary(
            self.ctx, 'b', 'nova-compute').disabled)
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        self.assertEqual(before['disk'], sha256_tree(path)['disk'])


class TestClonedMarkers(StorageEvidenceTestCase):
    """c was cloned from a's image: same marker, separate storage."""

    def setUp(self):
        super().setUp()
        self.hosts['c'].service.stop()
        marker = storage_identity.marker_path(self.instances_path('c'))
        os.unlink(marker)
        with open(storage_identity.marker_path(self.instances_path('a'))) \
                as f, open(marker, 'w') as out:
            out.write(f.read())
        self.start_compute('c')
        self.assertEqual(self.recorded('a'), self.recorded('c'))

    def test_false_shared_storage_is_refused_not_rebuilt(self):
        instance = self.boot('a')
        path = self.hosts['a'].instance_dir(instance)
        before = sha256_tree(path)
        self.kill('a')
        migration = self.evacuate(instance, host='c')
        self.assertFailedOnSource(instance, migration, vm_state='active')
        fault = self.fault(instance)
        self.assertIn('same storage identity', fault)
        self.assertIn('cloned', fault)
        self.assertEqual(before, sha256_tree(path))
        self.assertFalse(os.path.exists(
            self.hosts['c'].instance_dir(instance)))
        # The operator gives c an identity of its own; the evacuation then
        # builds new disks there, and a's copy is still a's.
        self.hosts['c'].service.stop()
        os.unlink(storage_identity.marker_path(self.instances_path('c')))
        storage_identity.create(self.instances_path('c'))
        self.start_compute('c')
        migration = self.evacuate(instance, host='c')
        self.assertLandedOn('c', instance, migration)
        self.assertEqual(before, sha256_tree(path))


class TestBadEvidence(StorageEvidenceTestCase):
    """Garbage where evidence should be: a clear error, nothing deleted."""

    def evacuate_private(self, spoil):
        instance = self.boot('a')
        a = self.kill('a')
        before = sha256_tree(a.instance_dir(instance))
        b = self.hosts['b']
        spoil(b)
        b_before = sha256_tree(self.instances_path('b'))
        migration = self.evacuate(instance, host='b')
        self.assertFailedOnSource(instance, migration, vm_state='active')
        self.assertEqual(before, sha256_tree(a.instance_dir(instance)))
        self.assertEqual(b_before, sha256_tree(self.instances_path('b')))
        return self.fault(instance)

    def marker(self, host):
        return storage_identity.marker_path(self.instances_path(host.name))

    def test_a_garbage_marker_on_the_target(self):
        def spoil(b):
            with open(self.marker(b), 'w') as f:
                f.write('not a uuid at all\n')
        fault = self.evacuate_private(spoil)
        self.assertIn('instance storage is missing', fault)
        self.assertIn('not a UUID', fault)

    def test_a_marker_that_is_a_symlink_out_of_instances_path(self):
        def spoil(b):
            outside = os.path.join(self.tmp, 'someone-elses-marker')
            with open(self.marker(self.hosts['a']), 'rb') as f, \
                    open(outside, 'wb') as out:
                out.write(f.read())     # an identity that would match a's
            os.unlink(self.marker(b))
            os.symlink(outside, self.marker(b))
        fault = self.evacuate_private(spoil)
        self.assertIn('symlink', fault)

    def test_a_stamp_naming_another_instance(self):
        instance = self.boot('a')
        a = self.kill('a')
        source = sha256_tree(a.instance_dir(instance))
        b = self.hosts['b']
        leftover = b.instance_dir(instance)
        os.makedirs(leftover)
        with open(os.path.join(leftover, '.nova-owner'), 'w') as f:
            f.write('{"instance_uuid": "00000000-0000-4000-8000-00000000000'
                    '0", "host": "b", "operation": "build", "attempt": "x",'
                    ' "storage_identity": null}')
        with open(os.path.join(leftover, 'disk'), 'w') as f:
            f.write('whose?')
        before = sha256_tree(leftover)
        migration = self.evacuate(instance, host='b')
        self.assertFailedOnSource(instance, migration, vm_state='active')
        self.assertIn('names instance', self.fault(instance))
        self.assertEqual(before, sha256_tree(leftover))
        self.assertEqual(source, sha256_tree(a.instance_dir(instance)))
