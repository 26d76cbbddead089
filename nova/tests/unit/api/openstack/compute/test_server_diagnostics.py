"""GET /servers/{id}/diagnostics: the standard form from 2.48, the flat
one below, 409 unless the server runs."""

from nova.model import diagnostics
from nova.model import power_state
from nova.model import vm_states
from nova.tests.unit.api.openstack import fakes

STANDARD = {'state', 'driver', 'hypervisor', 'hypervisor_os', 'uptime',
            'config_drive', 'num_cpus', 'num_disks', 'num_nics',
            'memory_details', 'cpu_details', 'nic_details', 'disk_details'}
# What the compute host answers (no compute service runs here).
READ = diagnostics.Diagnostics(
    state='running', driver='libvirt', hypervisor='qemu',
    hypervisor_os='linux', memory_maximum=512, memory_used=256,
    cpu_details=(diagnostics.CpuDetails(id=0, time=1700),),
    nic_details=(diagnostics.NicDetails(mac_address='fa:16:3e:00:00:01',
                                        rx_octets=10, tx_octets=20),),
    disk_details=(diagnostics.DiskDetails(read_bytes=4096, read_requests=2,
                                          write_bytes=0, write_requests=0,
                                          errors_count=0),))


class ServerDiagnosticsTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.asked = []
        self.compute_rpc.get_instance_diagnostics = self.answer
        self.server = self.make_instance()

    def answer(self, ctxt, instance):
        self.asked.append(instance.uuid)
        return READ

    def get(self, server_id, version=None, token=fakes.ADMIN_TOKEN):
        return self.request('GET', '/v2.1/servers/%s/diagnostics'
                            % server_id, version=version, token=token)

    def test_standard_form_from_248(self):
        response = self.get(self.server.uuid, version='2.48')
        self.assertEqual(200, response.status_int, response.text)
        shown = response.json
        self.assertEqual(STANDARD, set(shown))
        self.assertEqual(
            ('running', 'libvirt', 1, 1, 1, {'maximum': 512, 'used': 256},
             [{'id': 0, 'time': 1700, 'utilisation': None}],
             'fa:16:3e:00:00:01', 4096),
            (shown['state'], shown['driver'], shown['num_cpus'],
             shown['num_disks'], shown['num_nics'], shown['memory_details'],
             shown['cpu_details'], shown['nic_details'][0]['mac_address'],
             shown['disk_details'][0]['read_bytes']))
        self.assertEqual([self.server.uuid], self.asked)

    def test_flat_form_below_248(self):
        response = self.get(self.server.uuid, version='2.47')
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual(
            {'cpu0_time': 1700, 'memory': 512 * 1024, 'disk0_read': 4096,
             'nic0_rx': 10, 'nic0_tx': 20},
            {k: response.json[k] for k in ('cpu0_time', 'memory',
                                           'disk0_read', 'nic0_rx',
                                           'nic0_tx')})

    def test_a_server_that_does_not_run_is_409(self):
        stopped = self.make_instance(name='off', vm_state=vm_states.STOPPED,
                                     power_state=power_state.SHUTDOWN)
        self.assertFault(self.get(stopped.uuid), 409, 'conflictingRequest')
        self.assertEqual([], self.asked)

    def test_admin_only_and_unknown_server(self):
        self.assertFault(self.get(self.server.uuid, token=fakes.USER_TOKEN),
                         403, 'forbidden')
        self.assertFault(self.get('6a3ed5a8-1c1e-4d53-8a6e-0a64b14c1f41'),
                         404, 'itemNotFound')
        self.assertEqual([], self.asked)
