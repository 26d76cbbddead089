"""Paths under instances_path, and the only code that deletes there."""

import datetime
import os

from oslo_utils import uuidutils

from nova import exception
from nova.tests import base
from nova.tests.files import sha256_tree
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

    def test_refuses_a_link_to_another_instances_directory(self):
        # Inside instances_path, but not this instance's: its files stay.
        other = instancedir.InstanceDir(
            self.root, '11111111-2222-4333-8444-555555555555')
        other.create()
        open(other.file('disk'), 'w').close()
        os.symlink(other.path, os.path.join(self.root, self.uuid))
        idir = instancedir.InstanceDir(self.root, self.uuid)
        self.assertRaises(exception.InvalidInstancePath, idir.check_inside)
        self.assertRaises(exception.InvalidInstancePath, idir.remove)
        self.assertRaises(exception.InvalidInstancePath, idir.remove_file,
                          'disk')
        self.assertEqual(['disk'], os.listdir(other.path))

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


class TestRemoveLayoutFile(base.TestCase):

    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.tmp, 'instances')
        self.base = os.path.join(self.root, instancedir.BASE_DIR)
        os.makedirs(self.base)
        self.file = os.path.join(self.base, 'f')
        with open(self.file, 'w') as f:
            f.write('x')

    def remove(self, name, directory=instancedir.BASE_DIR):
        return instancedir.remove_layout_file(self.root, directory, name)

    def test_removes_a_file_of_base_or_journal_once(self):
        self.assertTrue(self.remove('f'))
        self.assertFalse(os.path.exists(self.file))
        self.assertFalse(self.remove('f'))
        self.assertFalse(self.remove('f', instancedir.JOURNAL_DIR))

    def test_refuses_other_directories_names_and_kinds(self):
        uuid = uuidutils.generate_uuid()
        os.makedirs(os.path.join(self.root, uuid))
        with open(os.path.join(self.root, uuid, 'disk'), 'w') as f:
            f.write('disk')
        os.symlink(os.path.join(self.root, uuid, 'disk'),
                   os.path.join(self.base, 'link'))
        os.mkdir(os.path.join(self.base, 'sub'))
        for directory, name in ((uuid, 'disk'), ('.', instancedir.BASE_DIR),
                                (instancedir.BASE_DIR, '../%s' % uuid),
                                (instancedir.BASE_DIR, '..'),
                                (instancedir.BASE_DIR, ''),
                                (instancedir.BASE_DIR, 'link'),
                                (instancedir.BASE_DIR, 'sub')):
            self.assertRaises(exception.InvalidInstancePath, self.remove,
                              name, directory)
        self.assertTrue(os.path.exists(os.path.join(self.root, uuid,
                                                    'disk')))
        self.assertTrue(os.path.islink(os.path.join(self.base, 'link')))
        self.assertTrue(os.path.isdir(os.path.join(self.base, 'sub')))
        self.assertTrue(os.path.exists(self.file))

    def test_refuses_a_symlinked_directory(self):
        outside = os.path.join(self.tmp, 'outside')
        os.makedirs(outside)
        with open(os.path.join(outside, 'f'), 'w') as f:
            f.write('not nova\'s')
        os.symlink(outside, os.path.join(self.root, instancedir.JOURNAL_DIR))
        self.assertRaises(exception.InvalidInstancePath, self.remove, 'f',
                          instancedir.JOURNAL_DIR)
        self.assertTrue(os.path.exists(os.path.join(outside, 'f')))


