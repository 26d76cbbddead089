"""Shared storage decided from fresh evidence, tried the way operators
deploy it: an NFS mount under instances_path that appears late, goes
missing, or hosts cloned from one image.

A "mount" here swaps what a host's ``instances_path`` leads to (a link to
the shared directory in place of the host's own directory), which is what
a mount does to every path under it; where a host checks that its
instances_path is a mount point, the test's mount table lists the
directory mounted (``test_storage_identity.MountTable``). In every
scenario the instance's disks survive byte for byte (sha256), the operator
is told which hosts and identities disagree, and the retry or the recovery
then works.
"""

import os
import shutil

from nova.cmd import manage
from nova.conf import CONF
from nova import objects
from nova.tests.files import sha256_tree
from nova.tests.functional import evacuate_harness as harness
from nova.tests.unit.virt import test_storage_identity
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

    def unmount_to_local(self, name):
        """The mount ``mount_shared`` made goes away: the host's own
        directory under the mount point shows again."""
        path = self.instances_path(name)
        os.unlink(path)
        os.rename(path + '.under-the-mount', path)

    def row(self, name):
        return objects.Service.get_by_host_and_binary(
            self.ctx, name, 'nova-compute')

    def recorded(self, name):
        return self.row(name).storage_identity

    def manage(self, *argv, host='a'):
        """``nova-manage`` as run on ``host``, with its instances_path."""
        conf = os.path.join(self.tmp, 'manage-%s.conf' % host)
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\ninstances_path = %s\n'
                    '[database]\nconnection = sqlite:///%s\n'
                    % (self.instances_path(host),
                       os.path.join(self.tmp, 'nova.sqlite')))
        # main() parses the global configuration again: parse it without
        # that file afterwards, and run as ``host`` (an override wins over
        # a file) for the time of the command.
        self.addCleanup(CONF, [], project='nova', default_config_files=[])
        self.flags(host=host)
        try:
            return manage.main(['--config-file', conf] + list(argv))
        finally:
            self.flags(host='conductor')

    def heartbeat(self, name):
        self.assertTrue(self.hosts[name].service.heartbeat())

    def fault(self, instance):
        """The fault's message and the whole text of the failure,
        together (``failure_text``)."""
        message, whole = self.failure_text(instance).split('\n', 1)
        self.assertTrue(whole.find(message[:100]) >= 0)
        return message + '\n' + whole


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
        self.assertFailedOnSource(instance, migration, vm_state='error')
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
        self.assertEqual(0, self.manage(
            'host', 'record-storage-identity', 'a',
            '--from', self.instances_path('b'), '--force', host='b'))
        self.assertEqual(self.shared_identity, self.recorded('a'))
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        self.assertEqual(before['disk'], sha256_tree(path)['disk'])


class TestMirrorCase(StorageEvidenceTestCase):
    """b's row is stale (it records the local marker b had before its
    mount) when a, the source, comes back: the identities say "not
    shared", but b re-stamped the directory it now runs the guest from."""

    SHARED = ('a',)

    def setUp(self):
        super().setUp()
        self.b_local = self.recorded('b')
        self.hosts['b'].service.stop()
        self.mount_shared('b')
        self.start_compute('b')
        self.shared = storage_identity.read(self.shared_dir()).identity
        self.assertEqual(self.shared, self.recorded('b'))

    def test_the_returning_source_keeps_the_new_owners_directory(self):
        instance = self.boot('a')
        path = self.hosts['a'].instance_dir(instance)
        self.kill('a')
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        before = sha256_tree(path)
        # b's row goes back to what b recorded before its mount: the
        # marker under b's mount point, b's own.
        self.assertEqual(self.b_local, storage_identity.read(
            self.instances_path('b') + '.under-the-mount').identity)
        stale = self.row('b')
        stale.storage_identity = self.b_local
        stale.save()

        with self.assertLogs('nova.compute', 'INFO') as logs:
            self.restart('a')

        self.assertEqual('completed', self.fresh(migration).status)
        self.assertEqual(before, sha256_tree(path))
        self.assertTrue(self.hosts['b'].running(instance))
        self.assertFalse(self.hosts['a'].has_domain(instance))
        self.assertEqual([], instancedir.list_quarantine(
            self.shared_dir())[0])
        line = next(line for line in logs.output
                    if 'Instance was evacuated to b' in line)
        for word in ('source host a has %s' % self.shared,
                     'target host b has %s' % self.b_local,
                     'not shared', 'written by host b on storage %s'
                     % self.shared, 'kept'):
            self.assertIn(word, line)


