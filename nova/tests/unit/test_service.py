"""Services against a real SQLite database and real inproc:// RPC.

Starting a service is cheap, stopping one costs up to a second
(oslo.messaging's idle worker threads), so one service is shared by the
class where the tests only look at it.
"""

import os
import shutil
import signal
import tempfile
import threading

import oslo_messaging as messaging
import sqlalchemy as sa

from nova.compute import instance_events
from nova.compute import storage_report
from nova.conf import host_settings
from nova import context as nova_context
from nova.db import api as db_api
from nova.db import migration
from nova.db import models
from nova import exception
from nova import manager as nova_manager
from nova import objects
from nova import periodic
from nova import rpc
from nova import service
from nova.tests import base
from nova.tests.fixtures import libvirt_host as fixtures
from nova.virt import fake
from nova.virt.libvirt import driver as libvirt_driver
from nova.virt import storage_identity


class Manager(nova_manager.Manager):
    """A small real manager: records its lifecycle, serves one method."""

    def __init__(self, host, instances_path, driver=None):
        self.driver = driver or fake.FakeDriver(
            instance_events.ComputeVirtAPI(),
            host_settings.HostSettings(host=host,
                                       instances_path=instances_path))
        self.host = host
        self.storage = storage_report.StorageReporter(host, self.driver)
        self.calls = []
        self.row_at_init = None
        self.rows_at_init = []
        self.periodic_runs = threading.Event()

    def init_host(self):
        self.calls.append('init_host')
        self.row_at_init = objects.Service.get_by_host_and_binary(
            nova_context.get_admin_context(), self.host, 'nova-compute')
        self.rows_at_init.append(self.row_at_init)
        self.driver.init_host(self.host)
        # What ComputeManager does: the storage identity, recorded at
        # start and kept fresh with every heartbeat.
        self.storage.record_at_start(nova_context.get_admin_context())

    def update_service_record(self, row):
        self.storage.update(row)

    def cleanup_host(self):
        self.calls.append('cleanup_host')

    def is_hypervisor_available(self):
        return self.driver.is_hypervisor_available()

    def echo(self, ctxt, value):
        return {'host': self.host, 'value': value}

    @periodic.periodic_task(spacing=0.01, run_immediately=True)
    def _tick(self, context):
        self.periodic_runs.set()


class Companion:
    def __init__(self, name, log, on_start=None, fail=False):
        self.name = name
        self.log = log
        self.on_start = on_start
        self.fail = fail

    def start(self):
        if self.fail:
            raise RuntimeError('%s cannot start' % self.name)
        self.log.append(('start', self.name))
        if self.on_start:
            self.on_start()

    def stop(self):
        self.log.append(('stop', self.name))


class _DatabaseAndRPC:
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        base._parse_conf_once()
        cls.class_tmp = tempfile.mkdtemp(prefix='nova-test-service-')
        db_api.configure('sqlite:///' + os.path.join(cls.class_tmp,
                                                     'nova.sqlite'))
        migration.db_sync()
        rpc.cleanup()
        rpc.init(url='inproc://')

    @classmethod
    def tearDownClass(cls):
        rpc.cleanup()
        db_api.dispose()
        shutil.rmtree(cls.class_tmp, True)
        super().tearDownClass()

    @classmethod
    def _service(cls, host, driver=None, **kw):
        manager = Manager(host, os.path.join(cls.class_tmp, host), driver)
        kw.setdefault('report_interval', 0.01)
        kw.setdefault('periodic_fuzzy_delay', 0)
        return service.Service(host, 'nova-compute', 'compute', manager,
                               **kw)

    def _row(self, host):
        return objects.Service.get_by_host_and_binary(
            nova_context.get_admin_context(), host, 'nova-compute')


