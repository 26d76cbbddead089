"""RPC across processes over a real RabbitMQ broker.

A ``nova-compute`` subprocess (libvirt's test driver, its own node file)
and this test process share a throwaway broker and a SQLite database. The
test measures the round trip of a ``call`` (``BaseAPI.ping``) and boots an
instance through the compute API: the cast crosses the broker, the
subprocess's network agent reports the VIF plugged back over RPC, and the
instance goes ACTIVE. SIGTERM stops the subprocess cleanly.

Needs ``rabbitmq-server`` (installed by ``tools/run-tests``); skipped
with the reason otherwise.
"""

import os
import signal
import statistics
import time
import unittest

from nova.cmd import all as all_cmd
from nova.compute import api as compute_api_mod
from nova.compute import rpcapi as compute_rpcapi
from nova.conductor import rpcapi as conductor_rpcapi
from nova.conf import CONF
from nova.conf import host_settings
from nova import context as nova_context
from nova.image import store as image_store
from nova.model import vm_states
from nova.network import api as network_api
from nova import objects
from nova.objects import network as network_obj
from nova import rpc
from nova import service
from nova.testing import rabbitmq
from nova.tests import base

HOST = 'rmq-compute1'
PINGS = 50
# Processes start and talk through a real broker: slower than in-process.
WAIT = 60


@unittest.skipIf(rabbitmq.available() is not None,
                 'RabbitMQ unavailable: %s' % rabbitmq.available())
class TestRabbitMQRPC(base.TestCase):

    def setUp(self):
        super().setUp()
        self.broker = rabbitmq.RabbitMQServer(
            os.path.join(self.tmp, 'rabbit'), port=rabbitmq.free_port())
        self.broker.start()
        self.addCleanup(self.broker.stop)
        db_url = self.use_database()
        rpc.cleanup()
        rpc.init(url=self.broker.url)
        self.addCleanup(rpc.cleanup)
        self.ctxt = nova_context.get_admin_context()

        node = os.path.join(self.tmp, HOST, 'node.xml')
        self.settings = host_settings.HostSettings(
            host=HOST, instances_path=os.path.join(self.tmp, HOST, 'inst'),
            connection_uri='test://' + node,
            image_store_path=os.path.join(self.state_path, 'images'))
        all_cmd.prepare_embedded_default(CONF, [self.settings])
        self.compute = self._start_compute(db_url)

    def _start_compute(self, db_url):
        conf = os.path.join(self.tmp, 'compute.conf')
        with open(conf, 'w') as f:
            f.write('\n'.join([
                '[DEFAULT]',
                'host = %s' % HOST,
                'state_path = %s' % self.state_path,
                'instances_path = %s' % self.settings.instances_path,
                'transport_url = %s' % self.broker.url,
                'report_interval = 1',
                '[database]',
                'connection = %s' % db_url,
                '[libvirt]',
                'connection_uri = %s' % self.settings.connection_uri,
                'virt_type = qemu',
                '[network]',
                'bridges = br-public',
                '']))
        self.compute_log = os.path.join(self.tmp, 'compute.log')
        popen = self.start_nova_process('nova.cmd.compute', conf,
                                        self.compute_log)
        self.assertTrue(base.wait_until(self._compute_is_up, timeout=WAIT),
                        'compute did not come up:\n' + self._log())
        return popen

    def _log(self):
        with open(self.compute_log) as f:
            return f.read()[-5000:]

    def _compute_is_up(self):
        try:
            row = objects.Service.get_by_host_and_binary(
                self.ctxt, HOST, 'nova-compute')
        except Exception:
            return False
        return service.service_is_up(row, 60)

    def test_call_latency_boot_and_clean_stop(self):
        base_api = service.BaseAPI('compute')
        self.assertEqual(HOST, base_api.ping(self.ctxt, HOST, 'warm',
                                             timeout=30)['host'])
        times = []
        for i in range(PINGS):
            started = time.perf_counter()
            answer = base_api.ping(self.ctxt, HOST, i, timeout=30)
            times.append((time.perf_counter() - started) * 1000)
            self.assertEqual(i, answer['arg'])
        times.sort()
        print('\nRabbitMQ RPC call round trip over %d calls: median %.2f ms, '
              'mean %.2f ms, p95 %.2f ms, max %.2f ms'
              % (PINGS, statistics.median(times), statistics.mean(times),
                 times[int(0.95 * (PINGS - 1))], times[-1]))

        api = compute_api_mod.API(compute_rpcapi.ComputeAPI(),
                                  conductor_rpcapi.ConductorAPI(),
                                  network_api=network_api.API())
        image = image_store.ImageStore(
            self.settings.image_store_path).find(all_cmd.DEFAULT_IMAGE_NAME)
        started = time.perf_counter()
        instance = api.create(self.ctxt, 'vm1', image.id, flavor_id='1')
        self.assertTrue(base.wait_until(lambda: objects.Instance.get_by_uuid(
            self.ctxt, instance.uuid).vm_state in (vm_states.ACTIVE,
                                                   vm_states.ERROR),
            timeout=WAIT))
        print('Boot to ACTIVE across processes: %.2f s'
              % (time.perf_counter() - started))
        instance = objects.Instance.get_by_uuid(self.ctxt, instance.uuid)
        self.assertEqual((vm_states.ACTIVE, HOST),
                         (instance.vm_state, instance.host), self._log())
        [port] = objects.Port.get_by_instance_uuid(self.ctxt, instance.uuid)
        self.assertEqual(network_obj.ACTIVE, port.status)

        self.compute.send_signal(signal.SIGTERM)
        self.assertEqual(0, self.compute.wait(60), self._log())
        self.assertIn('Stopped nova-compute on %s' % HOST, self._log())
