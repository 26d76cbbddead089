"""keystoneauth's options of [glance], [network] and [masakari]:
registered by the code that reads them (importing keystoneauth1 costs a
process about 6 MiB), and read from the configuration files alike.

``nova/tests/unit/cmd/test_footprint.py`` checks that the services do not
load keystoneauth1 when nothing reads them.
"""

import os

from oslo_config import cfg

from nova import conf as nova_conf
from nova.conf import glance as glance_conf
from nova.conf import host_settings
from nova.conf import masakari as masakari_conf
from nova.conf import network as network_conf
from nova.ha import masakari
from nova.network import events
from nova.tests import base

CREDENTIALS = ('auth_type = password\n'
               'auth_url = http://127.0.0.1:1/v3\n'
               'username = nova\npassword = secret\n'
               'project_name = service\n'
               'user_domain_name = Default\n'
               'project_domain_name = Default\n')


class KeystoneauthOptionsTest(base.TestCase):

    def _conf(self, text, modules=(glance_conf, masakari_conf,
                                   network_conf)):
        """A configuration of its own, parsed from ``text``, with what
        importing nova.conf registers of ``modules``."""
        path = os.path.join(self.tmp, 'nova.conf')
        with open(path, 'w') as f:
            f.write(text)
        conf = cfg.ConfigOpts()
        for module in modules:
            module.register_opts(conf)
        conf(['--config-file', path], project='nova',
             default_config_files=[])
        return conf

    def test_not_registered_with_the_other_options(self):
        conf = self._conf('')
        for group in ('glance', 'masakari', 'network'):
            self.assertNotIn('auth_type', conf[group], group)
        self.assertEqual([], conf.glance.api_servers)

    def test_glance_settings_read_them(self):
        conf = self._conf('[glance]\n'
                          'api_servers = http://127.0.0.1:9292\n'
                          'valid_interfaces = internal\n'
                          'region_name = RegionTwo\n' + CREDENTIALS)
        settings = host_settings.GlanceSettings.from_conf(conf)
        self.assertEqual(
            ('http://127.0.0.1:9292', 'image', ('internal',), 'RegionTwo',
             'password'),
            (settings.endpoint, settings.service_type, settings.interfaces,
             settings.region_name, settings.auth_type))
        self.assertIn(('username', 'nova'), settings.auth_options)

    def test_glance_settings_without_a_service_user(self):
        conf = self._conf('[glance]\nendpoint_override = http://g:9292\n')
        settings = host_settings.GlanceSettings.from_conf(conf)
        self.assertEqual(('http://g:9292', None, ()),
                         (settings.endpoint, settings.auth_type,
                          settings.auth_options))

    def test_network_events_read_the_keystone_credentials(self):
        conf = self._conf('[network]\n'
                          'events_api_url = http://127.0.0.1:1/v2.1\n'
                          + CREDENTIALS)
        sender = events.build_sender(conf, 'h', compute_rpcapi=object())
        self.assertIsInstance(sender.tokens, events.KeystoneToken)

    def test_network_events_without_credentials_send_the_token(self):
        conf = self._conf('[network]\n'
                          'events_api_url = http://127.0.0.1:1/v2.1\n'
                          'events_api_token = t0ken\n')
        sender = events.build_sender(conf, 'h', compute_rpcapi=object())
        self.assertEqual('t0ken', sender.tokens.get())

    def test_masakari_notifier_reads_them_with_its_defaults(self):
        conf = self._conf('[masakari]\nauth_type = none\n'
                          'endpoint_override = http://127.0.0.1:9/v1\n')
        notifier = masakari.Notifier.from_conf(conf)
        self.assertEqual('http://127.0.0.1:9/v1',
                         notifier.adapter.get_endpoint())
        self.assertEqual(('instance-ha', 30), (conf.masakari.service_type,
                                               conf.masakari.timeout))

    def test_a_value_that_does_not_parse_stops_the_reader(self):
        conf = self._conf('[masakari]\nauth_type = none\n'
                          'endpoint_override = http://127.0.0.1:9/v1\n'
                          'timeout = soon\n')
        self.assertRaises(cfg.ConfigFileValueError,
                          masakari.Notifier.from_conf, conf)

    def test_registering_them_all_twice_is_harmless(self):
        conf = self._conf('[masakari]\ntimeout = 5\n')
        nova_conf.register_keystoneauth_opts(conf)
        nova_conf.register_keystoneauth_opts(conf)
        host_settings.GlanceSettings.from_conf(conf)
        self.assertEqual(
            ('image', 'instance-ha', 5, None),
            (conf.glance.service_type, conf.masakari.service_type,
             conf.masakari.timeout, conf.network.auth_type))
