"""[keystone_authtoken]: registered where the API is served, and there
alone; its values checked."""

import json
import os
import subprocess
import sys

from oslo_config import cfg

from nova import conf as nova_conf
from nova.conf import keystone as keystone_conf
from nova import exception
from nova.tests import base

# What importing keystonemiddleware.auth_token brings in, by top-level
# package: about 6 MiB and 170 modules no service but the API uses.
KSM_PACKAGES = ('keystonemiddleware', 'keystoneclient', 'oslo_cache',
                'dogpile', 'webob')
NOT_THE_API = ('nova.cmd.compute', 'nova.cmd.conductor',
               'nova.cmd.hamonitor', 'nova.cmd.manage')
# The checkout these tests are in (its nova/ first on the probe's path).
TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(nova_conf.__file__))))
# Run in a fresh interpreter: this process has loaded keystonemiddleware
# long ago (the API tests). The configuration is parsed as a service's is,
# so that an option registered at parse time would be seen too.
PROBE = '''
import json, sys
%s
from nova.conf import CONF
CONF([], project='nova', default_config_files=[])
print(json.dumps({
    'loaded': sorted({m.split('.')[0] for m in sys.modules
                      if m.split('.')[0] in %r}),
    'registered': %r in CONF}))
'''


class ServicesOtherThanTheAPITest(base.TestCase):

    def probe(self, code):
        """What is loaded and registered once ``code`` has run."""
        env = dict(os.environ)
        env['PYTHONPATH'] = os.pathsep.join(
            [TOP] + [p for p in [env.get('PYTHONPATH')] if p])
        result = subprocess.run(
            [sys.executable, '-W', 'ignore', '-c',
             PROBE % (code, KSM_PACKAGES, keystone_conf.GROUP)],
            capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(0, result.returncode, result.stderr)
        return json.loads(result.stdout.splitlines()[-1])

    def test_they_never_load_keystonemiddleware(self):
        for module in NOT_THE_API:
            self.assertEqual({'loaded': [], 'registered': False},
                             self.probe('import ' + module), module)

    def test_the_probe_sees_keystonemiddleware_when_it_is_loaded(self):
        # The check above could pass by looking in the wrong place.
        self.assertEqual(
            {'loaded': sorted(KSM_PACKAGES), 'registered': True},
            self.probe('import nova.cmd.api\n'
                       'nova.conf.register_api_opts()'))


class RegisterAPIOptsTest(base.TestCase):

    def _conf(self, text=''):
        path = os.path.join(self.tmp, 'nova.conf')
        with open(path, 'w') as f:
            f.write(text)
        conf = cfg.ConfigOpts()
        nova_conf.register_api_opts(conf)
        conf(['--config-file', path], project='nova',
             default_config_files=[])
        return conf

    def test_keystonemiddleware_and_keystoneauth_options(self):
        conf = self._conf('[keystone_authtoken]\n'
                          'www_authenticate_uri = http://ks:5000/v3\n'
                          'memcached_servers = mc:11211\n'
                          'auth_type = password\n')
        group = conf.keystone_authtoken
        self.assertEqual(('http://ks:5000/v3', ['mc:11211'], 'password'),
                         (group.www_authenticate_uri,
                          group.memcached_servers, group.auth_type))

    def test_registering_twice_is_harmless(self):
        conf = self._conf()
        nova_conf.register_api_opts(conf)
        self.assertIsNone(conf.keystone_authtoken.auth_type)

    def test_a_value_that_does_not_parse_is_refused(self):
        conf = self._conf('[keystone_authtoken]\n'
                          'http_connect_timeout = soon\n')
        with self.assertRaises(exception.InvalidConfiguration) as c:
            keystone_conf.check(conf)
        self.assertIn('[keystone_authtoken] http_connect_timeout',
                      str(c.exception))

    def test_good_values_pass(self):
        keystone_conf.check(self._conf('[keystone_authtoken]\n'
                                       'http_connect_timeout = 5\n'))

    def test_the_sample_lists_them_under_keystonemiddleware(self):
        # Not under nova.conf: the generator would list them twice.
        self.assertEqual({}, keystone_conf.list_opts())
        with open(os.path.join(TOP, 'etc', 'nova',
                               'nova-config-generator.conf')) as f:
            self.assertIn('namespace = keystonemiddleware.auth_token',
                          f.read().splitlines())
