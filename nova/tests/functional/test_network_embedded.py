"""Fixed addresses in the embedded default, booted for real.

``nova-all``'s embedded default (``prepare_embedded_default``) and its
services (``AllInOne``) in one process: two compute hosts on libvirt's
test driver, each with its network agent, ``inproc://`` RPC and a real
SQLite database. A boot takes the whole path, and what ``nova list``
prints for it (``public=172.24.4.8`` in the report of Nova bug 1660647)
is built from the instance row as the REST API and the CLI build it.
"""

import time

from nova.api.openstack.compute.views import servers as servers_view
from nova.cli import servers as cli_servers
from nova.cmd import all as all_cmd
from nova.cmd import api as api_cmd
from nova.conf import CONF
from nova import exception
from nova.model import vm_states
from nova.network import api as network_api
from nova import objects
from nova.objects import network as network_obj
from nova.tests.functional import test_services

HOSTS = ('compute1', 'compute2')
WAIT_SECONDS = 30


class TestEmbeddedNetwork(test_services.AllInOneTestCase):

    def wait_built(self, instance):
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            row = objects.Instance.get_by_uuid(self.ctxt, instance.uuid)
            if row.vm_state in (vm_states.ACTIVE, vm_states.ERROR):
                return row
            if time.monotonic() > deadline:
                self.fail('gave up waiting for the build of %s'
                          % instance.uuid)
            time.sleep(0.05)

    def boot(self, name, compute_api=None, **kwargs):
        compute_api = compute_api or self.deployment.compute_api
        instance = compute_api.create(self.ctxt, name, self.image.id,
                                      flavor_id='1', **kwargs)
        row = self.wait_built(instance)
        self.assertEqual(vm_states.ACTIVE, row.vm_state)
        return row

    @staticmethod
    def networks_column(instance):
        """The ``Networks`` column of ``nova list`` for ``instance``."""
        return cli_servers.networks_text(
            servers_view.addresses(instance.network_info))

    def test_public_has_its_subnet_and_boots_show_addresses(self):
        [public] = objects.Network.get_all(self.ctxt)
        self.assertEqual(('public', 'br-public', '172.24.4.0/24'),
                         (public.name, public.bridge, public.cidr))

        first = self.boot('vm1')
        second = self.boot('vm2', networks=[{'uuid': public.uuid}])

        self.assertEqual('public=172.24.4.2', self.networks_column(first))
        self.assertEqual('public=172.24.4.3', self.networks_column(second))
        for row in (first, second):
            [port] = objects.Port.get_by_instance_uuid(self.ctxt, row.uuid)
            self.assertEqual((row.host, network_obj.ACTIVE),
                             (port.binding_host, port.status))
            self.assertEqual((port.ip_address,), row.network_info[0].ips)

    def test_delete_releases_the_ports_and_their_addresses(self):
        first = self.boot('vm1')
        self.assertEqual('public=172.24.4.2', self.networks_column(first))
        self.deployment.compute_api.delete(self.ctxt, first)
        deadline = time.monotonic() + WAIT_SECONDS
        while not objects.Instance.get_by_uuid(
                self.ctxt, first.uuid, read_deleted='yes').deleted:
            if time.monotonic() > deadline:
                self.fail('gave up waiting for the delete')
            time.sleep(0.05)
        self.assertEqual([], objects.Port.get_by_instance_uuid(
            self.ctxt, first.uuid))
        # The address is free again for the next boot.
        again = self.boot('vm2')
        self.assertEqual('public=172.24.4.2', self.networks_column(again))

    def test_a_bad_network_leaves_no_instance_and_no_port(self):
        with self.assertRaises(exception.NetworkNotFound):
            self.deployment.compute_api.create(
                self.ctxt, 'vm', self.image.id, flavor_id='1',
                networks=[{'uuid': '77777777-7777-4777-8777-777777777777'}])
        self.assertEqual([], objects.Instance.get_all(self.ctxt,
                                                      include_deleted=True))
        [public] = objects.Network.get_all(self.ctxt)
        self.assertEqual([], objects.Port.get_by_network_uuid(self.ctxt,
                                                              public.uuid))

    def test_standalone_api_allocates_ports_too(self):
        # nova-api's compute API, casting to this deployment's hosts.
        compute_api = api_cmd.build_compute_api()
        self.assertIsInstance(compute_api.network_api, network_api.API)
        row = self.boot('vm1', compute_api=compute_api)
        self.assertEqual('public=172.24.4.2', self.networks_column(row))

    def test_existing_public_without_subnet_gets_it(self):
        # A state directory from before networks had subnets.
        [public] = objects.Network.get_all(self.ctxt)
        public.cidr = None
        public.save()
        all_cmd.prepare_embedded_default(CONF, self.settings)
        self.assertEqual('172.24.4.0/24', objects.Network.get_by_uuid(
            self.ctxt, public.uuid).cidr)
        self.assertEqual(1, len(objects.Network.get_all(self.ctxt)))
