"""Services against a real SQLite database and real fake:// RPC.

Starting a service is cheap, stopping one costs up to a second
(oslo.messaging's idle worker threads), so one service is shared by the
class where the tests only look at it.
"""

import os
import shutil
import signal
import tempfile
import threading
import time

import oslo_messaging as messaging
import sqlalchemy as sa

from nova.compute import instance_events
from nova.conf import host_settings
from nova import context as nova_context
from nova.db import api as db_api
from nova.db import migration
from nova.db import models
from nova import exception
from nova import objects
from nova import periodic
from nova import rpc
from nova import service
from nova.tests import base
from nova.virt import fake


def wait_until(predicate, timeout=10, interval=0.01):
    """Poll ``predicate`` until true; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


class Manager:
    """A small real manager: records its lifecycle, serves one method."""

    def __init__(self, host, instances_path):
        self.driver = fake.FakeDriver(
            instance_events.ComputeVirtAPI(),
            host_settings.HostSettings(host=host,
                                       instances_path=instances_path))
        self.host = host
        self.calls = []
        self.row_at_init = None
        self.periodic_runs = threading.Event()

    def init_host(self):
        self.calls.append('init_host')
        self.row_at_init = objects.Service.get_by_host_and_binary(
            nova_context.get_admin_context(), self.host, 'nova-compute')
        self.driver.init_host(self.host)

    def cleanup_host(self):
        self.calls.append('cleanup_host')

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
        rpc.init(url='fake://')

    @classmethod
    def tearDownClass(cls):
        rpc.cleanup()
        db_api.dispose()
        shutil.rmtree(cls.class_tmp, True)
        super().tearDownClass()

    @classmethod
    def _service(cls, host, **kw):
        manager = Manager(host, os.path.join(cls.class_tmp, host))
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
        self.assertEqual(self.svc.manager.driver.get_storage_identity(),
                         self._row('compute1').storage_identity)

    def test_heartbeats_keep_coming(self):
        first = self._row('compute1').report_count
        self.assertTrue(wait_until(
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
        wait_until(lambda: self._row('compute1').report_count > count + 2)
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
        self.assertTrue(wait_until(
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
