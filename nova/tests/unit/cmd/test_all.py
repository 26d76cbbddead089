import os
from unittest import mock

from nova.cmd import all as all_cmd
from nova.conf import CONF
from nova.conf import host_settings
from nova import context as nova_context
from nova.image import qemu_img
from nova.image import store as image_store
from nova.network import agent as network_agent
from nova import objects
from nova.objects import flavor_catalog
from nova import rpc
from nova.tests import base


class TestNodeFile(base.TestCase):

    def test_written_when_missing_kept_when_present(self):
        path = os.path.join(self.tmp, 'h1', 'node.xml')
        self.assertEqual(path, all_cmd.write_node_file('test://' + path))
        with open(path) as f:
            self.assertIn('<node>', f.read())
        # The file is the host's state: never overwritten.
        with open(path, 'w') as f:
            f.write('<node><!-- mine --></node>')
        self.assertIsNone(all_cmd.write_node_file('test://' + path))
        with open(path) as f:
            self.assertIn('mine', f.read())

    def test_other_uris_are_left_alone(self):
        for uri in ('qemu:///system', 'test:///default', 'test://rel.xml',
                    ''):
            self.assertIsNone(all_cmd.write_node_file(uri), uri)


class TestEmbeddedDefault(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctxt = nova_context.get_admin_context()

    def test_image_is_a_tiny_qcow2_added_once(self):
        store_path = os.path.join(self.tmp, 'images')
        meta = all_cmd.ensure_default_image(store_path)
        again = all_cmd.ensure_default_image(store_path)
        self.assertEqual(meta.id, again.id)
        store = image_store.ImageStore(store_path)
        self.assertEqual([meta.id], [m.id for m in store.list()])
        info = qemu_img.info(store.data_path(meta.id))
        self.assertEqual('qcow2', info.format)
        self.assertEqual(all_cmd.DEFAULT_IMAGE_SIZE, info.virtual_size)
        # No scratch directory is left in the store.
        self.assertEqual(sorted([meta.id + '.img', meta.id + '.json']),
                         sorted(os.listdir(store_path)))

    def test_prepare_is_idempotent(self):
        settings = [host_settings.HostSettings(
            host=name, instances_path=os.path.join(self.tmp, name),
            connection_uri='test://%s/%s/node.xml' % (self.tmp, name))
            for name in ('compute1', 'compute2')]
        for _ in range(2):
            all_cmd.prepare_embedded_default(CONF, settings)
        flavor = flavor_catalog.get_by_flavor_id(self.ctxt, '1')
        self.assertEqual(('m1.tiny', 64, 1, 1),
                         (flavor.name, flavor.memory_mb, flavor.vcpus,
                          flavor.root_gb))
        self.assertEqual(1, len(flavor_catalog.get_all(self.ctxt)))
        [network] = objects.Network.get_all(self.ctxt)
        self.assertEqual(('public', 'br-public'),
                         (network.name, network.bridge))
        self.assertEqual(1, len(image_store.ImageStore(
            CONF.image.store_path).list()))
        for name in ('compute1', 'compute2'):
            self.assertTrue(os.path.isfile(
                os.path.join(self.tmp, name, 'node.xml')))


class TestAllInOne(base.TestCase):

    def setUp(self):
        super().setUp()
        rpc.cleanup()
        rpc.init(url='inproc://')
        self.addCleanup(rpc.cleanup)

    def test_services_in_start_order_each_host_with_its_agent(self):
        settings = [host_settings.HostSettings(
            host=name, instances_path=os.path.join(self.tmp, name),
            connection_uri='test://%s/%s/node.xml' % (self.tmp, name),
            bridges=('br-public',))
            for name in ('c1', 'c2')]
        deployment = all_cmd.AllInOne(CONF, settings, with_api=False)
        self.assertEqual(
            [('nova-conductor', CONF.host), ('nova-compute', 'c1'),
             ('nova-compute', 'c2')],
            [(s.binary, s.host) for s in deployment.services])
        for svc in deployment.services[1:]:
            [agent] = svc.companions
            self.assertIsInstance(agent, network_agent.NetworkAgent)
            self.assertIs(svc.manager.driver, agent.driver)
            self.assertIn('br-public', agent.bridges)


class Stop(Exception):
    """Ends main() once the configuration would be parsed."""


class TestMain(base.TestCase):

    def test_api_options_registered_before_the_files_are_parsed(self):
        # nova-all serves the API: it registers [keystone_authtoken],
        # which the other services never do.
        calls = mock.Mock()
        calls.prepare_service.side_effect = Stop
        with mock.patch.object(all_cmd.nova_conf, 'register_api_opts',
                               calls.register_api_opts), \
                mock.patch.object(all_cmd.service, 'prepare_service',
                                  calls.prepare_service):
            self.assertRaises(Stop, all_cmd.main, [])
        self.assertEqual(
            [mock.call.register_api_opts(),
             mock.call.prepare_service(
                 all_cmd.BINARY, [],
                 default_transport_url=all_cmd.DEFAULT_TRANSPORT_URL)],
            calls.mock_calls)
