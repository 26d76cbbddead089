"""``tools/cluster``'s command line: what ``up`` hands its supervisor."""

import unittest

from nova.testing.cluster import cli
from nova.testing.cluster import config as cluster_config


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
