"""The storage identity is read, never made on the fly."""

import os
import threading

from nova import exception
from nova.tests import base
from nova.virt import instancedir
from nova.virt import storage_identity

UUID = '4d6c43a8-5e1c-4f51-9d4e-6a3b1f0d2c11'


class MountTable:
    """The mount table the storage checks of this process read: the
    kernel's (``/proc/self/mountinfo`` as it was when the test began) plus
    the directories the test says are mounted, in a file of the test's
    own. Only which file is read changes: parsing it and resolving paths
    against it are the real code's. Tests that cannot mount (no root)
    "mount" a directory by making a path lead to it and listing it here.
    """

    def __init__(self, test):
        self.path = os.path.join(test.tmp, 'mountinfo')
        with open(storage_identity.MOUNTINFO) as f:
            self._kernel = f.read()
        self._mounted = []
        self._write()
        test.addCleanup(setattr, storage_identity, 'MOUNTINFO',
                        storage_identity.MOUNTINFO)
        storage_identity.MOUNTINFO = self.path

    def mount(self, path):
        self._mounted.append(os.path.realpath(path))
        self._write()

    def unmount(self, path):
        self._mounted.remove(os.path.realpath(path))
        self._write()

    def _write(self):
        def escaped(path):
            # As the kernel writes them (octal escapes).
            return ''.join('\\%03o' % ord(c) if c in ' \t\n\\' else c
                           for c in path)
        with open(self.path, 'w') as f:
            f.write(self._kernel)
            for n, path in enumerate(self._mounted):
                f.write('%d 1 0:%d / %s rw - nfs4 srv:/export rw\n'
                        % (9000 + n, 900 + n, escaped(path)))


class TestRead(base.TestCase):

    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.tmp, 'instances')
        os.makedirs(self.root)
        self.marker = storage_identity.marker_path(self.root)

    def write_marker(self, content):
        with open(self.marker, 'w') as f:
            f.write(content)

    def test_reading_a_missing_marker_creates_nothing(self):
        status = storage_identity.read(self.root)
        self.assertIsNone(status.identity)
        self.assertIn('no storage identity marker', status.unknown_reason)
        self.assertIsNone(status.unavailable_reason)
        self.assertEqual([], os.listdir(self.root))

    def test_a_marker_is_read(self):
        self.write_marker(UUID + '\n')
        self.assertEqual(UUID, storage_identity.read(self.root).identity)

    def test_garbage_is_no_identity_and_says_so(self):
        for garbage in ('not-a-uuid\n', '', UUID.upper(), 'x' * 5000,
                        '\x00\xff'):
            self.write_marker(garbage)
            status = storage_identity.read(self.root)
            self.assertIsNone(status.identity, repr(garbage))
            self.assertIn(self.marker, status.unknown_reason)

    def test_a_symlinked_marker_is_not_evidence(self):
        outside = os.path.join(self.tmp, 'elsewhere')
        with open(outside, 'w') as f:
            f.write(UUID + '\n')
        os.symlink(outside, self.marker)
        status = storage_identity.read(self.root)
        self.assertIsNone(status.identity)
        self.assertIn('symlink', status.unknown_reason)

    def test_a_directory_as_marker_is_not_evidence(self):
        os.mkdir(self.marker)
        status = storage_identity.read(self.root)
        self.assertIsNone(status.identity)
        self.assertIn('not a regular file', status.unknown_reason)

    def test_a_required_mount_that_is_missing_makes_it_unavailable(self):
        self.write_marker(UUID + '\n')
        status = storage_identity.read(self.root, must_be_mounted=True)
        self.assertIsNone(status.identity)
        self.assertIn('not a mount point', status.unavailable_reason)

    def test_a_required_mount_that_is_there(self):
        self.write_marker(UUID + '\n')
        mountinfo = os.path.join(self.tmp, 'mountinfo')
        real = os.path.realpath(self.root)
        with open(mountinfo, 'w') as f:
            f.write('22 1 0:21 / / rw - ext4 /dev/sda1 rw\n')
            f.write('90 22 0:44 / %s rw - nfs4 srv:/export rw\n'
                    % real.replace(' ', '\\040'))
        status = storage_identity.read(self.root, must_be_mounted=True,
                                       mountinfo=mountinfo)
        self.assertEqual(UUID, status.identity)
        self.assertIsNone(status.unavailable_reason)

    def test_mount_points_unescape_spaces(self):
        mountinfo = os.path.join(self.tmp, 'mountinfo')
        with open(mountinfo, 'w') as f:
            f.write('90 22 0:44 / /srv/my\\040instances rw - nfs4 x rw\n')
        self.assertIn('/srv/my instances',
                      storage_identity.mount_points(mountinfo))

    def test_a_one_line_marker_of_an_earlier_release_still_reads(self):
        self.write_marker(UUID + '\n')
        status = storage_identity.read(self.root)
        self.assertEqual((UUID, False, None),
                         (status.identity, status.must_be_mounted,
                          status.unavailable_reason))

    def test_a_marker_flagged_as_a_mount_point_on_one(self):
        self.write_marker(UUID + '\nmount-point\n')
        MountTable(self).mount(self.root)
        status = storage_identity.read(self.root)
        self.assertEqual((UUID, True, True, None),
                         (status.identity, status.must_be_mounted,
                          status.mounted, status.unavailable_reason))

    def test_a_marker_flagged_as_a_mount_point_elsewhere_is_refused(self):
        # A copy of the marker, or instances_path below the mount point:
        # not the storage the flag vouches for.
        self.write_marker(UUID + '\nmount-point\n')
        MountTable(self)
        status = storage_identity.read(self.root)
        self.assertIsNone(status.identity)
        self.assertFalse(status.mounted)
        self.assertIn('says instances_path %s is a mount point' % self.root,
                      status.unavailable_reason)
        self.assertIn(UUID, status.unavailable_reason)

    def test_an_unknown_flag_is_no_evidence(self):
        self.write_marker(UUID + '\nread-only\n')
        status = storage_identity.read(self.root)
        self.assertIsNone(status.identity)
        self.assertIn('not a flag this release knows', status.unknown_reason)

    def test_mounted_follows_the_mount_table(self):
        self.write_marker(UUID + '\n')
        mounts = MountTable(self)
        self.assertFalse(storage_identity.read(self.root).mounted)
        mounts.mount(self.root)
        self.assertTrue(storage_identity.read(self.root).mounted)

    def test_the_real_root_is_a_mount_point(self):
        self.assertTrue(storage_identity.is_mount_point('/'))
        self.assertFalse(storage_identity.is_mount_point(self.root))


