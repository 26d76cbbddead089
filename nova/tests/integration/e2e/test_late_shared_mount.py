"""Shared storage mounted after the compute service started, end to end.

Host A's nova-compute starts on its own, empty, local instances directory
and so creates a storage identity marker there (its first start). Then
the storage of host B is bind-mounted over A's ``instances_path``, inside
A's mount namespace only, as an NFS share that was mounted late: from now
on A and B share their instance storage, and only the marker read live
can tell. A must record B's identity with its next heartbeat
(``nova/compute/storage_report.py``), or every decision about shared
storage made from the service rows is wrong.

Then the evacuation path on that storage: an instance booted on A (its
disks on the shared storage), known data written into its disk from
outside, A fails; a first evacuation to B is killed (SIGKILL at
``start.waiting_for_vif_events``) and B's restart must undo it without
touching the disks it found; the retry boots the instance on B from the
very same disk file, and when A comes back its ``init_host`` must neither
delete nor quarantine the directory B now owns (B re-stamped it), only
remove its own domain and complete the migration. Nothing on the shared
storage may change meanwhile (sha256).
"""

import json
import os
import signal

from nova.tests.integration.e2e import base

A, B = 'compute1', 'compute2'
HASHED = ('disk', 'disk.info')
# Written into the guest's disk from outside, past the boot sector.
PATTERN, OFFSET, LENGTH = '0x5a', '768k', '64k'


