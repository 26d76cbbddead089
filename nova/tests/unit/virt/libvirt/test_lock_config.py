"""Which disk leases libvirt's configuration gives, read as libvirtd does,
and whether lockd's reach the other hosts, by the mount table."""

import os

from nova.tests import base
from nova.tests.fixtures import libvirt_host as fixtures
from nova.virt.libvirt import lease_reach
from nova.virt.libvirt import lock_config
from nova.virt import mounts

INSTANCES = '/var/lib/nova/instances'
LOCKSPACE = '/var/lib/libvirt/lockd/files'

# Lines of /proc/self/mountinfo as the kernel writes them (Debian 12,
# kernel 6.1): the root file system, proc, and instances_path on NFS
# mounted in several ways. NFS shows its options in the super options,
# the last field.
ROOT = ('22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/mapper/vg-root '
        'rw,errors=remount-ro\n'
        '25 22 0:23 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - '
        'proc proc rw\n')
NFS4 = ('97 22 0:52 / /var/lib/nova/instances rw,relatime shared:60 - '
        'nfs4 10.0.0.5:/nova rw,vers=4.2,rsize=1048576,wsize=1048576,'
        'namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,'
        'clientaddr=10.0.0.21,local_lock=none,addr=10.0.0.5\n')
# mount -o vers=3,local_lock=all
NFS3_LOCAL_LOCK_ALL = (
    '97 22 0:52 / /var/lib/nova/instances rw,relatime shared:60 - nfs '
    '10.0.0.5:/srv/nova rw,vers=3,rsize=1048576,wsize=1048576,namlen=255,'
    'hard,proto=tcp,timeo=600,retrans=2,sec=sys,mountaddr=10.0.0.5,'
    'mountvers=3,mountport=20048,mountproto=udp,local_lock=all,'
    'addr=10.0.0.5\n')
# mount -o vers=3,nolock (the kernel shows local_lock=all with it).
NFS3_NOLOCK = (
    '97 22 0:52 / /var/lib/nova/instances rw,relatime shared:60 - nfs '
    '10.0.0.5:/srv/nova rw,vers=3,rsize=1048576,wsize=1048576,namlen=255,'
    'hard,nolock,proto=tcp,timeo=600,retrans=2,sec=sys,mountaddr=10.0.0.5,'
    'mountvers=3,mountport=20048,mountproto=udp,local_lock=all,'
    'addr=10.0.0.5\n')
# The export mounted at /srv/nfs, its instances directory bind-mounted at
# instances_path (mount --bind /srv/nfs/instances /var/lib/nova/instances).
NFS4_BIND = (
    '90 22 0:52 / /srv/nfs rw,relatime shared:60 - nfs4 10.0.0.5:/export '
    'rw,vers=4.2,hard,proto=tcp,sec=sys,local_lock=none,addr=10.0.0.5\n'
    '91 22 0:52 /instances /var/lib/nova/instances rw,relatime shared:60 - '
    'nfs4 10.0.0.5:/export rw,vers=4.2,hard,proto=tcp,sec=sys,'
    'local_lock=none,addr=10.0.0.5\n')
# Two paths of one export mounted separately: the kernel may give them one
# device (one superblock) and show "/" as the root of both.
NFS4_TWO_PATHS = (
    '90 22 0:52 / /srv/nfs rw,relatime shared:60 - nfs4 10.0.0.5:/export '
    'rw,vers=4.2,hard,proto=tcp,sec=sys,local_lock=none,addr=10.0.0.5\n'
    '91 22 0:52 / /var/lib/nova/instances rw,relatime shared:61 - nfs4 '
    '10.0.0.5:/export/instances rw,vers=4.2,hard,proto=tcp,sec=sys,'
    'local_lock=none,addr=10.0.0.5\n')
# A host of the test cluster (nova/testing/cluster/host.py): per-host
# directories of one file system bind-mounted over /var/lib/libvirt and
# over instances_path, in the host's mount namespace.
HARNESS = (
    '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n'
    '1021 27 254:0 /tmp/cluster/hosts/compute1/lib/libvirt '
    '/var/lib/libvirt rw,relatime - ext4 /dev/vda rw,discard\n'
    '1030 27 254:0 /tmp/cluster/storage/shared-a /var/lib/nova/instances '
    'rw,relatime - ext4 /dev/vda rw,discard\n')


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


