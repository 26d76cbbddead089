"""``tools/cluster``'s command line: what ``up`` hands its supervisor."""

import os
import unittest

from nova.testing.cluster import cli
from nova.testing.cluster import config as cluster_config
from nova.testing import procs
from nova.tests import base


class TestServeArgv(unittest.TestCase):

    def round_trip(self, spec):
        argv = cli.serve_argv(spec)
        self.assertEqual(['-m', 'nova.testing.cluster.cli'], argv[1:3])
        return cli._spec_from_args(cli._parser().parse_args(argv[3:]))

    def test_every_option_reaches_the_supervisor(self):
        # Before, --hamonitor was dropped on the way: the supervisor's
        # cluster ran no monitor.
        spec = cluster_config.ClusterSpec(
            base_dir='/tmp/c', hosts=4,
            shared_groups=(('compute1', 'compute2'),),
            hosts_without_leases=('compute3',), vif_plugging_timeout=7,
            reap_orphans_interval=5, keystone=True, masakari=True,
            hamonitor=True, fence_agent=False, glance=True)
        self.assertEqual(spec, self.round_trip(spec))

    def test_the_defaults_round_trip(self):
        spec = cluster_config.ClusterSpec(base_dir='/tmp/c')
        self.assertEqual(spec, self.round_trip(spec))


class FencedHosts:
    """Stands in for a ``Cluster`` (real ones need root, namespaces and
    QEMU: nova/tests/integration/e2e): the supervisor only calls ``fence``
    and ``down`` on it here."""

    def __init__(self, base_dir):
        self.layout = cluster_config.Layout(base_dir)
        self.fenced = []
        self.downs = 0

    def fence(self, host):
        self.fenced.append(host)
        return True

    def down(self):
        self.downs += 1


class TestSupervisorOfAClusterItDoesNotOwn(base.TestCase):

    def test_serves_the_fence_agent_and_leaves_the_cluster_up(self):
        cluster = FencedHosts(self.tmp)
        control = cli.Supervisor(cluster=cluster).serve_in_thread()
        self.addCleanup(control.stop)
        socket_path = cluster.layout.control_socket
        procs.wait_for_path(socket_path, timeout=30)
        answer = cli.request(self.tmp, 'fence', host='compute1')
        self.assertEqual({'ok': True, 'message': 'host compute1 fenced: '
                          'powered off'}, answer)
        self.assertEqual(['compute1'], cluster.fenced)
        # Its owner brings it down, not a request.
        answer = cli.request(self.tmp, 'down')
        self.assertFalse(answer['ok'])
        self.assertIn('belongs to the process that brought it up',
                      answer['error'])
        control.stop()
        self.assertEqual(0, cluster.downs)
        self.assertFalse(os.path.exists(socket_path))
