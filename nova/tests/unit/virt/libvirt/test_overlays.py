"""qcow2 disks from a template: the same bytes qemu-img writes, made
without it once a shape was seen, and never for a shape it did not make.

``qemu_img.create`` is wrapped (not replaced) to count how often the real
qemu-img runs; every file checked here was written for real.
"""

import os
import threading
from unittest import mock

from oslo_concurrency import processutils

from nova import exception
from nova.image import qemu_img
from nova.tests import base
from nova.virt.libvirt import overlays

MiB = 1024 ** 2


class TestOverlays(base.TestCase):

    def setUp(self):
        super().setUp()
        overlays.forget()
        self.addCleanup(overlays.forget)
        self.base = self._base('base', 16 * MiB)
        spy = mock.patch.object(qemu_img, 'create', wraps=qemu_img.create)
        self.qemu_img_create = spy.start()
        self.addCleanup(spy.stop)

    def _base(self, name, size):
        path = os.path.join(self.tmp, name)
        processutils.execute('qemu-img', 'create', '-q', '-f', 'qcow2',
                             path, str(size))
        return overlays.Backing(path, 'qcow2', size)

    def _path(self, name):
        return os.path.join(self.tmp, name)

    def _by_qemu_img(self, name, fmt, size=None, backing=None):
        path = self._path(name)
        processutils.execute(
            'qemu-img', 'create', '-q', '-f', fmt,
            *(('-b', backing.path, '-F', backing.format) if backing else ()),
            path, *((str(size),) if size is not None else ()))
        return path

    def _bytes(self, path):
        with open(path, 'rb') as f:
            return f.read()

    def assertSameBytes(self, expected, path):
        self.assertEqual(self._bytes(expected), self._bytes(path))
        # And qemu-img finds nothing wrong in the copy.
        processutils.execute('qemu-img', 'check', '-q', '-f', 'qcow2', path)

    def test_second_overlay_is_qemu_imgs_bytes_without_qemu_img(self):
        overlays.create(self._path('first'), 'qcow2', backing=self.base)
        overlays.create(self._path('second'), 'qcow2', backing=self.base)
        self.assertEqual(1, self.qemu_img_create.call_count)
        expected = self._by_qemu_img('expected', 'qcow2',
                                     backing=self.base)
        self.assertSameBytes(expected, self._path('first'))
        self.assertSameBytes(expected, self._path('second'))
        info = qemu_img.info(self._path('second'), 'qcow2')
        self.assertEqual((self.base.path, 'qcow2', 16 * MiB),
                         (info.backing_file, info.backing_format,
                          info.virtual_size))

    def test_each_size_has_its_own_template(self):
        for name, size in (('a', 32 * MiB), ('b', 64 * MiB),
                           ('c', 32 * MiB), ('d', 64 * MiB)):
            overlays.create(self._path(name), 'qcow2', size=size,
                            backing=self.base)
        self.assertEqual(2, self.qemu_img_create.call_count)
        self.assertEqual([32 * MiB, 64 * MiB, 32 * MiB, 64 * MiB],
                         [qemu_img.info(self._path(n), 'qcow2').virtual_size
                          for n in 'abcd'])
        self.assertSameBytes(
            self._by_qemu_img('e', 'qcow2', 64 * MiB, self.base),
            self._path('d'))

    def test_another_base_names_its_own_backing_file(self):
        other = self._base('other', 16 * MiB)
        overlays.create(self._path('a'), 'qcow2', backing=self.base)
        overlays.create(self._path('b'), 'qcow2', backing=other)
        overlays.create(self._path('c'), 'qcow2', backing=other)
        self.assertEqual(2, self.qemu_img_create.call_count)
        self.assertEqual(other.path,
                         qemu_img.info(self._path('c')).backing_file)
        self.assertSameBytes(self._by_qemu_img('d', 'qcow2', None, other),
                             self._path('c'))

    def test_backing_size_is_part_of_the_shape_without_a_size(self):
        # The base at the same path, re-made at another size: the overlay
        # takes the new size, as qemu-img would give it.
        overlays.create(self._path('a'), 'qcow2', backing=self.base)
        os.unlink(self.base.path)
        bigger = self._base('base', 48 * MiB)
        overlays.create(self._path('b'), 'qcow2', backing=bigger)
        self.assertEqual(48 * MiB, qemu_img.info(self._path('b')).virtual_size)
        self.assertEqual(2, self.qemu_img_create.call_count)

    def test_blank_qcow2_from_template(self):
        for name in ('a', 'b'):
            overlays.create(self._path(name), 'qcow2', size=8 * MiB)
        self.assertEqual(1, self.qemu_img_create.call_count)
        self.assertSameBytes(self._by_qemu_img('c', 'qcow2', 8 * MiB),
                             self._path('b'))
        self.assertIsNone(qemu_img.info(self._path('b')).backing_file)

    def test_raw_is_always_qemu_img(self):
        for name in ('a', 'b'):
            overlays.create(self._path(name), 'raw', size=8 * MiB)
        self.assertEqual(2, self.qemu_img_create.call_count)
        self.assertEqual(8 * MiB, os.stat(self._path('b')).st_size)

    def test_replaces_what_was_at_the_path(self):
        overlays.create(self._path('a'), 'qcow2', backing=self.base)
        with open(self._path('b'), 'wb') as f:
            f.write(b'\xff' * (4 * MiB))
        overlays.create(self._path('b'), 'qcow2', backing=self.base)
        self.assertEqual(1, self.qemu_img_create.call_count)
        self.assertSameBytes(self._path('a'), self._path('b'))

    def test_a_file_too_large_to_keep_is_made_by_qemu_img_each_time(self):
        with mock.patch.object(overlays, 'MAX_TEMPLATE_BYTES', 64 * 1024):
            for name in ('a', 'b'):
                overlays.create(self._path(name), 'qcow2',
                                backing=self.base)
        self.assertEqual(2, self.qemu_img_create.call_count)

    def test_oldest_shape_is_dropped_beyond_the_limit(self):
        with mock.patch.object(overlays, 'MAX_TEMPLATES', 2):
            for name, size in (('a', 16), ('b', 32), ('c', 48), ('d', 32),
                               ('e', 16)):
                overlays.create(self._path(name), 'qcow2',
                                size=size * MiB, backing=self.base)
        # 16, 32, 48 by qemu-img; 32 kept; 16 was dropped for 48.
        self.assertEqual(4, self.qemu_img_create.call_count)
        self.assertEqual(16 * MiB,
                         qemu_img.info(self._path('e')).virtual_size)

    def _held_first_qemu_img(self, fail=False):
        """qemu_img.create whose first call waits for ``release`` (set
        ``entered`` first) and then runs, or fails when ``fail``."""
        entered, release = threading.Event(), threading.Event()
        real = qemu_img.create
        calls = []

        def create(*args, **kwargs):
            calls.append(args[0])
            if len(calls) == 1:
                entered.set()
                release.wait()
                if fail:
                    raise exception.DiskCreationFailed(path=args[0],
                                                       reason='held')
            return real(*args, **kwargs)
        patch = mock.patch.object(qemu_img, 'create', side_effect=create)
        patch.start()
        self.addCleanup(patch.stop)
        return entered, release, calls

    def _create_in_threads(self, names):
        errors = {}

        def create(name):
            try:
                overlays.create(self._path(name), 'qcow2',
                                backing=self.base)
            except Exception as e:
                errors[name] = e
        threads = {name: threading.Thread(target=create, args=(name,))
                   for name in names}
        for thread in threads.values():
            thread.start()
        return threads, errors

    def _waiting(self, count):
        shape = overlays._Shape(None, self.base)
        making = overlays._making.get(shape)
        return making is not None and making.waiters == count

    def test_disks_of_a_new_shape_at_once_wait_for_one_qemu_img(self):
        entered, release, calls = self._held_first_qemu_img()
        first, _ = self._create_in_threads(['first'])
        self.assertTrue(entered.wait(30))
        others, errors = self._create_in_threads(['second', 'third'])
        # Both wait for the first one's qemu-img rather than run theirs.
        self.assertTrue(base.wait_until(lambda: self._waiting(2)))
        release.set()
        for thread in [*first.values(), *others.values()]:
            thread.join(30)
        self.assertEqual({}, errors)
        self.assertEqual([self._path('first')], calls)
        expected = self._by_qemu_img('expected', 'qcow2',
                                     backing=self.base)
        for name in ('first', 'second', 'third'):
            self.assertSameBytes(expected, self._path(name))
        self.assertEqual({}, overlays._making)

    def test_waiters_make_their_own_when_the_first_fails(self):
        entered, release, calls = self._held_first_qemu_img(fail=True)
        first, first_errors = self._create_in_threads(['first'])
        self.assertTrue(entered.wait(30))
        other, errors = self._create_in_threads(['second'])
        self.assertTrue(base.wait_until(lambda: self._waiting(1)))
        release.set()
        for thread in [*first.values(), *other.values()]:
            thread.join(30)
        self.assertIsInstance(first_errors['first'],
                              exception.DiskCreationFailed)
        self.assertEqual({}, errors)
        self.assertEqual([self._path('first'), self._path('second')], calls)
        self.assertSameBytes(
            self._by_qemu_img('expected', 'qcow2', backing=self.base),
            self._path('second'))
        self.assertEqual({}, overlays._making)

    def test_write_failure_is_a_disk_creation_failure(self):
        overlays.create(self._path('a'), 'qcow2', backing=self.base)
        missing = os.path.join(self.tmp, 'no-such-dir', 'disk')
        self.assertRaises(exception.DiskCreationFailed, overlays.create,
                          missing, 'qcow2', backing=self.base)
        self.assertFalse(os.path.exists(os.path.dirname(missing)))
