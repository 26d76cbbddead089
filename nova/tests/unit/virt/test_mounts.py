"""The mount table, parsed, and the mount a path is on."""

import os

from nova.tests import base
from nova.virt import mounts

# A host's table as the kernel writes it: optional fields, a bind mount of
# a subdirectory, NFS with its options in the super options, a path with
# a space.
TABLE = """\
22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/mapper/vg-root rw
25 22 0:23 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
90 22 0:52 / /srv/nfs rw,relatime shared:60 - nfs4 10.0.0.5:/export \
rw,vers=4.2,hard,proto=tcp,sec=sys,local_lock=none,addr=10.0.0.5
91 22 0:52 /instances /var/lib/nova/instances rw,relatime shared:60 - \
nfs4 10.0.0.5:/export rw,vers=4.2,hard,proto=tcp,local_lock=none
92 22 253:0 /srv/my\\040data /mnt/my\\040data rw - ext4 /dev/mapper/vg-root rw
"""


class TestParse(base.TestCase):

    def test_every_field(self):
        table = mounts.parse(TABLE + 'not a mountinfo line\n')
        self.assertEqual(5, len(table))
        bind = table[3]
        self.assertEqual(
            mounts.Mount(mount_id=91, parent_id=22, device='0:52',
                         root='/instances',
                         mount_point='/var/lib/nova/instances',
                         options=('rw', 'relatime'), fs_type='nfs4',
                         source='10.0.0.5:/export',
                         super_options=('rw', 'vers=4.2', 'hard',
                                        'proto=tcp', 'local_lock=none')),
            bind)
        self.assertTrue(bind.has_option('local_lock=none'))
        self.assertTrue(bind.has_option('relatime'))
        self.assertFalse(bind.has_option('nolock'))
        self.assertEqual(('/srv/my data', '/mnt/my data'),
                         (table[4].root, table[4].mount_point))

    def test_read_a_file_and_this_process_table(self):
        path = os.path.join(self.tmp, 'mountinfo')
        with open(path, 'w') as f:
            f.write(TABLE)
        self.assertEqual(mounts.parse(TABLE), mounts.read(path))
        # The kernel's own, read as it is: / is always there.
        self.assertIn('/', [m.mount_point for m in mounts.read()])
        self.assertRaises(OSError, mounts.read, self.tmp)


class TestContaining(base.TestCase):

    def containing(self, text, path):
        mount = mounts.containing(mounts.parse(text), path)
        return None if mount is None else mount.mount_id

    def test_the_longest_mount_point_above_the_path(self):
        self.assertEqual(91, self.containing(
            TABLE, '/var/lib/nova/instances/i1/disk'))
        self.assertEqual(91, self.containing(TABLE,
                                             '/var/lib/nova/instances'))
        # A prefix of the name is not a directory above it.
        self.assertEqual(22, self.containing(TABLE,
                                             '/var/lib/nova/instances2'))
        self.assertEqual(90, self.containing(TABLE, '/srv/nfs/lockd'))
        self.assertEqual(22, self.containing(TABLE, '/var/lib/libvirt'))
        self.assertEqual(92, self.containing(TABLE, '/mnt/my data/x'))
        self.assertIsNone(self.containing('', '/var'))

    def test_a_later_mount_on_the_same_point_covers_the_first(self):
        # NFS mounted over instances_path after the host booted (a late
        # mount): the disks are on the NFS mount from then on.
        stacked = TABLE + ('93 91 0:60 / /var/lib/nova/instances rw - '
                           'nfs 10.0.0.6:/other rw,vers=3,local_lock=all\n')
        self.assertEqual(93, self.containing(
            stacked, '/var/lib/nova/instances/i1'))

    def test_a_mount_hidden_by_a_later_one_above_it_does_not_count(self):
        # /srv/nfs/instances mounted, then something else on /srv/nfs
        # (on top of the NFS mount there: its child): the first no longer
        # shows; its mount point is in the new mount.
        hidden = TABLE + (
            '94 90 0:61 / /srv/nfs/instances rw - nfs4 10.0.0.7:/x rw\n'
            '95 90 0:62 / /srv/nfs rw - tmpfs tmpfs rw\n')
        self.assertEqual(95, self.containing(hidden,
                                             '/srv/nfs/instances/i1'))
        # A mount below its own ancestor is not hidden by it, whatever
        # the order of the lines (a moved mount keeps its place).
        moved = ('96 95 0:63 / /srv/nfs/instances rw - nfs4 10.0.0.7:/x rw\n'
                 + hidden)
        self.assertEqual(96, self.containing(moved,
                                             '/srv/nfs/instances/i1'))