class TestLateSharedMount(base.ClusterTestCase):

    cluster_hosts = 2

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # The host objects outlive down(), which empties cls.cluster.hosts:
        # _assert_nothing_left checks that down undid A's mount itself.
        cls.host_objects = dict(cls.cluster.hosts)

    @classmethod
    def _assert_nothing_left(cls):
        super()._assert_nothing_left()
        for name, host in getattr(cls, 'host_objects', {}).items():
            if host.entry.mounts:
                raise AssertionError('down left the mounts of %s: %s'
                                     % (name, host.entry.mounts))
        print('down unmounted every mount it recorded')

    def _marker(self, storage_dir):
        with open(os.path.join(storage_dir, '.nova-storage-identity')) as f:
            return f.read().strip()

    def _mount_late_and_check_identity(self):
        local_a = self.host_entry(A).storage_dir
        storage_b = self.host_entry(B).storage_dir
        local_identity = self._marker(local_a)
        shared_identity = self._marker(storage_b)
        self.assertNotEqual(local_identity, shared_identity)
        self.assertEqual(local_identity,
                         self.service_row(A)['storage_identity'])
        self.assertEqual(shared_identity,
                         self.service_row(B)['storage_identity'])

        self.cluster.mount_shared(A, B)
        self.assertEqual(storage_b, self.host_entry(A).storage_dir)
        # A sees B's storage at its instances_path now, B's marker there.
        self.assertEqual(shared_identity, self.host_command(
            A, 'cat', os.path.join(self.host_entry(A).instances_path,
                                   '.nova-storage-identity')).strip())
        # The heartbeat in flight when the mount appeared may have read
        # the old marker; the next one reads the new one: two heartbeats
        # after the mount, A's row must record the shared identity. (In
        # heartbeats, not seconds: tests never assert on time.)
        row = self.wait_for_heartbeats(A, 2)
        print('A after the mount: %s' % row)
        self.assertEqual(shared_identity, row['storage_identity'])
        self.assertFalse(row['disabled'], row)
        # The local marker is still there, under the mount, untouched.
        self.assertEqual(local_identity, self._marker(local_a))
        return shared_identity

    def _stamp(self, directory):
        with open(os.path.join(directory, '.nova-owner')) as f:
            return json.loads(f.read())

    def _known_data(self, disk_in_host, verb, *flags):
        """qemu-io on the disk, from inside B: the qcow2's backing file is
        named by its path inside the hosts (``_base`` under
        instances_path), so it runs where that path resolves."""
        return self.host_command(
            B, 'qemu-io', *flags, '-f', 'qcow2', '-c',
            '%s -P %s %s %s' % (verb, PATTERN, OFFSET, LENGTH),
            disk_in_host)

    def _evacuation_killed_on_shared_storage(self, uuid, directory, before):
        """A first evacuation to B, killed while B's guest waits paused
        for its network-vif-plugged event: undoing that attempt on shared
        storage must remove only what it made (its guest, its tap), never
        the disks it found there, and put A's stamp back."""
        point = 'start.waiting_for_vif_events'
        stamp = self._stamp(directory)
        self.cluster.restart_compute(B, crash_point=point)
        self.nova('evacuate', uuid, B)
        died = self.cluster.wait_for_compute_exit(B)
        self.assertEqual((-signal.SIGKILL, 'crash point', point),
                         (died['returncode'], died['cause'],
                          died['crash_point']), died)
        crashed = self.observe('B killed at %s' % point, uuid, [A, B])[B]
        self.assertEqual('paused', crashed.domain_of(uuid), crashed.text())
        self.cluster.restart_compute(B)
        server = self.wait_for_server(uuid, status='ERROR')
        self.assertEqual(A, server['OS-EXT-SRV-ATTR:host'])
        self.assertIn('interrupted', server['fault']['message'])
        self.wait_for_migration(uuid, 'failed')
        self.observe('B restarted', uuid, [A, B])
        self.assert_nothing_of(B, uuid, keep_files=True)
        self.assertEqual(before, base.sha256_files(directory, HASHED))
        self.assertEqual(stamp, self._stamp(directory))
        self.assertEqual([], self.storage_files(B, r'\.part-'))
        self.assertEqual([], self.quarantined(B, uuid))
        self.assert_ports_bound_to(uuid, A)

    def test_late_mount_is_recorded_and_evacuation_keeps_the_disks(self):
        shared_identity = self._mount_late_and_check_identity()

        (uuid,) = self.boot_on(A, ['late-mount'])
        self.wait_for_banners(A, uuid, 1)
        self.observe('booted on A', uuid, [A, B])
        self.assert_running_on(A, uuid)
        directory = self.instance_dir(A, uuid)
        self.assertEqual(directory, self.instance_dir(B, uuid))
        self.assertFalse(os.path.exists(os.path.join(
            self.cluster.layout.storage(A), uuid)),
            'the instance was built on A\'s local storage, under the mount')
        stamp = self._stamp(directory)
        self.assertEqual((A, shared_identity),
                         (stamp['host'], stamp['storage_identity']), stamp)
        disk_in_host = os.path.join(self.host_entry(A).instances_path, uuid,
                                    'disk')
        self.assertEqual([disk_in_host], self.domain_disks(A, uuid))

        self.fail_host(A, force_down=True)
        # The known data goes in once A's QEMU is dead: while a guest runs,
        # QEMU holds the image's write lock (qemu-io is refused) and its
        # own cache; the guest never writes its disk (it halts after its
        # banner), so from here on the file changes only if a host
        # changes it, and B's QEMU opening it does not: the sha256 taken
        # now must hold through the evacuation and A's return.
        self._known_data(disk_in_host, 'write')
        before = base.sha256_files(directory, HASHED)
        inode = os.stat(os.path.join(directory, 'disk')).st_ino
        self.assertEqual(set(HASHED), set(before))
        print('sha256 on the shared storage: %s' % before)

        self._evacuation_killed_on_shared_storage(uuid, directory, before)

        self.nova('evacuate', uuid, B)
        self.wait_for_server(uuid, status='ACTIVE', host=B)
        self.wait_for_migration(uuid, 'done')
        # A second boot banner in the one console.log: B's guest booted
        # from the disk A's guest booted from.
        self.wait_for_banners(B, uuid, 2)
        self.observe('evacuated to B', uuid, [A, B])
        self.assert_running_on(B, uuid)
        self.assertEqual([disk_in_host], self.domain_disks(B, uuid))
        self.assertEqual(inode, os.stat(os.path.join(directory,
                                                     'disk')).st_ino)
        self.assertEqual(before, base.sha256_files(directory, HASHED))
        # -U: B's QEMU holds the image; reading alongside it is safe.
        self.assertIn('read %s/%s bytes' % (64 * 1024, 64 * 1024),
                      self._known_data(disk_in_host, 'read', '-U', '-r'))
        self.assertEqual(B, self._stamp(directory)['host'])
        self.assert_ports_bound_to(uuid, B)

        self.revive_host(A)
        self.wait_for_migration(uuid, 'completed')
        self.observe('after A came back', uuid, [A, B])
        self.assert_nothing_of(A, uuid, keep_files=True)
        self.assert_running_on(B, uuid)
        # Nothing deleted, nothing moved aside, nothing rewritten; the
        # guest on B was not restarted (still two banners).
        self.assertEqual(before, base.sha256_files(directory, HASHED))
        self.assertEqual(inode, os.stat(os.path.join(directory,
                                                     'disk')).st_ino)
        self.assertEqual([], self.quarantined(A, uuid))
        self.assertEqual([], self.quarantined(B, uuid))
        self.assertFalse(os.path.exists(os.path.join(
            self.cluster.layout.storage(A), '_quarantine')))
        self.assertEqual(2, self.console_banners(B, uuid))
        server = self.wait_for_server(uuid, status='ACTIVE', host=B)
        self.assertEqual(B, server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(shared_identity,
                         self.service_row(A)['storage_identity'])
        self.assert_ports_bound_to(uuid, B)
        self.nova('delete', uuid)
