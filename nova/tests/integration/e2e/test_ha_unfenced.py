"""Instance HA without a fence agent on real QEMU hosts (the built-in
recovery; doc/source/ha.rst; the cluster and the watches: ``ha``).

compute1 (shared storage) and compute3 (private) are cut off the control
plane, their guests running on.

* compute3 is not recovered: its disks are private, so nothing but a
  fence could keep a second copy from booting; the alert says so, and its
  guests run on, untouched;
* compute1's are evacuated to the hosts sharing its storage only
  (compute2), never to compute4, where a second copy would boot from the
  image beside the running one: the leases the running guests hold refuse
  them on compute2, so they stay on compute1, their disks kept;
* compute1 then really dies (its QEMU processes, and their leases, go):
  the monitor's next try evacuates them to compute2, from the same disks.
"""

import os
import time

from nova.tests.integration.e2e import ha

A, B, C, D = ha.A, ha.B, ha.C, ha.D


class TestRecoveryWithoutFenceAgent(ha.InstanceHaTestCase):

    fence_agent = False

    def setUp(self):
        super().setUp()
        self.dead_hosts = {A}

    def evacuation_runs(self, host):
        return self.db_rows(
            'SELECT uuid, status, on_shared_storage FROM host_evacuations '
            'WHERE source_host = :host ORDER BY id', host=host)

    # Runs first (the names' order): compute1 is the target here, and is
    # failed for good by the test after it.
    def test_a_healed_host_takes_back_what_the_leases_refused(self):
        uuids = self.boot_ha(B, 'healed')
        disks = {u: os.path.join(self.instance_dir(B, u), 'disk')
                 for u in uuids}
        self.cluster.partition(B)
        # Evacuated to compute1, its storage peer, where the leases of the
        # guests running on compute2 refuse them: ERROR, on compute2.
        self.wait_for('a run of %s ended' % B, lambda: [
            r for r in self.evacuation_runs(B) if r['status'] == 'finished'])
        for uuid in uuids:
            server = self.wait_for_server(uuid, status='ERROR', host=B)
            print('%s: %s' % (uuid, server.get('fault')))
            self.assertEqual([B], self.lease_holders(disks[uuid]))
        # The partition ends: compute2's power sync finds the guests
        # running there, and the instances ACTIVE again, where they were.
        self.cluster.heal(B)
        for uuid in uuids:
            self.wait_for('%s ACTIVE on %s again' % (uuid, B), lambda: [
                s for s in [self.server(uuid)]
                if (s['status'], s.get('OS-EXT-SRV-ATTR:host'),
                    s.get('OS-EXT-STS:task_state')) == ('ACTIVE', B, None)])
            self.assert_running_on(B, uuid)
            # compute1 may have been seen with the refused start's QEMU
            # process, which its lease stopped before it ran (a second
            # running one fails the test in the watch itself); no other
            # host ever had one.
            self.assertEqual(set(), self.instance_watch.hosts_seen[uuid]
                             - {A, B})
            self.assertEqual([B], self.lease_holders(disks[uuid]))
        self.nova('delete', *uuids)
        for uuid in uuids:
            self.wait_for_gone(uuid)

    def test_only_leased_shared_storage_is_recovered_once_free(self):
        shared = self.boot_ha(A, 'nofence')
        private = self.boot_ha(C, 'nofence')
        disks = self.shared_disks(A, shared)
        qemu_before = {u: self.qemu_with_open(disks[u][0]) for u in shared}
        # Hosts coming up (registered, not yet heartbeating) were never
        # taken for failed ones (compute2 was partitioned by the test
        # before).
        for host in (A, C, D):
            self.assertEqual(([], []), (self.alerts(host),
                                        self.recoveries(host)))
        self.cluster.partition(A)
        self.cluster.partition(C)

        # compute3: an alert, nothing else.
        (alert, *_) = self.wait_for(
            'an alert for %s' % C, lambda: self.alerts(C))
        print('alert for %s: %s' % (C, alert))
        self.assertIn('host %s needs fencing' % C, alert)
        self.assertIn("instances' disks are not on shared storage", alert)
        self.assertEqual([], self.recoveries(C))
        self.assertEqual([], self.evacuation_runs(C))

        # compute1: evacuated to compute2 only, refused there by the
        # leases of the guests still running on compute1.
        self.wait_for('a run of %s ended' % A, lambda: [
            r for r in self.evacuation_runs(A) if r['status'] == 'finished'])
        for uuid in shared:
            server = self.wait_for_server(uuid, status='ERROR', host=A)
            print('%s: %s' % (uuid, server.get('fault')))
            # The guest on compute1 runs on and holds its disk and lease.
            # (The monitor tries again every few seconds meanwhile: what
            # compute2 may hold of a try in progress is the watches'.)
            self.assertIn(qemu_before[uuid][0],
                          self.qemu_with_open(disks[uuid][0]))
            self.assertEqual([A], self.lease_holders(disks[uuid][0]))
            self.assert_nothing_of(D, uuid)
        runs = self.evacuation_runs(A)
        self.assertTrue(all(r['on_shared_storage'] for r in runs), runs)
        (first, *_) = self.recoveries(A)
        self.assertFalse(first['fenced'])
        self.assertIn('working disk leases', first['reason'])
        self.assertFalse(self.compute_services()[A]['forced_down'])

        # compute1 really dies: its guests and their leases go; the next
        # try evacuates them to compute2, from the same disks.
        self.cluster.fail(A)
        landed, seconds = self.wait_all_active(shared, (B,),
                                               time.monotonic())
        print('evacuated %.1f s after %s died' % (seconds, A))
        self.assert_landed(landed, shared, disks)
        for uuid in shared:
            self.assertEqual([B], self.lease_holders(disks[uuid][0]))
        self.assertGreaterEqual(len(self.recoveries(A)), 2)
        self.assertTrue(all(r['on_shared_storage']
                            for r in self.evacuation_runs(A)))

        # compute3's guests ran on, untouched, and nothing moved them.
        for uuid in private:
            server = self.server(uuid)
            self.assertEqual((C, 'ACTIVE'), (
                server['OS-EXT-SRV-ATTR:host'], server['status']))
            self.assertEqual({C}, self.instance_watch.hosts_seen[uuid])
            self.assertEqual('running', self.view(C, uuid).domain_of(uuid))
        self.assertEqual([], self.evacuation_runs(C))

        self.cluster.heal(C)
        self.nova('delete', *(shared + private))
        for uuid in shared + private:
            self.wait_for_gone(uuid)
