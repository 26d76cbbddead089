"""nova-all in one process: services, RPC, heartbeats and the network agent.

Two compute hosts on libvirt's test driver (one node file each), the
conductor, one ``inproc://`` transport and a real SQLite database, built by
``nova.cmd.all.AllInOne`` exactly as ``nova-all`` builds them. A boot goes
the whole way: compute API -> RPC cast -> compute manager -> libvirt
driver plugs the VIF -> that host's network agent marks the port ACTIVE and
sends network-vif-plugged through the compute API -> RPC -> the waiting
manager -> the guest runs.
"""

import json
import os
import re
import signal
import threading
import urllib.request

from nova.cmd import all as all_cmd
from nova.conf import CONF
from nova.conf import host_settings
from nova import context as nova_context
from nova.db import api as db_api
from nova.image import store as image_store
from nova.model import power_state
from nova.model import vm_states
from nova import objects
from nova.objects import flavor_catalog
from nova.objects import network as network_obj
from nova import rpc
from nova import service
from nova.tests import base

HOSTS = ('compute1', 'compute2')


class AllInOneTestCase(base.TestCase):
    """nova-all's services started in this process (no tests of its own)."""

    def setUp(self):
        super().setUp()
        self.use_database()
        rpc.cleanup()
        rpc.init(url='inproc://')
        self.addCleanup(rpc.cleanup)
        self.ctxt = nova_context.get_admin_context()
        images = os.path.join(self.state_path, 'images')
        self.settings = [host_settings.HostSettings(
            host=name,
            instances_path=os.path.join(self.tmp, name, 'instances'),
            connection_uri='test://%s' % os.path.join(self.tmp, name,
                                                      'node.xml'),
            virt_type='qemu', bridges=('br-public',),
            vif_plugging_timeout=20, shutdown_timeout=1,
            wait_running_timeout=5, image_store_path=images)
            for name in HOSTS]
        all_cmd.prepare_embedded_default(CONF, self.settings)
        self.deployment = all_cmd.AllInOne(
            CONF, self.settings, with_api=False,
            compute_driver='libvirt.LibvirtDriver',
            report_interval=0.05, periodic_fuzzy_delay=0)
        self.deployment.start()
        self.addCleanup(self.deployment.stop)
        self.image = image_store.ImageStore(images).find(
            all_cmd.DEFAULT_IMAGE_NAME)

    def _row(self, host):
        return objects.Service.get_by_host_and_binary(self.ctxt, host,
                                                      'nova-compute')

    def _boot(self, name):
        instance = self.deployment.compute_api.create(
            self.ctxt, name, self.image.id, flavor_id='1')
        self.assertTrue(base.wait_until(lambda: objects.Instance.get_by_uuid(
            self.ctxt, instance.uuid).vm_state in (vm_states.ACTIVE,
                                                   vm_states.ERROR)))
        return objects.Instance.get_by_uuid(self.ctxt, instance.uuid)


class TestAllInOne(AllInOneTestCase):

    def test_embedded_default_is_ready(self):
        flavor = flavor_catalog.get_by_flavor_id(self.ctxt, '1')
        self.assertEqual(('m1.tiny', 64, 1, 1),
                         (flavor.name, flavor.memory_mb, flavor.vcpus,
                          flavor.root_gb))
        self.assertEqual('qcow2', self.image.disk_format)
        [network] = objects.Network.get_all(self.ctxt)
        self.assertEqual(('public', 'br-public'),
                         (network.name, network.bridge))
        for settings in self.settings:
            uri_path = settings.connection_uri[len('test://'):]
            self.assertTrue(os.path.isfile(uri_path))
        # Running it again changes nothing.
        all_cmd.prepare_embedded_default(CONF, self.settings)
        self.assertEqual(1, len(objects.Network.get_all(self.ctxt)))
        self.assertEqual(1, len(image_store.ImageStore(
            self.image_store_path()).list()))

    def image_store_path(self):
        return self.settings[0].image_store_path

    def test_boot_reaches_active_through_rpc_and_the_network_agent(self):
        booted = [self._boot('vm%d' % i) for i in range(2)]
        for instance in booted:
            self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                             (instance.vm_state, instance.task_state,
                              instance.power_state), instance.uuid)
            self.assertIn(instance.host, HOSTS)
            driver = self.deployment.computes[instance.host].manager.driver
            self.assertIn(instance.uuid, driver.list_instance_uuids())
            [port] = objects.Port.get_by_instance_uuid(self.ctxt,
                                                       instance.uuid)
            # The agent of that host marked it; its event let it run.
            self.assertEqual((network_obj.ACTIVE, instance.host),
                             (port.status, port.binding_host))
        # Spreading: the second boot went to the other host.
        self.assertEqual(set(HOSTS), {i.host for i in booted})

    def test_heartbeats_down_after_service_down_time_and_forced_down(self):
        first = self._row('compute1').report_count
        self.assertTrue(base.wait_until(
            lambda: self._row('compute1').report_count >= first + 3))
        for host in HOSTS:
            self.assertTrue(service.service_is_up(self._row(host), 60))
            self.assertIsNotNone(self._row(host).storage_identity)
        self.assertNotEqual(self._row('compute1').storage_identity,
                            self._row('compute2').storage_identity)

        # compute2 stops: once service_down_time passed it reads as down.
        self.deployment.computes['compute2'].stop()
        self.assertTrue(base.wait_until(
            lambda: not service.service_is_up(self._row('compute2'), 0.3)))
        self.assertTrue(service.service_is_up(self._row('compute1'), 60))

        # An operator forces compute1 down: down at once, and heartbeats
        # do not bring it back.
        row = self._row('compute1')
        row.forced_down = True
        row.save()
        count = row.report_count
        self.assertTrue(base.wait_until(
            lambda: self._row('compute1').report_count > count + 2))
        self.assertFalse(service.service_is_up(self._row('compute1'), 60))

    def test_stop_ends_every_service_thread(self):
        self.deployment.stop()
        self.assertTrue(all(s.wait(0) for s in self.deployment.services))
        names = {t.name for t in threading.enumerate()}
        for host in HOSTS:
            self.assertNotIn('heartbeat-nova-compute-%s' % host, names)
            self.assertNotIn('network-agent-%s' % host, names)


