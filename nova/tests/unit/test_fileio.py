"""Files replaced whole: the old content or all of the new, never a part."""

import os

from nova import fileio
from nova.tests import base


class TestWriteAtomically(base.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = os.path.join(self.tmp, 'instance')
        os.makedirs(self.dir)
        self.path = os.path.join(self.dir, 'disk.info')

    def read(self, path):
        with open(path, 'rb') as f:
            return f.read()

    def test_replaces_the_file_with_text_or_bytes(self):
        fileio.write_atomically(self.path, '{"a": "raw"}')
        self.assertEqual(b'{"a": "raw"}', self.read(self.path))
        fileio.write_atomically(self.path, b'<domain/>', sync_dir=True)
        self.assertEqual(b'<domain/>', self.read(self.path))
        self.assertEqual(['disk.info'], os.listdir(self.dir))

    def test_a_failed_write_keeps_the_old_file_and_leaves_no_part(self):
        fileio.write_atomically(self.path, 'old')
        # Neither text nor bytes: the write itself fails, after the
        # temporary file was opened.
        self.assertRaises(TypeError, fileio.write_atomically, self.path,
                          ['not', 'text'])
        self.assertEqual(b'old', self.read(self.path))
        self.assertEqual(['disk.info'], os.listdir(self.dir))

    def test_a_failed_write_removes_its_own_temporary_only(self):
        fileio.write_atomically(self.path, 'old')
        # What someone else is writing beside it stays, whole.
        other = os.path.join(self.dir, 'disk.info.part-other')
        with open(other, 'w') as f:
            f.write('theirs')
        mine = os.path.join(self.dir, 'disk.info.part-mine')
        self.assertRaises(TypeError, fileio.write_atomically, self.path,
                          ['not', 'text'], tmp_path=mine)
        self.assertEqual(b'old', self.read(self.path))
        self.assertEqual(b'theirs', self.read(other))
        self.assertEqual(['disk.info', 'disk.info.part-other'],
                         sorted(os.listdir(self.dir)))

    def test_a_given_temporary_left_by_a_crash_is_written_over(self):
        part = os.path.join(self.dir, 'disk.info.part-attempt')
        with open(part, 'w') as f:
            f.write('half of a')
        fileio.write_atomically(self.path, 'whole', tmp_path=part)
        self.assertEqual(b'whole', self.read(self.path))
        self.assertEqual(['disk.info'], os.listdir(self.dir))


class TestFsyncDir(base.TestCase):

    def test_flushes_an_existing_directory(self):
        fileio.fsync_dir(self.tmp)

    def test_a_missing_directory_is_an_error(self):
        self.assertRaises(FileNotFoundError, fileio.fsync_dir,
                          os.path.join(self.tmp, 'missing'))


class TestTemporaryBeside(base.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = os.path.join(self.tmp, '_base')
        os.makedirs(self.dir)
        self.path = os.path.join(self.dir, 'abc')

    def test_a_temporary_moved_into_place_leaves_only_the_target(self):
        with fileio.temporary_beside(self.path) as tmp:
            self.assertTrue(os.path.basename(tmp).startswith('abc.part-'))
            with open(tmp, 'w') as f:
                f.write('image')
            os.rename(tmp, self.path)
        self.assertEqual(['abc'], os.listdir(self.dir))

    def test_a_hard_link_leaves_no_second_name(self):
        with fileio.temporary_beside(self.path) as tmp:
            with open(tmp, 'w') as f:
                f.write('marker')
            os.link(tmp, self.path)
        self.assertEqual(['abc'], os.listdir(self.dir))

    def test_a_failure_removes_its_temporary_and_nothing_else(self):
        other = os.path.join(self.dir, 'abc.part-someone-else')
        with open(other, 'w') as f:
            f.write('theirs')
        with open(self.path, 'w') as f:
            f.write('old')
        with self.assertRaises(ValueError):
            with fileio.temporary_beside(self.path) as tmp:
                with open(tmp, 'w') as f:
                    f.write('half')
                raise ValueError('checksum mismatch')
        self.assertEqual(['abc', 'abc.part-someone-else'],
                         sorted(os.listdir(self.dir)))
