"""Ownership stamps of instance directories."""

import os

from oslo_utils import uuidutils

from nova import exception
from nova.tests import base
from nova.virt import instancedir
from nova.virt import ownership


class TestStamp(base.TestCase):

    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.tmp, 'instances')
        self.idir = instancedir.InstanceDir(self.root,
                                            uuidutils.generate_uuid())
        self.idir.create()
        self.identity = uuidutils.generate_uuid()

    def stamp(self, **changes):
        values = dict(instance_uuid=self.idir.uuid, host='b',
                      storage_identity=self.identity,
                      operation='evacuation',
                      attempt=uuidutils.generate_uuid(),
                      migration=uuidutils.generate_uuid())
        values.update(changes)
        return ownership.OwnerStamp.new(**values)

    def test_written_and_read_back(self):
        stamp = self.stamp()
        ownership.write(self.idir, stamp)
        self.assertEqual(stamp, ownership.read(self.idir))
        self.assertTrue(stamp.left_by('b', self.identity))
        self.assertFalse(stamp.left_by('a', self.identity))
        self.assertFalse(stamp.left_by('b', uuidutils.generate_uuid()))
        self.assertFalse(stamp.left_by('b', None))

    def test_no_stamp_is_none(self):
        self.assertIsNone(ownership.read(self.idir))

    def test_a_stamp_naming_another_instance_is_refused(self):
        other = self.stamp(instance_uuid=uuidutils.generate_uuid())
        with open(self.idir.file(ownership.STAMP), 'w') as f:
            f.write(other.to_json())
        self.assertRaisesRegex(exception.InvalidOwnershipStamp,
                               'names instance', ownership.read, self.idir)
        self.assertRaises(exception.InvalidOwnershipStamp, ownership.write,
                          self.idir, other)

    def test_garbage_is_refused(self):
        for garbage in ('', '{', '[]', '{"host": "b"}', '\xff' * 10,
                        'x' * 10000):
            with open(self.idir.file(ownership.STAMP), 'w') as f:
                f.write(garbage)
            self.assertRaises(exception.InvalidOwnershipStamp,
                              ownership.read, self.idir)

    def test_a_symlinked_stamp_is_refused(self):
        outside = os.path.join(self.tmp, 'stamp')
        with open(outside, 'w') as f:
            f.write(self.stamp().to_json())
        os.symlink(outside, self.idir.file(ownership.STAMP))
        self.assertRaisesRegex(exception.InvalidOwnershipStamp, 'symlink',
                               ownership.read, self.idir)