class TestCreate(base.TestCase):

    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.tmp, 'instances')

    def test_create_once_then_the_same(self):
        identity = storage_identity.create(self.root)
        self.assertEqual(identity, storage_identity.create(self.root))
        self.assertEqual(identity, storage_identity.read(self.root).identity)
        self.assertEqual([instancedir.STORAGE_IDENTITY_FILE],
                         os.listdir(self.root))

    def test_concurrent_creators_agree(self):
        found = []
        threads = [threading.Thread(
            target=lambda: found.append(storage_identity.create(self.root)))
            for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(1, len(set(found)))
        self.assertEqual([instancedir.STORAGE_IDENTITY_FILE],
                         os.listdir(self.root))

    def test_create_never_replaces_a_malformed_marker(self):
        os.makedirs(self.root)
        with open(storage_identity.marker_path(self.root), 'w') as f:
            f.write('garbage\n')
        self.assertRaises(exception.InvalidStorageIdentity,
                          storage_identity.create, self.root)
        with open(storage_identity.marker_path(self.root)) as f:
            self.assertEqual('garbage\n', f.read())

    def test_create_flagged_as_a_mount_point(self):
        identity = storage_identity.create(self.root, mount_point=True)
        with open(storage_identity.marker_path(self.root)) as f:
            self.assertEqual(identity + '\nmount-point\n', f.read())

    def test_flagging_a_marker_keeps_its_identity(self):
        identity = storage_identity.create(self.root)
        self.assertEqual(identity,
                         storage_identity.mark_mount_point(self.root))
        with open(storage_identity.marker_path(self.root)) as f:
            self.assertEqual(identity + '\nmount-point\n', f.read())
        self.assertEqual([instancedir.STORAGE_IDENTITY_FILE],
                         os.listdir(self.root))

    def test_flagging_needs_a_valid_marker(self):
        os.makedirs(self.root)
        self.assertRaises(exception.InvalidStorageIdentity,
                          storage_identity.mark_mount_point, self.root)
        self.assertEqual([], os.listdir(self.root))

    def test_create_if_new_on_an_empty_path(self):
        identity = storage_identity.create_if_new(self.root)
        self.assertEqual(identity, storage_identity.read(self.root).identity)

    def test_create_if_new_refuses_a_path_with_instances(self):
        os.makedirs(os.path.join(self.root, UUID))
        self.assertIsNone(storage_identity.create_if_new(self.root))
        self.assertFalse(os.path.lexists(
            storage_identity.marker_path(self.root)))

    def test_create_if_new_keeps_a_malformed_marker(self):
        os.makedirs(self.root)
        with open(storage_identity.marker_path(self.root), 'w') as f:
            f.write('garbage\n')
        self.assertIsNone(storage_identity.create_if_new(self.root))
        with open(storage_identity.marker_path(self.root)) as f:
            self.assertEqual('garbage\n', f.read())
