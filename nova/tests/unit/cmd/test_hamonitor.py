"""nova-hamonitor's service: its loop runs in a thread, holds the region's
lease while it runs and gives it back when it stops."""

import os
import subprocess
import sys

from nova.cmd import hamonitor
from nova.conf import CONF
from nova.conf import masakari as masakari_conf
from nova.ha import evidence
from nova.objects import ha_lease
from nova import rpc
from nova.tests import base


class HaMonitorServiceTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.flags(check_interval=1, group='ha')
        rpc.cleanup()
        rpc.init(url='inproc://')
        self.addCleanup(rpc.cleanup)

    def test_holds_the_lease_while_running_and_gives_it_back(self):
        monitor = hamonitor.build_monitor('ctl1')
        self.assertFalse(monitor.fencer.configured)
        svc = hamonitor.HaMonitorService(monitor)
        svc.start()
        self.addCleanup(svc.stop)
        holder = monitor.lease.holder
        self.assertTrue(holder.startswith('ctl1:'))
        self.assertTrue(base.wait_until(
            lambda: ha_lease.holds('RegionOne', holder)))
        svc.stop()
        self.assertIsNone(ha_lease.holder_of('RegionOne'))

    def test_each_process_gets_its_own_holder_name(self):
        self.assertNotEqual(hamonitor.holder_name('ctl1'),
                            hamonitor.holder_name('ctl1'))

    def test_recovery_masakari_hands_hosts_to_masakari(self):
        self.assertIsNone(hamonitor.build_monitor('ctl1').recovery.masakari)
        self.flags(recovery='masakari', group='ha')
        # Registered by Notifier.from_conf, after the overrides: here first.
        masakari_conf.register_keystoneauth_opts(CONF)
        self.flags(auth_type='none', endpoint_override='http://127.0.0.1:9/v1',
                   group='masakari')
        notifier = hamonitor.build_monitor('ctl1').recovery.masakari
        self.assertIsNotNone(notifier)
        self.assertEqual('http://127.0.0.1:9/v1',
                         notifier.adapter.get_endpoint())

    def test_libvirt_uri_gives_the_monitor_a_probe(self):
        self.assertIs(evidence.no_probe, hamonitor.build_monitor('c').probe)
        self.flags(libvirt_uri='qemu+tcp://%s/system', group='ha')
        probe = hamonitor.build_monitor('ctl1').probe
        self.assertEqual('qemu+tcp://compute1/system', probe.uri('compute1'))

    def test_a_libvirt_uri_without_the_host_stops_it_at_once(self):
        conf = os.path.join(self.tmp, 'nova.conf')
        with open(conf, 'w') as f:
            f.write('[database]\nconnection = sqlite:///%s/x.sqlite\n'
                    '[ha]\nlibvirt_uri = qemu+tcp://compute1/system\n'
                    % self.tmp)
        # Its own process: main() parses the command line once.
        done = subprocess.run(
            [sys.executable, '-m', 'nova.cmd.hamonitor', '--config-file',
             conf], capture_output=True, text=True, timeout=120)
        self.assertEqual(2, done.returncode)
        self.assertIn('nova-hamonitor: Configuration is invalid: [ha] '
                      'libvirt_uri', done.stderr)