class TestRunningService(_DatabaseAndRPC, base.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.log = []
        cls.svc = cls._service('compute1', companions=[
            Companion('agent', cls.log)])
        cls.svc.start()

    @classmethod
    def tearDownClass(cls):
        cls.svc.stop()
        super().tearDownClass()

    def test_row_exists_before_init_host_but_is_up_only_after(self):
        before = self.svc.manager.row_at_init
        self.assertIsNotNone(before)
        self.assertIsNone(before.last_seen_up)
        self.assertFalse(service.service_is_up(before, 60))
        self.assertTrue(service.service_is_up(self._row('compute1'), 60))

    def test_storage_identity_is_the_drivers(self):
        identity = self.svc.manager.driver.get_storage_identity()
        self.assertTrue(identity)
        self.assertEqual(identity, self._row('compute1').storage_identity)

    def test_a_remounted_storage_is_recorded_by_the_next_heartbeat(self):
        path = self.svc.manager.driver.settings.instances_path
        marker = storage_identity.marker_path(path)
        before = self._row('compute1').storage_identity
        with open(marker) as f:
            original = f.read()
        self.addCleanup(self._put_back, marker, original, before)
        new = '7d7d7d7d-7d7d-4d7d-8d7d-7d7d7d7d7d7d'
        with open(marker + '.new', 'w') as f:
            f.write(new + '\n')
        os.rename(marker + '.new', marker)
        self.assertTrue(base.wait_until(
            lambda: self._row('compute1').storage_identity == new))

    def _put_back(self, marker, original, identity):
        with open(marker + '.old', 'w') as f:
            f.write(original)
        os.rename(marker + '.old', marker)
        base.wait_until(
            lambda: self._row('compute1').storage_identity == identity)

    def test_heartbeats_keep_coming(self):
        first = self._row('compute1').report_count
        self.assertTrue(base.wait_until(
            lambda: self._row('compute1').report_count >= first + 3))

    def test_manager_and_ping_are_served_over_rpc(self):
        ctxt = nova_context.get_admin_context()
        client = rpc.get_client(messaging.Target(topic='compute'))
        answer = client.prepare(server='compute1', timeout=10).call(
            ctxt, 'echo', value=42)
        self.assertEqual({'host': 'compute1', 'value': 42}, answer)
        self.assertEqual(
            {'host': 'compute1', 'binary': 'nova-compute', 'arg': 'x'},
            service.BaseAPI('compute').ping(ctxt, 'compute1', 'x',
                                            timeout=10))

    def test_periodic_tasks_run(self):
        self.assertTrue(self.svc.manager.periodic_runs.wait(10))

    def test_companions_started(self):
        self.assertIn(('start', 'agent'), self.log)

    def test_forced_down_is_down_and_heartbeats_do_not_clear_it(self):
        ctxt = nova_context.get_admin_context()
        row = self._row('compute1')
        row.forced_down = True
        row.save()
        self.addCleanup(self._unforce)
        count = row.report_count
        base.wait_until(lambda: self._row('compute1').report_count > count + 2)
        row = self._row('compute1')
        self.assertTrue(row.forced_down)
        self.assertGreater(row.report_count, count)
        self.assertFalse(service.service_is_up(row, 60))
        self.assertTrue(objects.Service.get_by_id(ctxt, row.id).forced_down)

    def _unforce(self):
        row = self._row('compute1')
        row.forced_down = False
        row.save()


class TestServiceLifecycle(_DatabaseAndRPC, base.TestCase):

    def test_stop_releases_everything_in_reverse_and_goes_down(self):
        log = []
        svc = self._service('compute2', companions=[
            Companion('first', log), Companion('second', log)])
        svc.start()
        self.assertTrue(service.service_is_up(self._row('compute2'), 60))
        svc.stop()
        svc.stop()      # idempotent
        self.assertTrue(svc.wait(0))
        self.assertEqual([('start', 'first'), ('start', 'second'),
                          ('stop', 'second'), ('stop', 'first')], log)
        self.assertEqual(['init_host', 'cleanup_host'], svc.manager.calls)
        # No heartbeat after stop: the service falls down once
        # service_down_time has passed.
        count = self._row('compute2').report_count
        self.assertTrue(base.wait_until(
            lambda: not service.service_is_up(self._row('compute2'), 0.05)))
        self.assertEqual(count, self._row('compute2').report_count)
        # A restart finds its row again (no second row) and comes back up.
        again = self._service('compute2')
        again.start()
        self.addCleanup(again.stop)
        self.assertEqual(svc.service_ref.id, again.service_ref.id)
        self.assertTrue(service.service_is_up(self._row('compute2'), 60))

    def test_a_failed_start_releases_what_started(self):
        log = []
        svc = self._service('compute5', companions=[
            Companion('agent', log), Companion('broken', log, fail=True)])
        self.assertRaises(RuntimeError, svc.start)
        self.assertTrue(svc.wait(0))
        self.assertEqual([('start', 'agent'), ('stop', 'agent')], log)
        self.assertEqual(['init_host', 'cleanup_host'], svc.manager.calls)
        names = {t.name for t in threading.enumerate()}
        self.assertNotIn('heartbeat-nova-compute-compute5', names)

    def test_a_failed_heartbeat_is_logged_not_raised(self):
        svc = self._service('compute3', periodic_enable=False)
        svc.service_ref = objects.Service(
            nova_context.get_admin_context(), host='compute3',
            binary='nova-compute')
        svc.service_ref.create()
        objects_row = svc.service_ref
        # The row vanishes under the service (an operator deleted it).
        with db_api.session() as session:
            session.execute(sa.delete(models.Service).where(
                models.Service.id == objects_row.id))
        self.assertFalse(svc.heartbeat())
        self.assertRaises(exception.ServiceNotFound,
                          objects.Service.get_by_id,
                          nova_context.get_admin_context(), objects_row.id)

    def test_run_stops_services_on_sigterm(self):
        log = []

        def send_sigterm():
            # Sent once everything has started and the handler is set.
            threading.Thread(target=os.kill,
                             args=(os.getpid(), signal.SIGTERM)).start()

        svc = self._service('compute4', companions=[
            Companion('agent', log, on_start=send_sigterm)])
        previous = signal.getsignal(signal.SIGTERM)
        service.run([svc])
        self.assertTrue(svc.wait(0))
        self.assertEqual([('start', 'agent'), ('stop', 'agent')], log)
        self.assertEqual(['init_host', 'cleanup_host'], svc.manager.calls)
        self.assertIs(previous, signal.getsignal(signal.SIGTERM))


def _libvirt_test_driver(host, base_dir):
    """A LibvirtDriver on libvirt's test driver whose node file is not
    written yet: opening it fails in libvirt, as with libvirtd down."""
    node_path = os.path.join(base_dir, host, 'node.xml')
    settings = host_settings.HostSettings(
        host=host, instances_path=os.path.join(base_dir, host, 'instances'),
        connection_uri='test://' + node_path, vif_driver='noop')
    return libvirt_driver.LibvirtDriver(instance_events.ComputeVirtAPI(),
                                        settings), node_path


class TestHypervisorUnavailable(_DatabaseAndRPC, base.TestCase):
    """nova-compute with its hypervisor down: it waits, stays down and
    never crash-loops; once the hypervisor answers it starts normally."""

    retry = dict(init_retry_initial=0.01, init_retry_max=0.02)

    def _start_in_thread(self, svc):
        result = {}
        thread = threading.Thread(
            target=lambda: result.setdefault('started', svc.start()))
        thread.start()
        self.addCleanup(thread.join)
        return thread, result

    def _attempts(self, svc):
        return svc.manager.calls.count('init_host')

    def test_init_host_is_retried_and_the_service_then_comes_up(self):
        svc = self._service('down1', **self.retry)
        svc.manager.driver.fail_at('init_host', times=3)
        self.addCleanup(svc.stop)
        self.assertTrue(svc.start())
        self.assertEqual(4, self._attempts(svc))
        # No heartbeat while the hypervisor was unavailable.
        self.assertEqual([None] * 4, [row.last_seen_up
                                      for row in svc.manager.rows_at_init])
        self.assertTrue(service.service_is_up(self._row('down1'), 60))
        ctxt = nova_context.get_admin_context()
        self.assertEqual({'host': 'down1', 'value': 1},
                         rpc.get_client(messaging.Target(topic='compute'))
                         .prepare(server='down1', timeout=10)
                         .call(ctxt, 'echo', value=1))

    def test_other_init_host_failures_still_fail_the_start(self):
        svc = self._service('down2', **self.retry)
        svc.manager.driver.fail_at('init_host', exc=RuntimeError, times=1)
        self.assertRaises(RuntimeError, svc.start)
        self.assertEqual(1, self._attempts(svc))
        self.assertTrue(svc.wait(0))

    def test_stop_ends_the_wait_and_the_service_never_came_up(self):
        svc = self._service('down3', **self.retry)
        svc.manager.driver.fail_at('init_host', times=None)
        thread, result = self._start_in_thread(svc)
        self.assertTrue(base.wait_until(lambda: self._attempts(svc) >= 3))
        svc.stop()
        thread.join(timeout=10)
        self.assertFalse(thread.is_alive())
        self.assertEqual({'started': False}, result)
        self.assertEqual('cleanup_host', svc.manager.calls[-1])
        row = self._row('down3')
        self.assertIsNone(row.last_seen_up)
        self.assertEqual(0, row.report_count)
        self.assertNotIn('heartbeat-nova-compute-down3',
                         [t.name for t in threading.enumerate()])

    def test_sigterm_ends_the_wait_in_run(self):
        svc = self._service('down4', **self.retry)
        svc.manager.driver.fail_at('init_host', times=None)

        def send_sigterm_after_attempts():
            base.wait_until(lambda: self._attempts(svc) >= 3)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=send_sigterm_after_attempts).start()
        service.run([svc])
        self.assertTrue(svc.wait(0))
        self.assertGreaterEqual(self._attempts(svc), 3)
        self.assertEqual('cleanup_host', svc.manager.calls[-1])
        self.assertIsNone(self._row('down4').last_seen_up)

    def test_libvirt_answering_later_starts_the_service(self):
        driver, node_path = _libvirt_test_driver('down5', self.class_tmp)
        svc = self._service('down5', driver=driver, **self.retry)
        self.addCleanup(svc.stop)
        thread, result = self._start_in_thread(svc)
        self.assertTrue(base.wait_until(lambda: self._attempts(svc) >= 2))
        self.assertIsNone(self._row('down5').last_seen_up)
        fixtures.write_node_xml(node_path)      # libvirt answers now
        thread.join(timeout=10)
        self.assertEqual({'started': True}, result)
        self.assertTrue(service.service_is_up(self._row('down5'), 60))
        self.assertEqual([], driver.list_instance_uuids())

    def test_heartbeats_stop_while_libvirt_is_gone_and_resume(self):
        driver, node_path = _libvirt_test_driver('down6', self.class_tmp)
        fixtures.write_node_xml(node_path)
        # Heartbeats only when this test calls heartbeat().
        svc = self._service('down6', driver=driver, report_interval=3600,
                            periodic_enable=False)
        self.addCleanup(svc.stop)
        self.assertTrue(svc.start())
        count = self._row('down6').report_count
        self.assertTrue(driver.is_hypervisor_available())

        # libvirt goes away: the connection breaks and cannot be opened
        # again (the test driver's node file is gone).
        os.rename(node_path, node_path + '.away')
        driver.host.get_connection().close()
        self.assertFalse(driver.is_hypervisor_available())
        self.assertFalse(svc.heartbeat())
        self.assertFalse(svc.heartbeat())
        self.assertEqual(count, self._row('down6').report_count)
        self.assertRaises(exception.HypervisorUnavailable,
                          driver.list_instance_uuids)

        os.rename(node_path + '.away', node_path)
        self.assertTrue(svc.heartbeat())
        self.assertEqual(count + 1, self._row('down6').report_count)
        self.assertEqual([], driver.list_instance_uuids())
