"""nova-hamonitor's service: its loop runs in a thread, holds the region's
lease while it runs and gives it back when it stops."""

from nova.cmd import hamonitor
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
        self.flags(auth_type='none', endpoint_override='http://127.0.0.1:9/v1',
                   group='masakari')
        notifier = hamonitor.build_monitor('ctl1').recovery.masakari
        self.assertIsNotNone(notifier)
        self.assertEqual('http://127.0.0.1:9/v1',
                         notifier.adapter.get_endpoint())
