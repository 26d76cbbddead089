"""A disk's format comes from what the host recorded, never from its
content: a guest owns the bytes of its raw disk.

Hosts ``a`` and ``b`` share storage mounted at different paths (``b``
reaches it through a link of its own, as an NFS export mounted elsewhere
would be). The instance's raw disk starts with a qcow2 header naming a
host file as its backing file, written by the guest. Evacuated to ``b``,
the disk must still be given to QEMU as raw: probing it would make the
host open that file for the guest.
"""

import os

from oslo_concurrency import processutils

from nova.tests.files import sha256_tree
from nova.tests.functional import evacuate_harness as harness

SECRET = '/etc/passwd'


class TestRawDiskWithAQcow2Header(harness.EvacuateTestCase):
    SHARED = ('a', 'b')
    HOST_SETTINGS = {'a': {'images_type': 'raw'},
                     'b': {'images_type': 'raw'}}

    def instances_path(self, name):
        shared = os.path.join(self.tmp, 'shared-instances')
        if name != 'b':
            return super().instances_path(name)
        os.makedirs(shared, exist_ok=True)
        elsewhere = os.path.join(self.tmp, 'mnt', 'nfs-instances')
        if not os.path.lexists(elsewhere):
            os.makedirs(os.path.dirname(elsewhere), exist_ok=True)
            os.symlink(shared, elsewhere)
        return elsewhere

    def write_qcow2_header_into(self, disk):
        header = os.path.join(self.tmp, 'evil.qcow2')
        processutils.execute('qemu-img', 'create', '-f', 'qcow2', '-b',
                             SECRET, '-F', 'raw', header, '1M')
        with open(header, 'rb') as f:
            evil = f.read()
        with open(disk, 'r+b') as f:
            f.write(evil)

    def test_evacuated_raw_disk_is_never_probed(self):
        instance = self.boot('a')
        a = self.kill('a')
        disk = os.path.join(a.instance_dir(instance), 'disk')
        self.write_qcow2_header_into(disk)
        before = sha256_tree(a.instance_dir(instance))
        b = self.hosts['b']
        self.assertNotEqual(a.instance_dir(instance),
                            b.instance_dir(instance))

        migration = self.evacuate(instance, host='b')

        self.assertLandedOn('b', instance, migration)
        xml = b.driver.host.get_guest(instance.uuid).get_xml()
        self.assertIn("type='raw'", xml)
        self.assertNotIn("type='qcow2'", xml)
        self.assertNotIn(SECRET, xml)
        self.assertEqual(before['disk'],
                         sha256_tree(b.instance_dir(instance))['disk'])
