"""The storage identity is read, never made on the fly."""

import os
import threading

from nova import exception
from nova.tests import base
from nova.virt import instancedir
from nova.virt import storage_identity

UUID = '4d6c43a8-5e1c-4f51-9d4e-6a3b1f0d2c11'


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
