import os

from oslo_utils import uuidutils

from nova.tests import base
from nova.virt import instancedir
from nova.virt.libvirt import spawn_record


class TestSpawnRecord(base.TestCase):

    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.tmp, 'instances')
        self.idir = instancedir.InstanceDir(self.root,
                                            uuidutils.generate_uuid())

    def test_created_directory_goes_entirely(self):
        record = spawn_record.SpawnRecord(self.idir)
        record.created_dir = self.idir.create()
        open(self.idir.file('disk'), 'w').close()
        record.remove_created()
        self.assertFalse(os.path.exists(self.idir.path))
        record.remove_created()  # twice is fine

    def test_existing_directory_loses_only_recorded_files(self):
        self.idir.create()
        open(self.idir.file('disk'), 'w').close()   # there before
        record = spawn_record.SpawnRecord(self.idir)
        record.created_dir = self.idir.create()
        record.created_file('disk.eph0')
        open(self.idir.file('disk.eph0'), 'w').close()
        record.created_file('libvirt.xml')           # never written
        record.remove_created()
        self.assertEqual(['disk'], os.listdir(self.idir.path))

    def test_replaced_file_is_put_back_byte_for_byte(self):
        self.idir.create()
        path = self.idir.file('disk.info')
        with open(path, 'wb') as f:
            f.write(b'{"/mnt/other/disk": "qcow2"}\n')
        record = spawn_record.SpawnRecord(self.idir)
        record.created_dir = self.idir.create()
        record.replacing_file('disk.info')
        with open(path, 'w') as f:
            f.write('rewritten')
        record.replacing_file('disk.info')  # the first content is kept
        record.remove_created()
        with open(path, 'rb') as f:
            self.assertEqual(b'{"/mnt/other/disk": "qcow2"}\n', f.read())
        self.assertEqual(['disk.info'], os.listdir(self.idir.path))
