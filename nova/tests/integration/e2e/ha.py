"""What the instance HA tests on real QEMU hosts share
(``test_ha_masakari``, ``test_ha_unfenced``; doc/source/ha.rst).

compute1 and compute2 share their instance storage; compute3 and
compute4 have their own; nova-hamonitor runs on the controller. Every
guest carries ``HA_Enabled=True``. Through every test two watches sample
every 100 ms, in every host's namespace: ``watch_instances`` fails the
test on the first sample in which one instance runs in two QEMU processes
(on two hosts), ``watch_disks`` if a disk stays open in two QEMU
processes.
"""

import os
import time

from nova.tests.integration.e2e import base

A, B, C, D = 'compute1', 'compute2', 'compute3', 'compute4'
PER_HOST = 3
RECOVERY_TIMEOUT = 240
HA_META = {'HA_Enabled': 'True'}


class InstanceHaTestCase(base.ClusterTestCase):
    """Not run itself (no tests): what the HA test classes share."""

    cluster_hosts = 4
    shared_groups = ((A, B),)
    hamonitor = True

    def setUp(self):
        super().setUp()
        self.instance_watch = self.watch_instances()
        self.watch_disks()
        # Hosts that failed in the test: where a guest ran before it was
        # recovered elsewhere.
        self.dead_hosts = set()

    def boot_ha(self, host, prefix):
        uuids = self.boot_on(host, ['%s-%s-%d' % (prefix, host, n)
                                    for n in range(PER_HOST)])
        for uuid in uuids:
            self.api.request('PUT', '/servers/%s/metadata' % uuid,
                             {'metadata': HA_META})
        return uuids

    def wait_all_active(self, uuids, hosts, began):
        """Until every one of ``uuids`` is ACTIVE, with no task, on one of
        ``hosts``; {uuid: host} and the seconds since ``began``."""
        deadline = time.monotonic() + RECOVERY_TIMEOUT
        landed = {}
        while True:
            for uuid in set(uuids) - set(landed):
                server = self.server(uuid)
                host = server.get('OS-EXT-SRV-ATTR:host')
                if (server['status'] == 'ACTIVE' and host in hosts
                        and server.get('OS-EXT-STS:task_state') is None):
                    landed[uuid] = host
                    print('+%.1f s: %s ACTIVE on %s' % (
                        time.monotonic() - began, uuid, host))
            if len(landed) == len(uuids):
                return landed, time.monotonic() - began
            if time.monotonic() > deadline:
                self.fail('not ACTIVE on %s after %d s: %s' % (
                    hosts, RECOVERY_TIMEOUT, {
                        u: (self.server(u)['status'],
                            self.server(u).get('OS-EXT-SRV-ATTR:host'))
                        for u in set(uuids) - set(landed)}))
            time.sleep(base.POLL)

    def wait_for(self, what, predicate, timeout=RECOVERY_TIMEOUT):
        """Until ``predicate()`` is true; what it returned."""
        deadline = time.monotonic() + timeout
        while True:
            found = predicate()
            if found:
                return found
            if time.monotonic() > deadline:
                self.fail('never: %s' % what)
            time.sleep(base.POLL)

    def recoveries(self, host):
        return self.db_rows(
            'SELECT step, fenced, evacuation_uuid, notification_uuid, '
            'reason FROM ha_host_recoveries WHERE host = :host ORDER BY id',
            host=host)

    def alerts(self, host):
        return [row['reason'] for row in self.db_rows(
            'SELECT reason FROM ha_alerts WHERE host = :host ORDER BY id',
            host=host)]

    def assert_landed(self, landed, uuids, disks_before):
        for uuid in uuids:
            host = landed[uuid]
            self.assert_running_on(host, uuid)
            self.assertEqual({host}, self.instance_watch.hosts_seen[uuid]
                             - self.dead_hosts)
            if uuid in disks_before:
                # Shared storage, evacuated to the peer: the same disk.
                path, inode = disks_before[uuid]
                if landed[uuid] in (A, B):
                    self.assertEqual(inode, os.stat(path).st_ino)

    def shared_disks(self, host, uuids):
        found = {}
        for uuid in uuids:
            path = os.path.join(self.instance_dir(host, uuid), 'disk')
            found[uuid] = (path, os.stat(path).st_ino)
        return found
