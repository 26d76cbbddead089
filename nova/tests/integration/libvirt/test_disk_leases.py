"""Disk leases on real libvirtd + virtlockd + QEMU (libvirt 9.0, QEMU 7.2):
what each guard reports when a disk is in use elsewhere, and that the
driver's ``Guest`` turns both into ``DiskLeaseHeld`` naming the disk.

Two hosts share one directory, as two hosts share an NFS export; each runs
its own virtlockd (``lock_manager = "lockd"``, leases on the disk files
themselves). Observed with ``/proc/locks`` (virtlockd's fcntl lock on
byte 0 of the disk, QEMU's OFD locks) and ``/proc/<pid>/fd``:

* a guest runs on A: A's virtlockd holds the disk's lease, A's QEMU has
  it open; B's start of a second domain on it is refused by QEMU's own
  image lock (QEMU opens its images before libvirt takes the leases, when
  the vCPUs start): ``DiskLeaseHeld``, "another QEMU has it open";
* the lease survives a restart of A's libvirtd (it is virtlockd's);
* a lease held with nothing opening the file (what a virtlockd on another
  machine does to a file on NFS) refuses B's start at the vCPUs' start:
  ``DiskLeaseHeld``, "its lease is held";
* A's QEMU killed: its lease goes with it, and B's start works.
"""

import os
import signal
import subprocess
import sys
import time
import uuid

from nova import exception
from nova.testing import hypervisor
from nova.testing import procs
from nova.tests import base
from nova.tests.integration.libvirt import base as int_base
from nova.virt.libvirt import host as libvirt_host
from nova.virt.libvirt import lease_reach


def _locks(path, kind):
    return [lock for lock in procs.locks_on(path) if lock.kind == kind]


def _until_no_lease(path, timeout=10):
    """virtlockd drops a lease once it notices its QEMU's connection
    closed, a moment after the QEMU died."""
    deadline = time.monotonic() + timeout
    while _locks(path, 'POSIX') and time.monotonic() < deadline:
        time.sleep(procs.POLL)
    return _locks(path, 'POSIX')


class TestDiskLeases(base.TestCase):

    def setUp(self):
        super().setUp()
        reason = int_base.skip_reason()
        if reason:
            self.skipTest('no real libvirtd host here: ' + reason)
        self.shared = os.path.join(self.tmp, 'shared')
        os.makedirs(self.shared)
        self.a = self.start_host('a')
        self.b = self.start_host('b')
        self.disk = os.path.join(self.shared, 'disk.qcow2')
        int_base.create_blank_disk(self.disk, '16M')

    def start_host(self, name, lock_manager='lockd'):
        host = hypervisor.LibvirtHost(name, self.tmp,
                                      instances_path=self.shared,
                                      lock_manager=lock_manager)
        self.addCleanup(host.stop)
        host.start()
        return host

    def define(self, host, name):
        conn = libvirt_host.Host(host.uri, host.name)
        self.addCleanup(conn.close)
        return conn.define_guest(int_base.domain_xml(
            name, str(uuid.uuid4()), self.disk, memory_mib=32))

    def test_both_guards_and_the_lease_across_a_libvirtd_restart(self):
        guest_a = self.define(self.a, 'vm-a')
        guest_a.launch()
        [qemu_a] = self.a.qemu_pids()
        lease = _locks(self.disk, 'POSIX')
        print('locks on the disk with vm-a running: %s'
              % procs.locks_on(self.disk))
        self.assertEqual([(self.a.pids['virtlockd'], 'WRITE')],
                         [(lock.pid, lock.mode) for lock in lease])
        self.assertTrue(_locks(self.disk, 'OFDLCK'))    # QEMU's own
        self.assertIn(procs.file_id(self.disk), procs.open_files(qemu_a))

        self.a.restart_libvirtd()
        self.assertEqual(lease, _locks(self.disk, 'POSIX'))
        self.assertEqual([qemu_a], self.a.qemu_pids())

        guest_b = self.define(self.b, 'vm-b')
        with self.assertRaises(exception.DiskLeaseHeld) as caught:
            guest_b.launch(pause=True)
        print(caught.exception.format_message())
        self.assertEqual(self.disk, caught.exception.disk)
        self.assertIn('another QEMU has it open',
                      caught.exception.format_message())
        self.assertEqual([], self.b.qemu_pids())

        os.kill(qemu_a, signal.SIGKILL)
        procs.wait_gone([qemu_a], timeout=10)
        # The lease went with the QEMU that held it.
        self.assertEqual([], _until_no_lease(self.disk))
        guest_b.launch()
        self.assertTrue(guest_b.is_active())
        self.assertEqual([self.b.pids['virtlockd']],
                         [lock.pid for lock in _locks(self.disk, 'POSIX')])

    def test_a_lease_held_elsewhere_refuses_the_vcpus_start(self):
        # What a virtlockd of another machine holds on a file on NFS: an
        # fcntl lock on byte 0, nothing QEMU's image lock can see.
        holder = subprocess.Popen(
            [sys.executable, '-c',
             'import fcntl, sys\n'
             'f = open(sys.argv[1], "r+b")\n'
             'fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)\n'
             'print("held", flush=True)\n'
             'sys.stdin.read()\n', self.disk],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.addCleanup(holder.wait)
        self.addCleanup(holder.stdin.close)
        self.assertEqual(b'held\n', holder.stdout.readline())
        guest = self.define(self.b, 'vm-b')
        # Started paused, it runs: leases are taken when the vCPUs start.
        guest.launch(pause=True)
        with self.assertRaises(exception.DiskLeaseHeld) as caught:
            guest.resume()
        print(caught.exception.format_message())
        self.assertEqual(self.disk, caught.exception.disk)
        self.assertIn('its lease is held', caught.exception.format_message())
        self.assertIn("Lockspace resource '%s' is locked" % self.disk,
                      caught.exception.format_message())
        guest.poweroff()
        with self.assertRaises(exception.DiskLeaseHeld):
            guest.launch()
        self.assertEqual([], self.b.qemu_pids())
        holder.stdin.close()
        holder.wait(timeout=10)
        guest.launch()
        self.assertTrue(guest.is_active())

    def test_where_the_leases_reach_by_the_hosts_mount_table(self):
        # What nova-compute checks, read from a host's own namespace: on
        # the disk files in the shared directory the leases reach the
        # other host (the tests above prove it); in a lockspace under the
        # host's /var/lib/libvirt, a bind mount of a directory of its own,
        # each host would lease the same disk in its own lockspace.
        mountinfo = '/proc/%d/mountinfo' % self.a.ns_pid
        reach = lease_reach.check(self.shared, mountinfo=mountinfo)
        print(reach)
        self.assertTrue(reach.crosses)
        reach = lease_reach.check(self.shared, '/var/lib/libvirt/lockd',
                                  mountinfo)
        print(reach)
        self.assertFalse(reach.crosses)
        self.assertIn('file_lockspace_dir /var/lib/libvirt/lockd is on '
                      '/var/lib/libvirt (', reach.reason)
        # Inside the shared directory, a lockspace is on its storage.
        self.assertTrue(lease_reach.check(
            self.shared, os.path.join(self.shared, '.lockd'),
            mountinfo).crosses)

    def test_without_lockd_no_lease_is_taken(self):
        c = self.start_host('c', lock_manager=None)
        self.assertNotIn('virtlockd', c.pids)
        guest = self.define(c, 'vm-c')
        guest.launch()
        self.assertEqual([], _locks(self.disk, 'POSIX'))
        # QEMU's own image lock is all there is.
        self.assertTrue(_locks(self.disk, 'OFDLCK'))
