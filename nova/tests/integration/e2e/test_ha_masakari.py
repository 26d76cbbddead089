"""Instance HA through real Masakari on real QEMU hosts: nova-hamonitor
with the cluster's fence agent decides and fences, Masakari (behind the
cluster's Keystone, its segment's method ``auto``) evacuates
(doc/source/ha.rst; the cluster and the watches: ``ha``).

At the same moment compute1 (3 guests on shared storage) loses power and
compute3 (3 guests on private storage) is cut off the control plane, its
guests running on. The monitor sees both miss heartbeats, fences them
(compute1 is found off; compute3 is powered off), forces them down and
notifies Masakari, which evacuates: all 6 end ACTIVE, running on compute2
and compute4, and no instance ever ran in two QEMU processes. The seconds
from the failure to the last ACTIVE are printed (``service_down_time`` is
10 s here).

Before that, compute4's nova-compute alone stops: its libvirtd, which the
monitor reaches, still runs a guest, so the host is neither fenced nor
evacuated; an alert says to start nova-compute again, and Masakari, told
of a process failure, disables the compute service.
"""

import time

from nova.tests.integration.e2e import ha

A, B, C, D = ha.A, ha.B, ha.C, ha.D


class TestMasakariRecovery(ha.InstanceHaTestCase):

    masakari = True

    def assert_handed_to_masakari(self, host):
        (row,) = self.recoveries(host)
        print('recovery of %s: %s' % (host, row))
        self.assertEqual(('notified', True), (row['step'], row['fenced']))
        self.assertTrue(row['notification_uuid'])
        self.assertIsNone(row['evacuation_uuid'])
        self.assertTrue(self.compute_services()[host]['forced_down'])

    def test_nova_compute_alone_stopped_is_not_fenced(self):
        (uuid,) = self.boot_on(D, ['lone-%s' % D])
        self.cluster.stop_compute(D)
        (alert, *_) = self.wait_for('an alert for %s' % D,
                                    lambda: self.alerts(D))
        print('alert for %s: %s' % (D, alert))
        self.assertIn('nova-compute of host %s is down but its libvirtd '
                      'reports guests running' % D, alert)
        service = self.wait_for(
            'Masakari disabled nova-compute of %s' % D,
            lambda: [s for s in [self.compute_services()[D]]
                     if s['status'] == 'disabled'])[0]
        print('%s: %s (%s)' % (D, service['status'],
                               service.get('disabled_reason')))
        # Never fenced, never evacuated, its guest never stopped.
        self.assertEqual([], self.recoveries(D))
        self.assertFalse(service['forced_down'])
        self.assertNotEqual('failed', self.host_entry(D).state)
        self.assert_running_on(D, uuid)
        self.assertEqual({D}, self.instance_watch.hosts_seen[uuid])
        self.cluster.restart_compute(D)
        self.set_enabled(D, True)
        self.nova('delete', uuid)
        self.wait_for_gone(uuid)

    def test_power_loss_and_partition(self):
        shared = self.boot_ha(A, 'ha')
        private = self.boot_ha(C, 'ha')
        disks = self.shared_disks(A, shared)
        began = time.monotonic()
        self.cluster.fail(A)
        self.cluster.partition(C)
        self.dead_hosts = {A, C}
        landed, seconds = self.wait_all_active(shared + private, (B, D),
                                               began)
        print('ha_recovery (Masakari): power loss of %s and partition of '
              '%s, %d HA-enabled instances ACTIVE elsewhere %.1f s after '
              'it (service_down_time %d s)' % (
                  A, C, len(landed), seconds, self.spec.service_down_time))
        # compute3 was fenced (powered off), not just cut off.
        self.assertEqual('failed', self.host_entry(C).state)
        for host in (A, C):
            self.assert_handed_to_masakari(host)
        self.assert_landed(landed, shared + private, disks)
        self.nova('delete', *(shared + private))
        for uuid in shared + private:
            self.wait_for_gone(uuid)