def everything(path):
    """{relative path: sha256, or '/' for a directory} of all under
    ``path``: that nothing was written there, empty directories too."""
    found = {os.path.relpath(os.path.join(root, name), path): '/'
             for root, dirs, _files in os.walk(path) for name in dirs}
    found.update(sha256_tree(path))
    return found


class FlaggedMountTestCase(StorageEvidenceTestCase):
    """a's instances_path is an NFS export of its own, mounted over the
    directory where a ran on local disk at first (whose marker is still
    there, under the mount point), and set up with ``nova-manage host
    init-storage --mount-point``."""

    def setUp(self):
        super().setUp()
        self.mounts = test_storage_identity.MountTable(self)
        self.local_identity = self.recorded('a')

    def move_a_to_nfs(self, copy=()):
        """What the operator does, with a's nova-compute stopped: mount
        the NFS export, copy the instance directories ``copy`` there,
        give it a marker flagged as a mount point, start nova-compute."""
        self.kill('a')
        self.mount_shared('a')
        self.mounts.mount(self.shared_dir())
        for instance in copy:
            shutil.copytree(
                os.path.join(self.instances_path('a') + '.under-the-mount',
                             instance.uuid),
                os.path.join(self.shared_dir(), instance.uuid),
                symlinks=True)
        # --force: a recorded its local disk, and this is other storage;
        # --existing: the directories copied are a's.
        self.assertEqual(0, self.manage(
            'host', 'init-storage', '--mount-point', '--force',
            *(['--existing'] if copy else [])))
        self.nfs_identity = storage_identity.read(self.shared_dir()).identity
        self.assertEqual((self.nfs_identity, True), self.recorded_pair('a'))
        self.restart('a')
        self.assertFalse(self.row('a').disabled)

    def reboot_before_the_mount(self):
        """a's host reboots; nova-compute starts before the mount."""
        self.kill('a')
        self.unmount_to_local('a')
        self.mounts.unmount(self.shared_dir())

    def recorded_pair(self, name):
        row = self.row(name)
        return row.storage_identity, row.storage_must_be_mounted

    def assertRefusesItsStorage(self, words=()):
        row = self.row('a')
        self.assertEqual((self.nfs_identity, True),
                         (row.storage_identity, row.storage_must_be_mounted))
        self.assertTrue(row.disabled)
        for word in ('AUTO: instance storage not mounted', self.nfs_identity,
                     self.instances_path('a'), self.local_identity) + words:
            self.assertIn(word, row.disabled_reason)


class TestRestartBeforeMount(FlaggedMountTestCase):

    def test_builds_are_refused_and_nothing_is_written(self):
        self.move_a_to_nfs()
        self.reboot_before_the_mount()
        local = everything(self.instances_path('a'))
        with self.assertLogs('nova.compute.storage_report', 'ERROR') as logs:
            self.restart('a', host_rebooted=True)
        # Not recorded: the local marker is not a's storage.
        self.assertRefusesItsStorage()
        self.assertIn('Host a: instance storage not mounted: storage '
                      'identity %s is recorded as mounted at %s, which is '
                      'not a mount point now and shows storage identity %s'
                      % (self.nfs_identity, self.instances_path('a'),
                         self.local_identity), logs.output[0])
        instance = self.build_on('a')
        self.assertEqual('error', instance.vm_state)
        fault = self.fault(instance)
        for word in ('host a: instance storage not mounted',
                     self.nfs_identity, self.local_identity):
            self.assertIn(word, fault)
        # Its heartbeats change nothing either.
        self.heartbeat('a')
        self.assertRefusesItsStorage()
        self.assertEqual(local, everything(self.instances_path('a')))

        # The mount is back: the next heartbeat enables a again, and a
        # build lands on the NFS storage.
        self.mount_shared('a')
        self.mounts.mount(self.shared_dir())
        self.heartbeat('a')
        row = self.row('a')
        self.assertEqual((self.nfs_identity, True, False, None),
                         (row.storage_identity, row.storage_must_be_mounted,
                          row.disabled, row.disabled_reason))
        built = self.boot('a')
        self.assertTrue(os.path.isdir(os.path.join(self.shared_dir(),
                                                   built.uuid)))
        self.assertEqual(local, everything(self.instances_path('a')
                                           + '.under-the-mount'))

    def test_the_operator_makes_the_local_directory_its_storage(self):
        self.move_a_to_nfs()
        self.reboot_before_the_mount()
        self.restart('a', host_rebooted=True)
        self.assertRefusesItsStorage()
        self.assertEqual(1, self.manage('host', 'init-storage'))
        self.assertRefusesItsStorage()
        self.assertEqual(0, self.manage('host', 'init-storage', '--force'))
        self.heartbeat('a')
        row = self.row('a')
        self.assertEqual((self.local_identity, False, False),
                         (row.storage_identity, row.storage_must_be_mounted,
                          row.disabled))
        built = self.boot('a')
        self.assertTrue(os.path.isdir(os.path.join(self.instances_path('a'),
                                                   built.uuid)))


