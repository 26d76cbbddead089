"""nova.testing.cluster: the parts that need no daemons.

Bringing a cluster up and down for real is what
nova/tests/integration/e2e/ does (test_cluster_tool.py for the tool).
"""

import os
import sys

from nova.testing import cluster
from nova.testing.cluster import config as cluster_config
from nova.testing.cluster import host as cluster_host
from nova.testing.cluster import services as cluster_services
from nova.tests import base

# Stops itself, as nova/crashpoint.py does at its stall point.
STALLING = (
    'import os, signal, sys\n'
    'signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\n'
    'os.kill(os.getpid(), signal.SIGSTOP)\n'
    'signal.pause()\n')


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

    def test_fencing_a_host_that_is_off_succeeds_and_touches_nothing(self):
        host = self._compute('compute1', [sys.executable, '-c',
                                          'import time; time.sleep(60)'])
        host.entry.state = 'failed'
        self.assertFalse(self.cluster.fence('compute1'))
        self.assertTrue(host.compute.alive())
        self.assertRaises(cluster.ClusterError, self.cluster.fence,
                          'compute9')

    def _compute(self, name, argv):
        """A fake nova-compute of host ``name`` running ``argv``."""
        host = cluster_host.ClusterHost(
            self.cluster.spec, cluster_config.Layout(self.base_dir), name,
            forwarder=None, forward_ports=())
        os.makedirs(os.path.dirname(host.entry.log_file), exist_ok=True)
        host.compute = cluster_services.ServiceProcess.start(
            'fake nova-compute', argv, host.entry.log_file)
        host.entry.state = 'up'
        self.cluster.hosts[name] = host
        self.addCleanup(host.stop_compute)
        return host

    def test_wait_for_compute_stall(self):
        host = self._compute('compute1', [sys.executable, '-c', STALLING])
        self.cluster.wait_for_compute_stall('compute1', timeout=30)
        self.assertEqual('partitioned', host.entry.state)
        self.assertTrue(host.compute_stopped())
        self.cluster.heal('compute1')
        self.assertEqual('up', host.entry.state)

    def test_wait_for_compute_stall_of_one_that_exits(self):
        host = self._compute('compute2', [sys.executable, '-c', 'pass'])
        host.compute.popen.wait(timeout=30)
        with self.assertRaises(cluster.ClusterError) as caught:
            self.cluster.wait_for_compute_stall('compute2', timeout=30)
        self.assertIn('exited before it stalled', str(caught.exception))
        self.assertEqual('up', host.entry.state)
