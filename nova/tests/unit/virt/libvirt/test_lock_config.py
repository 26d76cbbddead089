"""Which disk leases libvirt's configuration gives, read as libvirtd does."""

import os

from nova.tests import base
from nova.tests.fixtures import libvirt_host as fixtures
from nova.virt.libvirt import lock_config


class TestLockConfig(base.TestCase):

    def write(self, name, text):
        with open(os.path.join(self.tmp, name), 'w') as f:
            f.write(text)

    def read(self):
        return lock_config.read(self.tmp)

    def test_no_qemu_conf_or_no_lock_manager_is_none(self):
        self.assertEqual(lock_config.NONE, self.read().manager)
        self.write('qemu.conf', '#lock_manager = "lockd"\nuser = "root"\n')
        leases = self.read()
        self.assertEqual(lock_config.NONE, leases.manager)
        self.assertFalse(leases.protected)
        self.write('qemu.conf', 'lock_manager = "nop"\n')
        self.assertEqual(lock_config.NONE, self.read().manager)

    def test_lockd_leases_every_disk_by_default(self):
        self.write('qemu.conf', 'user = "root"\n  lock_manager="lockd" # on\n')
        leases = self.read()
        self.assertEqual(lock_config.LOCKD, leases.manager)
        self.assertTrue(leases.protected)
        self.assertIn('on the disk files themselves', leases.detail)
        self.write('qemu-lockd.conf',
                   'file_lockspace_dir = "/srv/nfs/lockd"\n')
        self.assertIn('/srv/nfs/lockd', self.read().detail)

    def test_lockd_without_auto_disk_leases_leases_nothing(self):
        # This project writes no <lease> elements.
        self.write('qemu.conf', 'lock_manager = "lockd"\n')
        self.write('qemu-lockd.conf', 'auto_disk_leases = 0\n')
        leases = self.read()
        self.assertEqual(lock_config.NONE, leases.manager)
        self.assertIn('auto_disk_leases = 0', leases.detail)

    def test_sanlock_only_with_auto_disk_leases(self):
        self.write('qemu.conf', 'lock_manager = "sanlock"\n')
        self.assertEqual(lock_config.NONE, self.read().manager)
        self.write('qemu-sanlock.conf', 'auto_disk_leases = 1\n')
        self.assertEqual(lock_config.SANLOCK, self.read().manager)

    def test_the_last_setting_wins(self):
        self.write('qemu.conf', 'lock_manager = "lockd"\n'
                                'lock_manager = "nop"\n')
        self.assertEqual(lock_config.NONE, self.read().manager)

    def test_unknown_manager_or_unreadable_file_is_unknown(self):
        self.write('qemu.conf', 'lock_manager = "other"\n')
        leases = self.read()
        self.assertIsNone(leases.manager)
        self.assertIsNone(leases.protected)
        os.unlink(os.path.join(self.tmp, 'qemu.conf'))
        os.mkdir(os.path.join(self.tmp, 'qemu.conf'))
        leases = self.read()
        self.assertIsNone(leases.manager)
        self.assertIn('cannot read', leases.detail)

    def test_parse(self):
        self.assertEqual(
            {'a': 'x"y', 'b': 3, 'c': -1},
            lock_config.parse('a = "x\\"y"\n# d = "no"\nb=3\nc = -1\n'
                              'e = [ "list" ]\n'))


class TestDriver(base.TestCase):

    def test_the_driver_reads_its_config_dir(self):
        config_dir = os.path.join(self.tmp, 'etc-libvirt')
        os.makedirs(config_dir)
        with open(os.path.join(config_dir, 'qemu.conf'), 'w') as f:
            f.write('lock_manager = "lockd"\n')
        host = fixtures.make_host(self.tmp, 'compute1',
                                  libvirt_config_dir=config_dir)
        self.addCleanup(host.close)
        self.assertEqual(lock_config.LOCKD,
                         host.driver.get_disk_leases().manager)
