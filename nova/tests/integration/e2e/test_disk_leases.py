"""Two hosts never run one disk, end to end: libvirt's lock manager on
every host, partitions, and a returning host that stops what it no longer
owns (doc/source/cleanup.rst, "Fencing").

compute1 and compute2 share their instance storage (one directory,
standing in for NFS); compute3 has its own. Every host runs virtlockd
(``lock_manager = "lockd"``), which leases each disk a domain uses, on
the disk file itself. A *partitioned* host (``tools/cluster partition``:
its nova-compute stopped, its libvirtd, virtlockd and QEMU running) reads
as down to the control plane while its guests run on.

Throughout every test, ``watch_disks`` checks in every host's namespace
(``/proc/<pid>/fd`` of every QEMU, by inode) that no disk is ever open in
two QEMU processes; leases are read from ``/proc/locks`` (virtlockd's
fcntl lock on the disk), domains with ``virsh``.

* shared storage: the source is partitioned with its guest running and
  forced down; an evacuation to its peer is refused ("disk in use by
  another host: fence compute1 first"), the disks byte-identical, the
  source's guest still running; heal: nothing changes; the source fails
  (its QEMU killed): the evacuation works, booted from the same disks;
* private storage: the source is partitioned, the evacuation works; heal:
  the returning source's reaper powers its copy off and quarantines it
  (``reap_orphans_interval`` is short here), the new owner's guest is
  untouched;
* a domain unknown to nova runs on compute1 on the disks of a stopped
  instance of compute2: its lease survives a restart of compute1's
  libvirtd, and start and hard reboot of the instance are refused with
  the disks kept, until that domain is gone.
"""

import os
import subprocess
import uuid as uuid_mod

from nova.testing import hypervisor
from nova.tests.integration.e2e import base

A, B, C = 'compute1', 'compute2', 'compute3'
HASHED = ('disk', 'disk.info')
FENCE_A = 'disk in use by another host: fence %s first' % A


