import os

from oslo_config import cfg

from nova import conf as nova_conf
from nova.conf import all_in_one
from nova import exception
from nova.tests import base


class TestAllInOneOptions(base.TestCase):
    """Parsed from real files into a private ConfigOpts (oslo.messaging
    plays no part here, so a private one is fine)."""

    def _conf(self, text=''):
        path = os.path.join(self.tmp, 'nova.conf')
        with open(path, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n' % self.state_path)
            f.write(text)
        conf = cfg.ConfigOpts()
        for module in nova_conf._MODULES:
            module.register_opts(conf)
        conf(['--config-file', path], project='nova',
             default_config_files=[])
        return conf

    def test_embedded_default_two_hosts_under_state_path(self):
        first, second = all_in_one.all_host_settings(self._conf())
        self.assertEqual(('compute1', 'compute2'), (first.host, second.host))
        self.assertEqual(
            os.path.join(self.state_path, 'hosts', 'compute1', 'instances'),
            first.instances_path)
        self.assertEqual(
            'test://%s' % os.path.join(self.state_path, 'hosts', 'compute2',
                                       'node.xml'),
            second.connection_uri)
        self.assertEqual(('br-public',), first.bridges)
        self.assertNotEqual(first.instances_path, second.instances_path)

    def test_hosts_and_their_groups_from_the_file(self):
        conf = self._conf('compute_hosts = a, b\n'
                          '[compute:b]\n'
                          'instances_path = /srv/shared/instances\n'
                          'connection_uri = qemu+unix:///system?socket=/s\n'
                          'bridges = br-public, br-private\n'
                          'vif_driver = linuxbridge\n'
                          '[network]\n'
                          'bridges = ignored-by-nova-all\n')
        a, b = all_in_one.all_host_settings(conf)
        self.assertEqual(('a', 'b'), (a.host, b.host))
        self.assertEqual(('br-public',), a.bridges)
        self.assertEqual('auto', a.vif_driver)
        self.assertEqual(('/srv/shared/instances',
                          'qemu+unix:///system?socket=/s',
                          ('br-public', 'br-private'), 'linuxbridge'),
                         (b.instances_path, b.connection_uri, b.bridges,
                          b.vif_driver))

    def test_repeated_host_names_are_refused(self):
        conf = self._conf('compute_hosts = a, a\n')
        self.assertRaises(exception.InvalidConfiguration,
                          all_in_one.all_host_settings, conf)

    def test_bad_vif_driver_is_refused(self):
        conf = self._conf('[compute:compute1]\nvif_driver = ovs\n')
        self.assertRaises(ValueError, all_in_one.all_host_settings, conf)

    def test_every_host_option_has_help(self):
        for opt in all_in_one.host_opts('x'):
            self.assertIn('``x``', opt.help, opt.name)

    def test_glance_backend_carries_the_service_user_to_every_host(self):
        conf = self._conf('[image]\nbackend = glance\n'
                          '[glance]\napi_servers = http://127.0.0.1:9292\n'
                          'auth_type = password\n'
                          'auth_url = http://127.0.0.1:5000/v3\n'
                          'username = nova\npassword = secret\n'
                          'project_name = service\n')
        for settings in all_in_one.all_host_settings(conf):
            self.assertEqual('glance', settings.image_backend)
            glance = settings.glance
            self.assertEqual(('http://127.0.0.1:9292', 'password'),
                             (glance.endpoint, glance.auth_type))
            self.assertEqual(
                {'auth_url': 'http://127.0.0.1:5000/v3',
                 'username': 'nova', 'password': 'secret',
                 'project_name': 'service'},
                {k: v for k, v in glance.auth_options
                 if k in ('auth_url', 'username', 'password',
                          'project_name')})

    def test_store_backend_has_no_glance_settings(self):
        first, _ = all_in_one.all_host_settings(self._conf())
        self.assertEqual(('store', None),
                         (first.image_backend, first.glance))
