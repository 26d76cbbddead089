"""The real-host harness itself (nova/testing/hypervisor.py), proved on
real libvirtd + QEMU: two hosts at once, isolation, crash, restart, and
that stopping leaves no process, mount or namespace behind.

Domains are made with libvirt-python directly, not with the driver.
"""

import glob
import os
import subprocess
import sys
import threading
import unittest
import uuid

from nova.virt.libvirt.binding import libvirt

from nova.testing import hostrecord
from nova.testing import hypervisor
from nova.testing import procs
from nova.tests import base
from nova.tests.integration.libvirt import base as int_base


_TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(hypervisor.__file__))))


def _mounts_mentioning(path):
    with open('/proc/self/mountinfo') as f:
        return [line for line in f if path in line]


def _start_domain(host, name, dom_uuid=None):
    dom_uuid = dom_uuid or str(uuid.uuid4())
    disk = os.path.join(host.instances_path, name + '.qcow2')
    int_base.create_blank_disk(disk)
    conn = libvirt.open(host.uri)
    try:
        dom = conn.defineXML(int_base.domain_xml(name, dom_uuid, disk))
        dom.create()
        return dom.state()[0]
    finally:
        conn.close()


def _domains(host):
    """{name: state} of every domain the host's libvirtd knows."""
    conn = libvirt.open(host.uri)
    try:
        return {d.name(): d.state()[0] for d in conn.listAllDomains()}
    finally:
        conn.close()


class TestTwoHosts(base.TestCase):

    def setUp(self):
        super().setUp()
        reason = int_base.skip_reason()
        if reason:
            self.skipTest('no real libvirtd host here: ' + reason)

    def _start_hosts(self, *names):
        hosts = [hypervisor.LibvirtHost(n, self.tmp) for n in names]
        for host in hosts:
            self.addCleanup(host.stop)
        errors = []

        def start(host):
            try:
                host.start()
            except Exception as e:   # reported below, in the test thread
                errors.append(e)

        # Concurrently: two hosts starting at the same time must not
        # collide on any path, socket or pid file.
        threads = [threading.Thread(target=start, args=(h,)) for h in hosts]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual([], errors)
        for host in hosts:
            print('host %s: start %.2f s, capability probe %.2f s, pids %s'
                  % (host.name, host.timings.start, host.timings.probe,
                     host.pids))
        return hosts

    def test_two_hosts_isolated_crash_restart_stop(self):
        a, b = self._start_hosts('hosta', 'hostb')
        self.assertNotEqual(a.uri, b.uri)
        self.assertNotEqual(a.ns_pid, b.ns_pid)

        self.assertEqual(libvirt.VIR_DOMAIN_RUNNING, _start_domain(a, 'doma'))
        self.assertEqual(libvirt.VIR_DOMAIN_RUNNING, _start_domain(b, 'domb'))
        int_base.observe('both running', a, a.instances_path)
        int_base.observe('both running', b, b.instances_path)
        self.assertEqual({'doma': libvirt.VIR_DOMAIN_RUNNING}, _domains(a))
        self.assertEqual({'domb': libvirt.VIR_DOMAIN_RUNNING}, _domains(b))
        qemu_a, qemu_b = a.qemu_pids(), b.qemu_pids()
        self.assertEqual(1, len(qemu_a))
        self.assertEqual(1, len(qemu_b))
        self.assertNotEqual(qemu_a, qemu_b)
        daemons_a = dict(a.pids)

        a.crash()
        int_base.observe('a crashed', a)
        for pid in qemu_a + [daemons_a['libvirtd'], daemons_a['virtlogd']]:
            self.assertIsNone(procs.start_time(pid), pid)
        self.assertEqual({'domb': libvirt.VIR_DOMAIN_RUNNING}, _domains(b))
        self.assertEqual(qemu_b, b.qemu_pids())

        a.restart()
        int_base.observe('a restarted', a)
        self.assertNotEqual(daemons_a['libvirtd'], a.pids['libvirtd'])
        # The definition survived the crash; the guest did not.
        self.assertEqual({'doma': libvirt.VIR_DOMAIN_SHUTOFF}, _domains(a))
        self.assertEqual([], a.qemu_pids())
        conn = libvirt.open(a.uri)
        try:
            dom = conn.lookupByName('doma')
            self.assertEqual(libvirt.VIR_DOMAIN_SHUTOFF_CRASHED,
                             dom.state()[1])
            dom.create()
        finally:
            conn.close()
        self.assertEqual({'doma': libvirt.VIR_DOMAIN_RUNNING}, _domains(a))

        # Something else entered the namespace: stop() ends it too.
        stray = subprocess.Popen(a.ns_command('sleep', '600'))
        self.addCleanup(stray.wait)
        ns = {h.name: procs.mount_ns_inode(h.ns_pid) for h in (a, b)}
        every_pid = (list(a.pids.values()) + list(b.pids.values())
                     + a.qemu_pids() + b.qemu_pids() + [stray.pid])
        registry = [hostrecord.registry_file(h.tree) for h in (a, b)]
        for path in registry:
            self.assertTrue(os.path.exists(path), path)

        a.stop()
        b.stop()
        stray.wait(timeout=5)
        print('after stop: pids %s gone: %s' % (
            every_pid, [procs.start_time(p) is None for p in every_pid]))
        for pid in every_pid:
            self.assertIsNone(procs.start_time(pid), pid)
        for name, inode in ns.items():
            self.assertEqual([], procs.pids_in_mount_ns(inode), name)
        self.assertEqual([], _mounts_mentioning(self.tmp))
        self.assertEqual({}, a.pids)
        for path in registry:
            self.assertFalse(os.path.exists(path), path)
        # The root namespace's /run/libvirt never saw a daemon's socket.
        self.assertFalse(os.path.exists('/run/libvirt/libvirt-sock'))
        # No cgroup was made for the guests (cgroup_controllers = []).
        self.assertEqual([], glob.glob('/sys/fs/cgroup/*/machine*/*dom[ab]*'))

    def test_same_domain_on_two_hosts(self):
        # The shape of an evacuation: one instance (same name and UUID)
        # defined on two hosts sharing one instances directory.
        shared = os.path.join(self.tmp, 'shared')
        hosts = [hypervisor.LibvirtHost(n, self.tmp, instances_path=shared)
                 for n in ('srca', 'dsta')]
        for host in hosts:
            self.addCleanup(host.stop)
            host.start()
        self.assertEqual(hosts[0].instances_path, hosts[1].instances_path)
        dom_uuid = str(uuid.uuid4())
        for host in hosts:
            disk = os.path.join(shared, host.name + '.qcow2')
            int_base.create_blank_disk(disk)
            conn = libvirt.open(host.uri)
            try:
                dom = conn.defineXML(
                    int_base.domain_xml('instance-same', dom_uuid, disk))
                dom.create()
            finally:
                conn.close()
        for host in hosts:
            int_base.observe('same domain', host, shared)
            self.assertEqual({'instance-same': libvirt.VIR_DOMAIN_RUNNING},
                             _domains(host))
            self.assertEqual(1, len(host.qemu_pids()))


