"""A disk's format comes from what the host recorded, never from its
content: a guest owns the bytes of its raw disk.

Hosts ``a`` and ``b`` share storage mounted at different paths (``b``
reaches it through a link of its own, as an NFS export mounted elsewhere
would be). The instance's raw disk starts with a qcow2 header naming a
host file as its backing file, written by the guest. Evacuated to ``b``,
the disk must still be given to QEMU as raw: probing it would make the
host open that file for the guest.

A ``disk.info`` in the old form (keyed by absolute path, as older releases
wrote it, naming ``a``'s mount path) is read by file name, and rewritten
by name by the hard reboot or spawn that read it, once that succeeded; a
failed one leaves it as it was.
"""

import json
import os

from oslo_concurrency import processutils

from nova.tests.files import sha256_tree
from nova.tests.functional import evacuate_harness as harness

SECRET = '/etc/passwd'


class SharedAtTwoPaths(harness.EvacuateTestCase):
    SHARED = ('a', 'b')

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


class TestRawDiskWithAQcow2Header(SharedAtTwoPaths):
    HOST_SETTINGS = {'a': {'images_type': 'raw'},
                     'b': {'images_type': 'raw'}}

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


class TestOldDiskInfoIsRewrittenByName(SharedAtTwoPaths):

    def write_old_disk_info(self, instance):
        """``disk.info`` as older releases wrote it on ``a``: keyed by
        absolute path; its bytes."""
        idir = self.hosts['a'].instance_dir(instance)
        content = json.dumps({os.path.join(idir, 'disk'): 'qcow2'}).encode()
        with open(os.path.join(idir, 'disk.info'), 'wb') as f:
            f.write(content)
        return content

    def disk_info(self, host, instance):
        with open(os.path.join(host.instance_dir(instance), 'disk.info'),
                  'rb') as f:
            return f.read()

    def wait_idle(self, instance, what):
        self.wait_for(lambda: self.fresh(instance).task_state is None,
                      '%s of %s' % (what, instance.uuid))
        return self.fresh(instance)

    def test_hard_reboot(self):
        instance = self.boot('a')
        a = self.hosts['a']
        old = self.write_old_disk_info(instance)
        # Fails after disk.info was read: plugging the VIF fails.
        a.sim.remove_bridge(harness.BRIDGE)
        self.api.reboot(self.ctx, self.fresh(instance), 'HARD')
        self.assertEqual('error', self.wait_idle(instance, 'reboot').vm_state)
        self.assertEqual(old, self.disk_info(a, instance))

        a.sim.add_bridge(harness.BRIDGE)
        self.api.reboot(self.ctx, self.fresh(instance), 'HARD')
        self.assertEqual('active',
                         self.wait_idle(instance, 'reboot').vm_state)
        self.assertTrue(a.running(instance))
        self.assertEqual({'disk': 'qcow2'},
                         json.loads(self.disk_info(a, instance)))

    def test_evacuation_spawn_on_storage_mounted_elsewhere(self):
        instance = self.boot('a')
        self.kill('a')
        old = self.write_old_disk_info(instance)
        b = self.hosts['b']
        before = sha256_tree(b.instance_dir(instance))
        # Fails after disk.info was read (and rewritten by the attempt):
        # plugging the VIF fails; the journal puts it back.
        b.sim.remove_bridge(harness.BRIDGE)
        migration = self.evacuate(instance, host='b')
        self.assertFailedOnSource(instance, migration)
        self.assertEqual(old, self.disk_info(b, instance))
        self.assertEqual(before, sha256_tree(b.instance_dir(instance)))

        b.sim.add_bridge(harness.BRIDGE)
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        self.assertEqual({'disk': 'qcow2'},
                         json.loads(self.disk_info(b, instance)))
        self.assertEqual(before['disk'],
                         sha256_tree(b.instance_dir(instance))['disk'])