class TestStopDuringABoot(AllInOneTestCase):
    """A compute service that stops while a boot waits for its VIF event
    ends that boot (cleaned up as a failed spawn) instead of holding the
    stop for ``vif_plugging_timeout``."""

    def test_stop_cancels_the_wait_and_the_spawn_cleans_up(self):
        compute1 = self.deployment.computes['compute1']
        # The agent that would send network-vif-plugged is stopped, and
        # compute2 is disabled, so the boot lands on compute1 and waits.
        for agent in compute1.companions:
            agent.stop()
        row = self._row('compute2')
        row.disabled = True
        row.save()
        instance = self.deployment.compute_api.create(
            self.ctxt, 'waiting', self.image.id, flavor_id='1')
        driver = compute1.manager.driver
        inst_dir = os.path.join(self.settings[0].instances_path,
                                instance.uuid)
        self.assertTrue(base.wait_until(lambda: os.path.isdir(inst_dir)))

        stopper = threading.Thread(target=compute1.stop)
        stopper.start()
        # vif_plugging_timeout is 20 s here: only the cancellation can end
        # the stop within this bound.
        stopper.join(15)
        self.assertFalse(stopper.is_alive())

        row = objects.Instance.get_by_uuid(self.ctxt, instance.uuid)
        self.assertEqual((vm_states.ERROR, None),
                         (row.vm_state, row.task_state))
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctxt, instance.uuid)
        self.assertIn('stopping', fault.message)
        self.assertNotIn(instance.uuid, driver.list_instance_uuids())
        self.assertFalse(os.path.exists(inst_dir))


class TestNovaAllProcess(base.TestCase):
    """The ``nova-all`` console script itself, as an operator runs it."""

    def _log(self):
        with open(self.log_path) as f:
            return f.read()

    def test_embedded_default_boots_over_rest_and_stops_on_sigterm(self):
        state = os.path.join(self.tmp, 'state-all')
        conf = os.path.join(self.tmp, 'nova.conf')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n'
                    '[api]\nlisten_port = 0\n' % state)
        self.log_path = os.path.join(self.tmp, 'nova-all.log')
        popen = self.start_nova_process('nova.cmd.all', conf, self.log_path)

        listening = re.compile(r'listening on (http://\S+)')
        self.assertTrue(base.wait_until(lambda: listening.search(self._log())),
                        self._log())
        endpoint = listening.search(self._log()).group(1) + '/v2.1'
        db_api.configure('sqlite:///' + os.path.join(state, 'nova.sqlite'))
        self.addCleanup(db_api.dispose)
        ctxt = nova_context.get_admin_context()
        rows = objects.Service.get_all(ctxt)
        self.assertEqual(
            {('nova-compute', 'compute1'), ('nova-compute', 'compute2'),
             ('nova-conductor', CONF.host)},
            {(r.binary, r.host) for r in rows})
        self.assertTrue(all(service.service_is_up(r, 60) for r in rows))

        image = image_store.ImageStore(os.path.join(state, 'images')).find(
            all_cmd.DEFAULT_IMAGE_NAME)
        server = self._request(endpoint, '/servers', {'server': {
            'name': 'vm1', 'imageRef': image.id, 'flavorRef': '1'}})
        uuid = server['server']['id']
        self.assertTrue(base.wait_until(lambda: self._request(
            endpoint, '/servers/' + uuid)['server']['status'] in (
                'ACTIVE', 'ERROR')))
        self.assertEqual('ACTIVE', self._request(
            endpoint, '/servers/' + uuid)['server']['status'], self._log())

        popen.send_signal(signal.SIGTERM)
        self.assertEqual(0, popen.wait(60), self._log())
        self.assertIn('Stopped nova-conductor', self._log())

    @staticmethod
    def _request(endpoint, path, body=None):
        request = urllib.request.Request(
            endpoint + path, method='POST' if body is not None else 'GET',
            data=json.dumps(body).encode() if body is not None else None,
            headers={'X-Auth-Token': 'admin:admin',
                     'Content-Type': 'application/json'})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