class TestQuarantine(base.TestCase):

    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.tmp, 'instances')
        os.makedirs(self.root)
        self.idir = instancedir.InstanceDir(self.root,
                                            uuidutils.generate_uuid())
        self.idir.create()
        with open(self.idir.file('disk'), 'wb') as f:
            f.write(b'x' * 1000)
        self.before = sha256_tree(self.idir.path)
        self.now = datetime.datetime(2026, 12, 1, 12, 0, 0,
                                     tzinfo=datetime.timezone.utc)

    def test_moved_aside_whole_and_listed(self):
        dest = self.idir.quarantine('leftover of attempt X', now=self.now)
        self.assertFalse(os.path.lexists(self.idir.path))
        self.assertEqual(os.path.join(
            self.root, '_quarantine',
            '%s-20261201T120000000000Z' % self.idir.uuid), dest)
        moved = sha256_tree(dest)
        moved.pop(instancedir.QUARANTINE_REASON)
        self.assertEqual(self.before, moved)
        found, other = instancedir.list_quarantine(self.root)
        self.assertEqual([], other)
        self.assertEqual([(self.idir.uuid, self.now, 'leftover of attempt X')],
                         [(q.instance_uuid, q.quarantined_at, q.reason)
                          for q in found])
        self.assertGreaterEqual(found[0].size, 1000)

    def test_purge_by_age_only(self):
        self.idir.quarantine('old', now=self.now)
        later = self.now + datetime.timedelta(hours=1)
        self.assertEqual([], instancedir.purge_quarantine(
            self.root, 7200, now=later))
        self.assertEqual(1, len(instancedir.list_quarantine(self.root)[0]))
        dry = instancedir.purge_quarantine(self.root, 3600, now=later,
                                           dry_run=True)
        self.assertEqual(1, len(dry))
        self.assertEqual(1, len(instancedir.list_quarantine(self.root)[0]))
        purged = instancedir.purge_quarantine(self.root, 3600, now=later)
        self.assertEqual([self.idir.uuid], [q.instance_uuid for q in purged])
        self.assertEqual([], os.listdir(os.path.join(self.root,
                                                     '_quarantine')))

    def test_purge_never_touches_what_it_did_not_name(self):
        qdir = os.path.join(self.root, '_quarantine')
        os.makedirs(os.path.join(qdir, 'operator-notes'))
        with open(os.path.join(qdir, 'README'), 'w') as f:
            f.write('keep')
        outside = os.path.join(self.tmp, 'outside')
        os.makedirs(outside)
        os.symlink(outside, os.path.join(
            qdir, '%s-20200101T000000000000Z' % self.idir.uuid))
        self.assertEqual([], instancedir.purge_quarantine(self.root, 0))
        self.assertEqual(3, len(os.listdir(qdir)))
        self.assertTrue(os.path.isdir(outside))
        self.assertEqual(3, len(instancedir.list_quarantine(self.root)[1]))

    def test_bad_ages_are_refused(self):
        for bad in (-1, None):
            self.assertRaises(exception.InvalidInput,
                              instancedir.purge_quarantine, self.root, bad)

    def test_an_unreadable_quarantine_deletes_nothing(self):
        dest = self.idir.quarantine('x', now=self.now)
        qdir = os.path.dirname(dest)
        # Root reads a directory whatever its mode: a quarantine that
        # is not a directory at all is what root cannot list.
        os.rename(qdir, qdir + '.moved')
        with open(qdir, 'w') as f:
            f.write('not a directory')
        self.assertRaises(exception.QuarantineUnusable,
                          instancedir.purge_quarantine, self.root, 0)
        self.assertRaises(exception.QuarantineUnusable,
                          instancedir.list_quarantine, self.root)
        self.assertEqual([os.path.basename(dest)],
                         os.listdir(qdir + '.moved'))

    def test_a_quarantine_that_is_a_symlink_is_refused(self):
        elsewhere = os.path.join(self.tmp, 'elsewhere')
        os.makedirs(elsewhere)
        os.symlink(elsewhere, os.path.join(self.root, '_quarantine'))
        self.assertRaises(exception.QuarantineUnusable,
                          self.idir.quarantine, 'x')
        self.assertEqual(self.before, sha256_tree(self.idir.path))
        self.assertEqual([], os.listdir(elsewhere))

    def test_a_missing_directory_is_nothing_to_do(self):
        self.idir.remove()
        self.assertIsNone(self.idir.quarantine('x'))