class TestStaleIdentity(FlaggedMountTestCase):
    """A host whose live storage identity differs from the one it recorded
    decides nothing that may delete, and says so."""

    def test_an_evacuation_to_it_is_refused(self):
        # b's NFS mount appears after its last heartbeat: its row still
        # says its local marker.
        b_local = self.recorded('b')
        instance = self.boot('a')
        a_disks = sha256_tree(self.hosts['a'].instance_dir(instance))
        self.kill('a')
        b_live = storage_identity.create(self.shared_dir())
        self.mount_shared('b')
        migration = self.evacuate(instance, host='b')
        self.assertFailedOnSource(instance, migration, vm_state='error')
        fault = self.fault(instance)
        self.assertIn('Host b reads storage identity %s at %s but recorded '
                      '%s' % (b_live, self.instances_path('b'), b_local),
                      fault)
        self.assertIn('refusing decisions that may delete', fault)
        self.assertEqual(a_disks, sha256_tree(
            self.hosts['a'].instance_dir(instance)))
        self.assertFalse(os.path.exists(os.path.join(self.shared_dir(),
                                                     instance.uuid)))
        # Its heartbeat records what it reads; the retry then builds on
        # b's storage, and a's copy is still there.
        self.heartbeat('b')
        self.assertEqual(b_live, self.recorded('b'))
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        self.assertEqual(a_disks, sha256_tree(
            self.hosts['a'].instance_dir(instance)))

    def test_the_returning_source_keeps_its_copy(self):
        # a ran the instance on local disk, then from its NFS export (a
        # copy of the directory, as an operator moving to NFS makes); the
        # local one stays under the mount point, stamped by a on its
        # local storage.
        instance = self.boot('a')
        self.move_a_to_nfs(copy=[instance])
        self.assertTrue(self.hosts['a'].running(instance))
        self.kill('a')
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        # a comes back before its mount: what it sees is the old local
        # copy, which its live identity (the local marker) would call its
        # own, not shared with b.
        self.unmount_to_local('a')
        self.mounts.unmount(self.shared_dir())
        copy = self.hosts['a'].instance_dir(instance)
        before = sha256_tree(copy)
        with self.assertLogs('nova.compute', 'INFO') as logs:
            self.restart('a', host_rebooted=True)
        self.assertEqual('completed', self.fresh(migration).status)
        self.assertEqual(before, sha256_tree(copy))
        self.assertEqual([], instancedir.list_quarantine(
            self.instances_path('a'))[0])
        self.assertFalse(self.hosts['a'].has_domain(instance))
        self.assertTrue(self.hosts['b'].running(instance))
        self.assertRefusesItsStorage()
        stale = next(line for line in logs.output if 'reads storage' in line)
        self.assertIn('Host a reads storage identity %s at %s but recorded '
                      '%s' % (self.local_identity, self.instances_path('a'),
                              self.nfs_identity), stale)


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
        self.assertFailedOnSource(instance, migration, vm_state='error')
        fault = self.fault(instance)
        self.assertIn('host b: instance storage is missing', fault)
        self.assertIn('recorded storage identity %s' % self.recorded('b'),
                      fault)
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
        self.assertFailedOnSource(instance, migration, vm_state='error')
        fault = self.fault(instance)
        self.assertIn('a and c have the same storage identity %s (cloned '
                      'markers?)' % self.recorded('a'), fault)
        self.assertIn('Give c an identity of its own', fault)
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
        self.assertFailedOnSource(instance, migration, vm_state='error')
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
        self.assertFailedOnSource(instance, migration, vm_state='error')
        self.assertIn('names instance', self.fault(instance))
        self.assertEqual(before, sha256_tree(leftover))
        self.assertEqual(source, sha256_tree(a.instance_dir(instance)))
