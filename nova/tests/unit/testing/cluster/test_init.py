"""nova.testing.cluster: the parts that need no daemons.

Bringing a cluster up and down for real is what
nova/tests/integration/e2e/ does (test_cluster_tool.py for the tool).
"""

import os

from nova.testing import cluster
from nova.tests import base


class TestCluster(base.TestCase):

    def setUp(self):
        super().setUp()
        self.base_dir = os.path.join(self.tmp, 'c')
        self.cluster = cluster.Cluster(cluster.ClusterSpec(
            base_dir=self.base_dir, hosts=2))

    def test_unavailable_reason_is_none_or_says_why(self):
        reason = cluster.unavailable_reason()
        self.assertTrue(reason is None or isinstance(reason, str))

    def test_down_before_up_removes_nothing_it_did_not_make(self):
        os.makedirs(os.path.join(self.base_dir, 'etc'))
        self.cluster.down()
        self.cluster.down()
        self.assertEqual(['etc'], os.listdir(self.base_dir))

    def test_unknown_host(self):
        self.assertRaises(cluster.ClusterError, self.cluster.host,
                          'compute1')
        self.assertRaises(cluster.ClusterError, self.cluster.fail,
                          'compute9')
