"""The libvirt connection when libvirtd goes away and comes back, on a real
libvirtd + QEMU host.

* One ``LibvirtDriver`` survives a libvirtd crash and restart: while the
  daemon is down every call raises ``HypervisorUnavailable`` (never a raw
  ``libvirtError``); afterwards the same driver reconnects by itself.
* ``cleanup_host`` really closes the connection (no socket left open).
* nova-compute's service (``nova.service.Service``) started while
  libvirtd is stopped waits without heartbeating, comes up once libvirtd
  is started, and stops heartbeating while libvirtd is down later.
"""

import threading

from nova.compute import instance_events
from nova.conf import host_settings
from nova import context as nova_context
from nova import exception
from nova import objects
from nova import rpc
from nova import service
from nova.tests import base as tests_base
from nova.tests.integration.libvirt import base
from nova.tests.integration.libvirt import driver_base
from nova.tests.unit import test_service
from nova.virt.libvirt import driver as libvirt_driver


class _KeepHostRunning:
    def keep_host_running(self):
        """Whatever the test did to the daemons, the next test gets them
        running (registered last, so it runs before the other cleanups).
        """
        def _revive():
            if 'holder' not in self.host.pids:
                self.host.start()
            elif 'libvirtd' not in self.host.pids:
                self.host.restart()
        self.addCleanup(_revive)


class TestDriverReconnects(_KeepHostRunning, driver_base.DriverTestCase):

    def test_same_driver_works_again_after_libvirtd_crashed(self):
        instance, network_info = self.booted()
        self.keep_host_running()
        self.host.crash()       # QEMU and libvirtd killed

        # libvirt's client learns of the closed socket on its event-loop
        # thread, a moment after the kill; until then isAlive() still
        # says yes and the check (which makes no call to the daemon)
        # cannot know better. Once it has noticed, it stays down.
        self.assertTrue(tests_base.wait_until(
            lambda: not self.driver.is_hypervisor_available(), timeout=10))
        self.assertFalse(self.driver.is_hypervisor_available())
        for call in (self.driver.list_instance_uuids,
                     lambda: self.driver.get_info(instance),
                     lambda: self.driver.power_on(self.context, instance,
                                                  network_info),
                     lambda: self.driver.get_available_resource('n')):
            self.assertRaises(exception.HypervisorUnavailable, call)

        self.host.restart()
        self.assertTrue(self.driver.is_hypervisor_available())
        self.assertEqual([instance.uuid], self.driver.list_instance_uuids())
        seen = self.observe('after restart', instance, network_info)
        self.assertEqual('shut off', seen.domain)
        self.driver.power_on(self.context, instance, network_info)
        seen = self.observe('started again', instance, network_info)
        self.assertRunningWithTap(seen, network_info)

    def test_the_first_call_after_a_restart_works(self):
        # The daemon restarted between two calls: the first call after it
        # already works, on a new connection.
        instance, network_info = self.booted()
        self.keep_host_running()
        old = self.driver.host.get_connection()
        self.host.crash()
        self.host.restart()
        self.assertEqual([instance.uuid], self.driver.list_instance_uuids())
        self.assertIsNot(old, self.driver.host.get_connection())

    def test_cleanup_host_closes_the_connection(self):
        # Counted by libvirtd itself: sockets of this whole process open
        # and close for other reasons meanwhile.
        self.booted()   # on self.driver; the new driver only looks
        before = set(self.host.client_ids())
        driver = self.make_driver()
        self.assertEqual(1, len(driver.list_instance_uuids()))
        [mine] = set(self.host.client_ids()) - before
        driver.cleanup_host(self.host.name)
        # libvirtd drops a closed client from its list asynchronously.
        self.assertTrue(tests_base.wait_until(
            lambda: mine not in self.host.client_ids(), timeout=10))


class TestComputeServiceWithLibvirtDown(_KeepHostRunning,
                                        base.RealHostTestCase):
    """The compute service's reaction to libvirtd down, for real."""

    def setUp(self):
        super().setUp()
        self.use_database()
        rpc.cleanup()
        rpc.init(url='inproc://')
        self.addCleanup(rpc.cleanup)
        self.keep_host_running()
        settings = host_settings.HostSettings(
            host=self.host.name, instances_path=self.host.instances_path,
            connection_uri=self.host.uri, virt_type='qemu',
            vif_driver='noop')
        self.driver = libvirt_driver.LibvirtDriver(
            instance_events.ComputeVirtAPI(), settings)
        self.manager = test_service.Manager(
            self.host.name, self.host.instances_path, self.driver)
        # Heartbeats only when the test calls heartbeat().
        self.svc = service.Service(
            self.host.name, 'nova-compute', 'compute', self.manager,
            report_interval=3600, periodic_enable=False,
            init_retry_initial=0.05, init_retry_max=0.2)
        self.addCleanup(self.svc.stop)

    def row(self):
        return objects.Service.get_by_host_and_binary(
            nova_context.get_admin_context(), self.host.name,
            'nova-compute')

    def attempts(self):
        return self.manager.calls.count('init_host')

    def test_waits_for_libvirtd_then_serves_and_follows_its_outages(self):
        self.host.stop()
        result = {}
        starter = threading.Thread(
            target=lambda: result.setdefault('started', self.svc.start()))
        starter.start()
        self.addCleanup(starter.join)
        self.assertTrue(tests_base.wait_until(
            lambda: self.attempts() >= 3, timeout=30))
        self.assertIsNone(self.row().last_seen_up)
        self.assertTrue(starter.is_alive())

        self.host.start()
        starter.join(timeout=60)
        self.assertEqual({'started': True}, result)
        self.assertTrue(service.service_is_up(self.row(), 60))
        count = self.row().report_count

        # libvirtd crashes under the running service: no heartbeat.
        self.host.crash()
        self.assertFalse(self.svc.heartbeat())
        self.assertEqual(count, self.row().report_count)
        self.host.restart()
        self.assertTrue(self.svc.heartbeat())
        self.assertEqual(count + 1, self.row().report_count)
        self.assertEqual([], self.driver.list_instance_uuids())
