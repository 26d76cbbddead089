"""The evacuation-leftovers bug (doc/source/cleanup.rst, "Background"), end
to end: an evacuation whose spawn fails on the target must leave the
target clean, so that evacuating there again works.

Host A dies; the instance is evacuated to host B while B cannot plug the
instance's port: its bridge is missing (each host has its own network
namespace, so B can lack a bridge that A has), or, in one variant, B's
network agent cannot reach nova-api, so the network-vif-plugged event B
waits for never comes and the spawn times out after this cluster's
``vif_plugging_timeout``. The evacuation fails: the
instance is ERROR and still on A, the migration ``failed``, and B holds
nothing of it: no domain, no tap and, when storage is not shared, no
instance directory. Once B is fixed, a second evacuation to B succeeds and
the guest runs there; when A comes back, its ``init_host`` removes A's
copy and completes the migration.

With shared storage (A and B mount one directory, standing in for NFS),
the failure must never touch the disks (same sha256 before and after) and
the successful retry boots from those very files.
"""

import os

from nova.tests.integration.e2e import base

HASHED = ('disk', 'disk.info')


class TestEvacuateAfterFailedSpawn(base.ClusterTestCase):

    cluster_hosts = 4
    # compute1 and compute2 have their own disks; compute3 and compute4
    # share theirs.
    shared_groups = (('compute3', 'compute4'),)
    # Short, so that the variant withholding the events fails soon.
    vif_plugging_timeout = 8

    def _break(self, host, cause):
        if cause == 'bridge':
            self.remove_bridge(host)
        else:
            self.cluster.set_api_reachable(host, False)
            print('network-vif-plugged events of %s withheld' % host)

    def _repair(self, host, cause):
        if cause == 'bridge':
            self.restore_bridge(host)
        else:
            self.cluster.set_api_reachable(host, True)
            print('network-vif-plugged events of %s delivered again' % host)

    def _fail_first_evacuation(self, a, b, uuid, shared, cause='bridge'):
        """Evacuate ``uuid`` from failed ``a`` to ``b``, which cannot plug
        its port; check the failure left ``b`` clean and the instance on
        ``a``."""
        self._break(b, cause)
        try:
            self.nova('evacuate', uuid, b)
            server = self.wait_for_server(uuid, status='ERROR')
            self.observe('after the failed evacuation to B', uuid, [a, b])
            self.assertEqual(a, server['OS-EXT-SRV-ATTR:host'])
            # The fault says what failed: the intended cause, no other.
            fault = server.get('fault') or {}
            said = '%s %s' % (fault.get('message'), fault.get('details'))
            self.assertIn(self.spec.bridge if cause == 'bridge'
                          else 'network-vif-plugged', said)
            self.assertEqual('failed',
                             self.wait_for_migration(uuid, 'failed')[
                                 'status'])
            self.assert_nothing_of(b, uuid, keep_files=shared)
            files = self.view(a, uuid).instance_files
            self.assertIsNotNone(files, 'the instance files on A are gone')
            for name in HASHED:
                self.assertIn(name, files)
        finally:
            self._repair(b, cause)

    def _evacuate_again(self, a, b, uuid, banners):
        self.nova('evacuate', uuid, b)
        self.wait_for_server(uuid, status='ACTIVE', host=b)
        self.wait_for_migration(uuid, 'done')
        self.wait_for_banners(b, uuid, banners)
        self.observe('after the second evacuation to B', uuid, [a, b])
        self.assert_running_on(b, uuid)

    def _revive_source(self, a, b, uuid, shared):
        self.cluster.revive(a)
        self.wait_for_migration(uuid, 'completed')
        self.observe('after A came back', uuid, [a, b])
        self.assert_nothing_of(a, uuid, keep_files=shared)
        self.assert_running_on(b, uuid)
        server = self.wait_for_server(uuid, status='ACTIVE', host=b)
        self.assertEqual(b, server['OS-EXT-SRV-ATTR:host'])

    def test_storage_not_shared(self):
        a, b = 'compute1', 'compute2'
        (uuid,) = self.boot_on(a, ['leftovers-local'])
        self.wait_for_banners(a, uuid, 1)
        self.observe('booted on A', uuid, [a, b])
        self.assert_running_on(a, uuid)

        self.fail_host(a)
        self.observe('A failed', uuid, [a, b])
        self._fail_first_evacuation(a, b, uuid, shared=False)
        self._evacuate_again(a, b, uuid, banners=1)
        self._revive_source(a, b, uuid, shared=False)
        self.nova('delete', uuid)

    def test_storage_not_shared_events_withheld(self):
        a, b = 'compute2', 'compute1'
        (uuid,) = self.boot_on(a, ['leftovers-local-events'])
        self.wait_for_banners(a, uuid, 1)
        self.observe('booted on A', uuid, [a, b])
        self.assert_running_on(a, uuid)

        self.fail_host(a)
        self._fail_first_evacuation(a, b, uuid, shared=False,
                                    cause='events')
        self._evacuate_again(a, b, uuid, banners=1)
        self._revive_source(a, b, uuid, shared=False)
        self.nova('delete', uuid)

    def test_storage_shared(self):
        a, b = 'compute3', 'compute4'
        (uuid,) = self.boot_on(a, ['leftovers-shared'])
        self.wait_for_banners(a, uuid, 1)
        self.observe('booted on A', uuid, [a, b])
        self.assert_running_on(a, uuid)
        directory = self.instance_dir(a, uuid)
        self.assertEqual(directory, self.instance_dir(b, uuid))
        disk = os.path.join(directory, 'disk')

        self.fail_host(a)
        before = {name: base.sha256(os.path.join(directory, name))
                  for name in HASHED}
        inode = os.stat(disk).st_ino
        print('sha256 on the shared storage: %s' % before)
        self._fail_first_evacuation(a, b, uuid, shared=True)
        after = {name: base.sha256(os.path.join(directory, name))
                 for name in HASHED}
        self.assertEqual(before, after)

        # The guest's second boot banner in the shared console.log, from
        # the same disk file: the retry booted from the untouched disks.
        self._evacuate_again(a, b, uuid, banners=2)
        self.assertEqual(inode, os.stat(disk).st_ino)
        self.assertEqual(before['disk'], base.sha256(disk))
        self._revive_source(a, b, uuid, shared=True)
        self.assertEqual(inode, os.stat(disk).st_ino)
        self.nova('delete', uuid)