class TestDiskLeases(base.ClusterTestCase):

    cluster_hosts = 3
    shared_groups = ((A, B),)
    # A healed host stops what was evacuated away within one run.
    reap_orphans_interval = 5

    def setUp(self):
        super().setUp()
        self.watch_disks()

    # -- helpers -----------------------------------------------------------

    def disk(self, host, uuid):
        """(the disk seen from outside, the path inside the hosts)."""
        return (os.path.join(self.instance_dir(host, uuid), 'disk'),
                os.path.join(self.host_entry(host).instances_path, uuid,
                             'disk'))

    def qemu_of(self, host, uuid):
        return self.cluster.host(host).hypervisor.qemu_pid(
            'instance-' + uuid)

    def fault_message(self, uuid):
        return (self.server(uuid).get('fault') or {}).get('message', '')

    def assert_refusal_recorded(self, uuid, action, fault=True):
        """The refusal says whom to fence: in the action's event (``nova
        instance-action``) and, when the operation records one, in the
        fault (``nova show``)."""
        events = self.action_events(uuid, action)
        print('events of %s: %s' % (action, events))
        failed = [e for e in events if e.get('result') == 'Error']
        self.assertTrue(failed, events)
        # The event's traceback ends with the exception's message.
        said = (failed[-1].get('details') or failed[-1].get(
            'traceback') or '').strip().splitlines()[-1]
        self.assertIn(FENCE_A, said)
        listing = self.nova('instance-action-list', uuid)
        self.assertIn(action, listing)
        if fault:
            message = self.fault_message(uuid)
            self.assertTrue(message.startswith(FENCE_A), message)

    def start_intruder(self, host, disk_in_host):
        """A domain nova never heard of, on ``host``, using that disk."""
        name = 'intruder-%s' % uuid_mod.uuid4().hex[:8]
        xml = os.path.join(self.tmp, name + '.xml')
        with open(xml, 'w') as f:
            f.write(hypervisor.domain_xml(name, uuid_mod.uuid4(),
                                          disk_in_host, memory_mib=32))
        uri = self.host_entry(host).libvirt_uri
        self.addCleanup(self._remove_intruder, host, name)
        self.run_virsh(uri, 'define', xml)
        self.run_virsh(uri, 'start', name)
        return name

    def _remove_intruder(self, host, name):
        uri = self.host_entry(host).libvirt_uri
        if name in (self.domains(host) or {}):
            self.run_virsh(uri, 'destroy', name, check=False)
            self.run_virsh(uri, 'undefine', name, check=False)

    def run_virsh(self, uri, *args, check=True):
        result = subprocess.run(['virsh', '-c', uri] + list(args),
                                capture_output=True, text=True, timeout=60)
        print('$ virsh %s -> %d\n%s%s' % (' '.join(args), result.returncode,
                                          result.stdout, result.stderr))
        if check:
            self.assertEqual(0, result.returncode, result.stderr)
        return result

    # -- the tests ---------------------------------------------------------

    def test_held_disk_refuses_start_and_hard_reboot(self):
        (uuid,) = self.boot_on(B, ['held-disk'])
        self.wait_for_banners(B, uuid, 1)
        disk, disk_in_host = self.disk(B, uuid)
        self.assertEqual([B], self.lease_holders(disk))
        self.nova('stop', uuid)
        self.wait_for_server(uuid, status='SHUTOFF', host=B)
        self.assertEqual([], self.lease_holders(disk))
        directory = self.instance_dir(B, uuid)
        before = base.sha256_files(directory, HASHED)

        intruder = self.start_intruder(A, disk_in_host)
        [(host, intruder_pid)] = self.qemu_with_open(disk)
        self.assertEqual(A, host)
        self.assertEqual([A], self.lease_holders(disk))
        # The lease is virtlockd's, not libvirtd's: it survives libvirtd.
        virtlockd = self.host_entry(A).processes['virtlockd']
        self.cluster.restart_libvirtd(A)
        self.assertEqual(virtlockd, self.host_entry(A).processes['virtlockd'])
        self.assertEqual([A], self.lease_holders(disk))
        self.assertEqual([(A, intruder_pid)], self.qemu_with_open(disk))
        self.assertEqual('running', self.domains(A)[intruder])

        self.nova('start', uuid)
        self.wait_for_server(uuid, status='SHUTOFF', host=B)
        # A failed start leaves the instance stopped and records no fault
        # (doc/source/cleanup.rst): its action event says why.
        self.assert_refusal_recorded(uuid, 'start', fault=False)
        self.assertIsNone(self.qemu_of(B, uuid))

        self.nova('reboot', '--hard', uuid)
        self.wait_for_server(uuid, status='ERROR', host=B)
        self.assert_refusal_recorded(uuid, 'reboot')
        self.observe('start and hard reboot refused', uuid, [A, B])
        self.assertIsNone(self.qemu_of(B, uuid))
        self.assertEqual([(A, intruder_pid)], self.qemu_with_open(disk))
        self.assertEqual(before, base.sha256_files(directory, HASHED))

        self._remove_intruder(A, intruder)
        self.assertEqual([], self.qemu_with_open(disk))
        self.nova('reboot', '--hard', uuid)
        # From ERROR: until its task ends, then ACTIVE.
        self.assertEqual('ACTIVE', self.wait_for_server(uuid)['status'])
        self.wait_for_banners(B, uuid, 2)
        self.assert_running_on(B, uuid)
        self.assertEqual([B], self.lease_holders(disk))
        self.assertEqual(before, base.sha256_files(directory, HASHED))
        self.nova('delete', uuid)
        self.wait_for_gone(uuid)

    def test_shared_storage_partitioned_source_keeps_its_disks(self):
        (uuid,) = self.boot_on(A, ['partitioned-shared'])
        self.wait_for_banners(A, uuid, 1)
        disk, disk_in_host = self.disk(A, uuid)
        directory = self.instance_dir(A, uuid)
        self.assertEqual(directory, self.instance_dir(B, uuid))
        qemu_a = self.qemu_of(A, uuid)
        self.assertEqual([(A, qemu_a)], self.qemu_with_open(disk))
        self.assertEqual([A], self.lease_holders(disk))
        before = base.sha256_files(directory, HASHED)
        inode = os.stat(disk).st_ino

        self.partition_host(A, force_down=True)
        self.nova('evacuate', uuid, B)
        server = self.wait_for_server(uuid, status='ERROR')
        self.assertEqual(A, server['OS-EXT-SRV-ATTR:host'])
        self.wait_for_migration(uuid, 'failed')
        self.observe('evacuation refused', uuid, [A, B])
        self.assert_refusal_recorded(uuid, 'evacuate')
        self.assertEqual(before, base.sha256_files(directory, HASHED))
        self.assert_nothing_of(B, uuid, keep_files=True)
        # The source's guest runs on, untouched, and still holds its lease.
        self.assertEqual(qemu_a, self.qemu_of(A, uuid))
        self.assertEqual('running', self.view(A, uuid).domain_of(uuid))
        self.assertEqual([(A, qemu_a)], self.qemu_with_open(disk))
        self.assertEqual([A], self.lease_holders(disk))
        self.assertEqual(1, self.console_banners(A, uuid))

        # Heal: the source comes back without a restart. Its reaper runs
        # (at least once after the heal) and changes nothing: the
        # evacuation failed, the instance is still its own.
        offset = self.heal_host(A)
        self.wait_for_log(A, 'Reaper on %s' % A, offset)
        self.wait_for_log(A, 'Reaper on %s' % A,
                          os.path.getsize(self.host_entry(A).log_file))
        self.observe('after the heal', uuid, [A, B])
        self.assertEqual(qemu_a, self.qemu_of(A, uuid))
        self.assertEqual('failed', self.migrations(uuid)[-1]['status'])
        self.assertEqual(A, self.server(uuid)['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(before, base.sha256_files(directory, HASHED))
        self.assert_nothing_of(B, uuid, keep_files=True)

        # Now the source really dies: its QEMU and its lease go.
        self.fail_host(A)
        self.assertEqual([], self.lease_holders(disk))
        self.assertEqual([], self.qemu_with_open(disk))
        self.nova('evacuate', uuid, B)
        self.wait_for_server(uuid, status='ACTIVE', host=B)
        self.wait_for_migration(uuid, 'done')
        self.wait_for_banners(B, uuid, 2)
        self.observe('evacuated once the source was dead', uuid, [A, B])
        self.assert_running_on(B, uuid)
        self.assertEqual([disk_in_host], self.domain_disks(B, uuid))
        self.assertEqual(inode, os.stat(disk).st_ino)
        self.assertEqual(before, base.sha256_files(directory, HASHED))
        self.assertEqual([B], self.lease_holders(disk))
        self.assertEqual([(B, self.qemu_of(B, uuid))],
                         self.qemu_with_open(disk))

        self.revive_host(A)
        self.wait_for_migration(uuid, 'completed')
        self.assert_nothing_of(A, uuid, keep_files=True)
        self.assert_running_on(B, uuid)
        self.assertEqual(before, base.sha256_files(directory, HASHED))
        self.nova('delete', uuid)
        self.wait_for_gone(uuid)

    def test_private_storage_healed_source_stops_its_copy(self):
        (uuid,) = self.boot_on(C, ['partitioned-private'])
        self.wait_for_banners(C, uuid, 1)
        disk_c, _ = self.disk(C, uuid)
        self.assertEqual([C], self.lease_holders(disk_c))

        self.partition_host(C, force_down=True)
        try:
            self.nova('evacuate', uuid, A)
            self.wait_for_server(uuid, status='ACTIVE', host=A)
            self.wait_for_migration(uuid, 'done')
            self.wait_for_banners(A, uuid, 1)
            disk_a, _ = self.disk(A, uuid)
            qemu_a = self.qemu_of(A, uuid)
            # Two guests of one instance, each on its own copy: what a
            # partition leaves on private storage until the source is
            # back.
            self.observe('evacuated while the source runs on', uuid, [A, C])
            self.assertEqual('running', self.view(C, uuid).domain_of(uuid))
            self.assertNotEqual(os.stat(disk_a).st_ino,
                                os.stat(disk_c).st_ino)
            a_files = base.sha256_files(self.instance_dir(A, uuid),
                                        HASHED)

            self.heal_host(C)
            # The healed source's reaper (reap_orphans_interval) does the
            # source-side cleanup: its guest off and undefined, its copy
            # quarantined, the migration completed.
            self.wait_for_migration(uuid, 'completed', timeout=90)
        finally:
            self.force_down(C, False)
        self.observe('after the heal', uuid, [A, C])
        self.assert_nothing_of_on_busy_host(C, uuid)
        self.assertEqual(1, len(self.quarantined(C, uuid)))
        self.assertFalse(os.path.exists(disk_c))
        # The new owner's guest is untouched.
        self.assertEqual(qemu_a, self.qemu_of(A, uuid))
        self.assert_running_on(A, uuid)
        self.assertEqual(1, self.console_banners(A, uuid))
        self.assertEqual(a_files, base.sha256_files(
            self.instance_dir(A, uuid), HASHED))
        self.assertEqual([A], self.lease_holders(disk_a))
        server = self.server(uuid)
        self.assertEqual((A, 'ACTIVE'), (server['OS-EXT-SRV-ATTR:host'],
                                         server['status']))
        self.nova('delete', uuid)
        self.wait_for_gone(uuid)

    def test_every_host_reports_its_leases(self):
        leases = self.api.get('/os-disk-leases')['disk_leases']
        self.assertEqual({A: 'lockd', B: 'lockd', C: 'lockd'},
                         {e['host']: e['disk_leases'] for e in leases})
        self.wait_for_log(A, 'Disk leases on %s: lock_manager = "lockd"'
                          % A)
        # Checked against the host's own mount table (its namespace): the
        # leases are on the disk files, on the storage mounted at
        # instances_path, which is what the hosts share (lease_reach.py).
        path = self.host_entry(A).instances_path
        self.wait_for_log(A, 'on the disk files themselves (the disk files '
                             'under instances_path %s are on %s ('
                          % (path, path))
