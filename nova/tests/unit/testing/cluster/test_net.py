"""nova.testing.cluster.net on real network namespaces (root only)."""

import os
import shutil

from nova.testing.cluster import net as cluster_net
from nova.tests import base


class TestNetworkNamespace(base.TestCase):

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0 or shutil.which('ip') is None:
            self.skipTest('network namespaces need root and iproute2')
        self.ns = cluster_net.NetworkNamespace(
            'nvctest%d-unit' % os.getpid())
        self.addCleanup(self.ns.delete)
        self.ns.create()

    def test_bridge_and_taps_stay_inside(self):
        self.ns.add_bridge('br-unit')
        self.ns.add_bridge('br-unit')       # idempotent
        self.ns.ip('tuntap', 'add', 'dev', 'tapunit0', 'mode', 'tap')
        self.ns.ip('link', 'set', 'tapunit0', 'master', 'br-unit')
        self.assertTrue(self.ns.has_bridge('br-unit'))
        self.assertEqual(['tapunit0'], self.ns.taps())
        self.assertEqual(['tapunit0'], self.ns.bridge_ports('br-unit'))
        self.assertFalse(os.path.exists('/sys/class/net/tapunit0'))
        self.assertEqual(['tapunit0'], self.ns.delete_taps())
        self.assertEqual([], self.ns.taps())
        self.ns.remove_bridge('br-unit')
        self.assertFalse(self.ns.has_bridge('br-unit'))
        self.assertEqual([], self.ns.bridge_ports('br-unit'))

    def test_run_in_netns(self):
        here = os.readlink('/proc/thread-self/ns/net')
        there = cluster_net.run_in_netns(
            self.ns.path, os.readlink, '/proc/thread-self/ns/net')
        self.assertNotEqual(here, there)
        self.assertEqual(here, os.readlink('/proc/thread-self/ns/net'))
        self.assertRaises(FileNotFoundError, cluster_net.run_in_netns,
                          self.ns.path, os.stat, '/nonexistent')

    def test_delete_is_idempotent_and_names_are_checked(self):
        self.ns.delete()
        self.ns.delete()
        self.assertFalse(self.ns.exists())
        self.assertEqual([], cluster_net.existing(self.ns.name))
        self.assertRaises(ValueError, cluster_net.NetworkNamespace, '../x')
