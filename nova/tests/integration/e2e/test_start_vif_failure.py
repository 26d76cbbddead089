"""Nova bug 1660647, end to end: a start whose VIF plugging fails must keep
the instance's local files, so the next start works.

Boot with local disks, stop, make plugging fail on the host, start: the
start fails, and the instance directory must still hold disk, disk.info
and console.log, the disk unchanged. Restore the cause, start again:
ACTIVE, and the guest really runs again (one more boot banner in its
console.log). The cause: the host's bridge removed, so the linuxbridge VIF
driver refuses to plug the port into a bridge the host lacks.

NOTE: withholding the network-vif-plugged events cannot fail a start
here: the compute manager powers on with the instance's stored
network_info, whose VIFs are active since the boot, so a start never waits
for events (even after the host lost the tap and the port went DOWN).
"""

import os

from nova.tests.integration.e2e import base


class TestStartWithVIFPlugFailure(base.ClusterTestCase):

    cluster_hosts = 1

    def _boot_and_stop(self, host, name):
        (uuid,) = self.boot_on(host, [name])
        self.wait_for_banners(host, uuid, 1)
        self.observe('booted', uuid, [host])
        self.assert_running_on(host, uuid)

        self.nova('stop', uuid)
        self.wait_for_server(uuid, status='SHUTOFF')
        stopped = self.observe('stopped', uuid, [host])[host]
        for name in ('disk', 'disk.info', 'console.log'):
            self.assertIn(name, stopped.instance_files)
        return uuid

    def _check_failed_start(self, host, uuid, disk_sha):
        server = self.wait_for_server(uuid, status='SHUTOFF', timeout=60)
        failed = self.observe('after the failed start', uuid, [host])[host]
        # The cleanup contract: stopped again, task cleared, the error in
        # the action's events, files and disk untouched, nothing running.
        self.assertIsNone(server['OS-EXT-STS:task_state'])
        events = self.action_events(uuid, 'start')
        self.assertTrue(any(e.get('result') == 'Error' for e in events),
                        events)
        self.assertIsNotNone(failed.instance_files, failed.text())
        for name in ('disk', 'disk.info', 'console.log'):
            self.assertIn(name, failed.instance_files)
        self.assertEqual(disk_sha, base.sha256(self._disk(host, uuid)))
        self.assertNotEqual('running', failed.domain_of(uuid))
        self.assertEqual([], failed.taps, failed.text())

    def _check_next_start(self, host, uuid):
        self.nova('start', uuid)
        self.wait_for_server(uuid, status='ACTIVE')
        self.wait_for_banners(host, uuid, 2)
        self.observe('after the next start', uuid, [host])
        self.assert_running_on(host, uuid)
        self.nova('delete', uuid)

    def _disk(self, host, uuid):
        return os.path.join(self.instance_dir(host, uuid), 'disk')

    def test_bridge_missing_start_keeps_files_and_next_start_works(self):
        host = 'compute1'
        uuid = self._boot_and_stop(host, 'bug1660647-bridge')
        disk_sha = base.sha256(self._disk(host, uuid))
        self.remove_bridge(host)
        try:
            self.nova('start', uuid)
            self._check_failed_start(host, uuid, disk_sha)
        finally:
            self.restore_bridge(host)
        self._check_next_start(host, uuid)
