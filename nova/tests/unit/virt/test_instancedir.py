"""Paths under instances_path, and the only code that deletes there."""

import os
import threading

from oslo_utils import uuidutils

from nova import exception
from nova.tests import base
from nova.virt import instancedir


class TestInstanceDir(base.TestCase):

    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.tmp, 'instances')
        os.makedirs(self.root)
        self.uuid = uuidutils.generate_uuid()

    def test_refuses_anything_but_a_canonical_uuid(self):
        for bad in (None, '', '..', '../x', '/etc', self.uuid.upper(),
                    self.uuid.replace('-', ''), '{%s}' % self.uuid,
                    'urn:uuid:' + self.uuid, self.uuid + '/..'):
            self.assertRaises(exception.InvalidUUID,
                              instancedir.InstanceDir, self.root, bad)

    def test_file_names_stay_in_the_directory(self):
        idir = instancedir.InstanceDir(self.root, self.uuid)
        self.assertEqual(os.path.join(self.root, self.uuid, 'disk'),
                         idir.file('disk'))
        for bad in ('', '.', '..', '../other', 'a/b'):
            self.assertRaises(exception.InvalidInstancePath, idir.file, bad)

    def test_create_says_whether_it_created(self):
        idir = instancedir.InstanceDir(self.root, self.uuid)
        self.assertTrue(idir.create())
        self.assertFalse(idir.create())

    def test_remove_is_idempotent(self):
        idir = instancedir.InstanceDir(self.root, self.uuid)
        idir.create()
        open(idir.file('disk'), 'w').close()
        self.assertTrue(idir.remove())
        self.assertFalse(idir.remove())
        self.assertEqual([], os.listdir(self.root))

    def test_remove_refuses_a_symlinked_directory(self):
        outside = os.path.join(self.tmp, 'outside')
        os.makedirs(outside)
        open(os.path.join(outside, 'disk'), 'w').close()
        os.symlink(outside, os.path.join(self.root, self.uuid))
        idir = instancedir.InstanceDir(self.root, self.uuid)
        self.assertRaises(exception.InvalidInstancePath, idir.remove)
        self.assertRaises(exception.InvalidInstancePath, idir.remove_file,
                          'disk')
        self.assertEqual(['disk'], os.listdir(outside))

    def test_remove_file_removes_a_link_not_its_target(self):
        idir = instancedir.InstanceDir(self.root, self.uuid)
        idir.create()
        target = os.path.join(self.tmp, 'precious')
        open(target, 'w').close()
        os.symlink(target, idir.file('disk'))
        self.assertTrue(idir.remove_file('disk'))
        self.assertTrue(os.path.exists(target))

    def test_symlinked_instances_path_is_fine(self):
        # Shared storage is often mounted elsewhere and linked in.
        link = os.path.join(self.tmp, 'linked-instances')
        os.symlink(self.root, link)
        idir = instancedir.InstanceDir(link, self.uuid)
        idir.create()
        self.assertTrue(idir.remove())


class TestStorageIdentity(base.TestCase):

    def test_created_once_and_stable(self):
        root = os.path.join(self.tmp, 'instances')
        identity = instancedir.storage_identity(root)
        self.assertTrue(uuidutils.is_uuid_like(identity))
        self.assertEqual(identity, instancedir.storage_identity(root))
        self.assertEqual(['.nova-storage-identity'], os.listdir(root))

    def test_racing_hosts_agree(self):
        root = os.path.join(self.tmp, 'shared')
        found = []
        threads = [threading.Thread(
            target=lambda: found.append(instancedir.storage_identity(root)))
            for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(1, len(set(found)))
        self.assertEqual(['.nova-storage-identity'], os.listdir(root))

    def test_corrupt_marker_is_reported(self):
        root = os.path.join(self.tmp, 'instances')
        os.makedirs(root)
        with open(os.path.join(root, '.nova-storage-identity'), 'w') as f:
            f.write('garbage')
        self.assertRaises(exception.InvalidSharedStorage,
                          instancedir.storage_identity, root)


class TestWriteAtomically(base.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = os.path.join(self.tmp, 'instance')
        os.makedirs(self.dir)

    def test_replaces_the_file_with_text_or_bytes(self):
        path = os.path.join(self.dir, 'disk.info')
        instancedir.write_atomically(path, '{"a": "raw"}')
        with open(path) as f:
            self.assertEqual('{"a": "raw"}', f.read())
        instancedir.write_atomically(path, b'<domain/>')
        with open(path, 'rb') as f:
            self.assertEqual(b'<domain/>', f.read())
        self.assertEqual(['disk.info'], os.listdir(self.dir))

    def test_a_failed_write_keeps_the_old_file_and_leaves_no_part(self):
        path = os.path.join(self.dir, 'disk.info')
        instancedir.write_atomically(path, 'old')
        # Neither text nor bytes: the write itself fails, after the
        # temporary file was opened.
        self.assertRaises(TypeError, instancedir.write_atomically, path,
                          ['not', 'text'])
        with open(path) as f:
            self.assertEqual('old', f.read())
        self.assertEqual(['disk.info'], os.listdir(self.dir))