class TestStaleHost(base.TestCase):

    def setUp(self):
        super().setUp()
        reason = int_base.skip_reason()
        if reason:
            self.skipTest('no real libvirtd host here: ' + reason)

    def test_host_of_dead_owner_stops_itself(self):
        # A test process that dies without stopping its host (os._exit
        # skips every cleanup): the holder sees its input close and stops
        # the host; reap_stale() then drops the record.
        code = ('import os, sys\n'
                'from nova.testing import hypervisor\n'
                'h = hypervisor.LibvirtHost("orphan", sys.argv[1]).start()\n'
                'print(" ".join(str(p) for p in h.pids.values()))\n'
                'sys.stdout.flush()\n'
                'os._exit(0)\n')
        out = subprocess.run([sys.executable, '-c', code, self.tmp],
                             check=True, capture_output=True, text=True,
                             cwd=_TOP)
        pids = [int(p) for p in out.stdout.split()]
        print('orphaned host pids: %s' % pids)
        self.assertEqual(4, len(pids))     # holder and three daemons

        self.assertEqual([], procs.wait_gone(pids, timeout=15))
        self.assertEqual([], _mounts_mentioning(self.tmp))
        record = hostrecord.registry_file(os.path.join(self.tmp, 'orphan'))
        self.assertTrue(os.path.exists(record))
        self.assertIn('orphan', hypervisor.reap_stale())
        self.assertFalse(os.path.exists(record))


if __name__ == '__main__':
    unittest.main()
