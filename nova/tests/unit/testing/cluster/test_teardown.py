"""nova.testing.cluster.teardown: what down() and reclaim() may remove,
and when.

The full up/down cycle on real daemons is in
nova/tests/integration/e2e/test_cluster_tool.py; these tests cover the
parts that delete files and decide whether a cluster may be reclaimed.
"""

import os
import subprocess

from nova.testing.cluster import config as cluster_config
from nova.testing.cluster import teardown as cluster
from nova.testing import procs
from nova.tests import base
from nova.tests.unit.testing.cluster import test_record


def _dead_record():
    """A ProcessRecord of a process that has exited."""
    # Recorded while it surely runs (recording 'true' raced with its exit).
    child = subprocess.Popen(['sleep', '60'])
    record = procs.ProcessRecord.of(child.pid)
    child.kill()
    child.wait()
    return record


class TestRemoveFiles(base.TestCase):

    def _make_cluster_files(self, base_dir):
        cluster.claim_directory(base_dir)
        layout = cluster_config.Layout(base_dir)
        for directory in (layout.logs, layout.storage('compute1'),
                          layout.instances_path, layout.hosts):
            os.makedirs(directory)
        with open(os.path.join(layout.storage('compute1'), 'disk'), 'w'):
            pass
        with open(layout.record, 'w'):
            pass
        return layout

    def test_keeps_what_it_did_not_create(self):
        base_dir = os.path.join(self.tmp, 'c')
        layout = self._make_cluster_files(base_dir)
        mine = os.path.join(base_dir, 'notes.txt')
        with open(mine, 'w') as f:
            f.write('the operator keeps this')
        cluster.remove_files(layout)
        self.assertEqual(sorted(['notes.txt', cluster.MARKER]),
                         sorted(os.listdir(base_dir)))

    def test_keeps_the_logs_when_asked(self):
        base_dir = os.path.join(self.tmp, 'c')
        layout = self._make_cluster_files(base_dir)
        cluster.remove_files(layout, keep=('logs',))
        self.assertEqual(sorted(['logs', cluster.MARKER]),
                         sorted(os.listdir(base_dir)))

    def test_a_directory_it_did_not_claim_is_left_alone(self):
        # As if someone ran `tools/cluster --dir /srv down`: /srv/etc
        # and /srv/storage are not the cluster's.
        for name in ('etc', 'storage', 'logs'):
            os.makedirs(os.path.join(self.tmp, name))
        cluster.remove_files(cluster_config.Layout(self.tmp))
        self.assertEqual(['etc', 'logs', 'state', 'storage'],
                         sorted(os.listdir(self.tmp)))
        self.assertRaises(cluster.ClusterError, cluster.claim_directory,
                          self.tmp)
        self.assertFalse(os.path.exists(os.path.join(self.tmp,
                                                     cluster.MARKER)))

    def test_removes_the_directory_when_empty(self):
        base_dir = os.path.join(self.tmp, 'c')
        cluster.remove_files(self._make_cluster_files(base_dir))
        self.assertFalse(os.path.exists(base_dir))
        self.assertTrue(os.path.isdir(self.tmp))

    def test_removes_the_directories_of_the_optional_services(self):
        # Masakari's and Glance's were once left behind.
        base_dir = os.path.join(self.tmp, 'c')
        layout = self._make_cluster_files(base_dir)
        for directory in (layout.keystone, layout.masakari, layout.glance):
            os.makedirs(os.path.join(directory, 'logs'))
        cluster.remove_files(layout)
        self.assertFalse(os.path.exists(base_dir))


class TestReclaim(base.TestCase):

    def setUp(self):
        super().setUp()
        self.base_dir = os.path.join(self.tmp, 'c')
        os.makedirs(self.base_dir)
        self.layout = cluster_config.Layout(self.base_dir)

    def _claim(self):
        cluster.claim_directory(self.base_dir)

    def test_nothing_to_reclaim(self):
        self.assertFalse(cluster.reclaim(self.base_dir))
        self.assertTrue(os.path.isdir(self.base_dir))

    def test_a_live_owner_keeps_its_cluster(self):
        record = test_record.make_record(self.base_dir)
        record.save(self.layout.record)
        self.assertRaises(cluster.ClusterBusy, cluster.reclaim,
                          self.base_dir)
        self.assertTrue(os.path.exists(self.layout.record))

    def test_a_dead_owners_cluster_is_removed(self):
        self._claim()
        record = test_record.make_record(self.base_dir)
        gone = _dead_record()
        record.owner = gone
        record.processes = {'nova-api': gone}
        record.hosts[0].processes = {'nova-compute': gone}
        record.save(self.layout.record)
        os.makedirs(self.layout.storage('compute1'))
        self.assertTrue(cluster.reclaim(self.base_dir))
        self.assertFalse(os.path.exists(self.base_dir))