class TestLeaseReach(base.TestCase):
    """lockd's leases count only where the mount table says they reach
    other hosts (lease_reach.py), read through lock_config as the driver
    reads them."""

    def setUp(self):
        super().setUp()
        self.conf = os.path.join(self.tmp, 'etc-libvirt')
        os.makedirs(self.conf)
        self.write('qemu.conf', 'lock_manager = "lockd"\n')
        self.mountinfo = os.path.join(self.tmp, 'mountinfo')

    def write(self, name, text):
        with open(os.path.join(self.conf, name), 'w') as f:
            f.write(text)

    def read(self, table, lockspace=None, instances=INSTANCES):
        self.write('qemu-lockd.conf', 'file_lockspace_dir = "%s"\n'
                   % lockspace if lockspace else '')
        with open(self.mountinfo, 'w') as f:
            f.write(table)
        return lock_config.read(self.conf, instances, self.mountinfo)

    def assert_none(self, leases, *words):
        self.assertEqual((lock_config.NONE, False),
                         (leases.manager, leases.protected))
        for word in words:
            self.assertIn(word, leases.reason)
        self.assertIn(leases.reason, leases.detail)
        self.assertTrue(leases.detail.startswith('lock_manager = "lockd"'))

    def assert_lockd(self, leases, *words):
        self.assertEqual((lock_config.LOCKD, True, None),
                         (leases.manager, leases.protected, leases.reason))
        for word in words:
            self.assertIn(word, leases.detail)

    def test_nfs_with_local_lock_all_keeps_the_leases_here(self):
        leases = self.read(ROOT + NFS3_LOCAL_LOCK_ALL)
        self.assert_none(leases)
        self.assertEqual(
            'the disk files under instances_path /var/lib/nova/instances '
            'are on /var/lib/nova/instances (nfs 10.0.0.5:/srv/nova), '
            'mounted with local_lock=all: the fcntl() locks virtlockd '
            'takes there stay on this host, so leases do not cross hosts',
            leases.reason)

    def test_nfs_with_nolock_keeps_the_leases_here(self):
        self.assert_none(self.read(ROOT + NFS3_NOLOCK), 'with nolock',
                         '10.0.0.5:/srv/nova')

    def test_local_lock_posix_in_either_options_field(self):
        # The kernel shows NFS's options in the super options; the mount's
        # own field is read too.
        posix = NFS4.replace('local_lock=none', 'local_lock=posix')
        self.assert_none(self.read(ROOT + posix), 'local_lock=posix')
        own = NFS4.replace('rw,relatime shared:60',
                           'rw,relatime,local_lock=posix shared:60')
        self.assert_none(self.read(ROOT + own), 'local_lock=posix')
        # local_lock=flock concerns flock() only, not virtlockd's fcntl().
        flock = NFS4.replace('local_lock=none', 'local_lock=flock')
        self.assert_lockd(self.read(ROOT + flock))

    def test_healthy_nfs4_keeps_lockd(self):
        self.assert_lockd(
            self.read(ROOT + NFS4),
            'on the disk files themselves (the disk files under '
            'instances_path /var/lib/nova/instances are on '
            '/var/lib/nova/instances (nfs4 10.0.0.5:/nova))')

    def test_a_lockspace_on_the_root_disk_does_not_cross_hosts(self):
        leases = self.read(ROOT + NFS4, lockspace=LOCKSPACE)
        self.assert_none(leases)
        self.assertEqual(
            'file_lockspace_dir /var/lib/libvirt/lockd/files is on / (ext4 '
            '/dev/mapper/vg-root), not on the storage of instances_path '
            '/var/lib/nova/instances, which is on /var/lib/nova/instances '
            '(nfs4 10.0.0.5:/nova): leases taken there do not cross hosts',
            leases.reason)

    def test_a_lockspace_inside_instances_path(self):
        inside = INSTANCES + '/.lockd'
        self.assert_lockd(self.read(ROOT + NFS4, lockspace=inside),
                          'file_lockspace_dir %s is on' % inside)
        # There, the NFS options decide, naming the lockspace.
        self.assert_none(self.read(ROOT + NFS3_LOCAL_LOCK_ALL,
                                   lockspace=inside),
                         'file_lockspace_dir %s is on' % inside,
                         'local_lock=all')

    def test_bind_mounts_and_second_mounts_of_one_export(self):
        # Through instances_path's own mount: shared.
        self.assert_lockd(self.read(ROOT + NFS4_BIND,
                                    lockspace=INSTANCES + '/.lockd'))
        # Through another mount showing another directory of the export
        # (the bind mount's root is /instances, this one's /): nothing
        # says which directory that path is on the other hosts.
        for lockspace in ('/srv/nfs/lockd', '/srv/nfs/instances/.lockd'):
            self.assert_none(self.read(ROOT + NFS4_BIND,
                                       lockspace=lockspace),
                             'is on /srv/nfs (nfs4 10.0.0.5:/export), not '
                             'on the storage of instances_path')
        # The export mounted twice shows one tree at two places: shared.
        twice = NFS4_BIND.replace('91 22 0:52 /instances', '91 22 0:52 /')
        self.assert_lockd(self.read(ROOT + twice,
                                    lockspace='/srv/nfs/lockd'),
                          'file_lockspace_dir /srv/nfs/lockd is on /srv/nfs')
        # Two mounts of different paths of one export may share a device
        # and both show "/" as their root: not taken as one storage.
        self.assert_none(self.read(ROOT + NFS4_TWO_PATHS,
                                   lockspace='/srv/nfs/lockd'),
                         'not on the storage of instances_path',
                         'nothing shows that the hosts sharing the disks '
                         'see the leases taken there')

    def test_a_per_host_lockspace_on_bind_mounts_of_one_disk(self):
        # The cluster harness's layout: one file system, but the lockspace
        # directory is the host's own.
        self.assert_none(self.read(HARNESS,
                                   lockspace='/var/lib/libvirt/lockd'),
                         'is on /var/lib/libvirt (ext4 /dev/vda)')
        # On the disk files (what the harness configures): they are on
        # the storage the hosts share.
        self.assert_lockd(self.read(HARNESS))

    def test_an_unreadable_mount_table_is_unknown(self):
        os.mkdir(self.mountinfo)
        leases = lock_config.read(self.conf, INSTANCES, self.mountinfo)
        self.assertEqual((None, None), (leases.manager, leases.protected))
        self.assertIn('cannot read %s' % self.mountinfo, leases.reason)
        self.assertIn('unknown', leases.reason)

    def test_a_path_no_mount_holds_is_unknown(self):
        # No root file system listed (a chroot shows only what is in it).
        proc = ROOT.splitlines(True)[1]
        leases = self.read(proc)
        self.assertIsNone(leases.manager)
        self.assertIn('no mount in %s holds instances_path' % self.mountinfo,
                      leases.reason)
        leases = self.read(proc + NFS4, lockspace=LOCKSPACE)
        self.assertIsNone(leases.manager)
        self.assertIn('holds file_lockspace_dir', leases.reason)

    def test_paths_are_resolved_first(self):
        # A lockspace reached through a symlink is where the link leads.
        link = os.path.join(self.tmp, 'lockspace-link')
        os.symlink(INSTANCES + '/.lockd', link)
        self.assert_lockd(self.read(ROOT + NFS4_BIND, lockspace=link))
        os.unlink(link)
        os.symlink(LOCKSPACE, link)
        self.assert_none(self.read(ROOT + NFS4_BIND, lockspace=link),
                         LOCKSPACE)

    def test_only_lockd_is_checked_and_only_with_instances_path(self):
        with open(self.mountinfo, 'w') as f:
            f.write(ROOT + NFS3_LOCAL_LOCK_ALL)
        self.write('qemu-lockd.conf', '')
        self.assertEqual(lock_config.LOCKD,
                         lock_config.read(self.conf).manager)
        self.write('qemu.conf', 'lock_manager = "sanlock"\n')
        self.write('qemu-sanlock.conf', 'auto_disk_leases = 1\n')
        self.assertEqual(lock_config.SANLOCK, lock_config.read(
            self.conf, INSTANCES, self.mountinfo).manager)

    def test_the_verdict_alone(self):
        table = mounts.parse(ROOT + NFS4)
        self.assertEqual(lease_reach.Reach(
            True, 'the disk files under instances_path '
                  '/var/lib/nova/instances are on /var/lib/nova/instances '
                  '(nfs4 10.0.0.5:/nova)'),
            lease_reach.verify(table, INSTANCES))
        self.assertFalse(lease_reach.verify(table, INSTANCES,
                                            LOCKSPACE).crosses)


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

    def test_the_driver_checks_the_real_mounts(self):
        # This process's own mount table: a lockspace on another mount
        # than instances_path (in the test's directory) counts as none.
        table = mounts.read()
        ours = mounts.containing(table, os.path.realpath(self.tmp))
        other = next((p for p in ('/dev/shm', '/run', '/proc', '/sys')
                      if mounts.containing(table, p) not in (None, ours)),
                     None)
        if other is None:
            self.skipTest('no mount here but the one of %s' % self.tmp)
        config_dir = os.path.join(self.tmp, 'etc-libvirt')
        os.makedirs(config_dir)
        with open(os.path.join(config_dir, 'qemu.conf'), 'w') as f:
            f.write('lock_manager = "lockd"\n')
        lockspace = os.path.join(other, 'nova-test-lockspace')
        with open(os.path.join(config_dir, 'qemu-lockd.conf'), 'w') as f:
            f.write('file_lockspace_dir = "%s"\n' % lockspace)
        host = fixtures.make_host(self.tmp, 'compute1',
                                  libvirt_config_dir=config_dir)
        self.addCleanup(host.close)
        leases = host.driver.get_disk_leases()
        self.assertEqual(lock_config.NONE, leases.manager)
        self.assertIn('file_lockspace_dir %s is on %s' % (
            lockspace, mounts.containing(table, lockspace).describe()),
            leases.reason)
        self.assertIn(host.settings.instances_path, leases.reason)
        self.assertFalse(os.path.exists(lockspace))
