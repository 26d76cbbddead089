import os
import re
import subprocess
import sys

from oslo_config import generator

from nova.conf import host_settings
from nova.conf import opts
from nova.tests import base

REQUIRED = {
    'DEFAULT': ('host', 'state_path', 'instances_path', 'compute_driver',
                'vif_plugging_timeout', 'vif_plugging_is_fatal',
                'resume_guests_state_on_host_boot', 'service_down_time'),
    'libvirt': ('connection_uri', 'virt_type'),
    'database': ('connection',),
}


class TestListOpts(base.TestCase):

    def _by_group(self):
        grouped = {}
        for group, group_opts in opts.list_opts():
            name = getattr(group, 'name', group)
            grouped.setdefault(name, []).extend(group_opts)
        return grouped

    def test_required_options_exist_with_help(self):
        grouped = self._by_group()
        for group, names in REQUIRED.items():
            present = {o.name: o for o in grouped[group]}
            for name in names:
                self.assertIn(name, present, '%s.%s' % (group, name))
                self.assertTrue(present[name].help.strip(),
                                '%s.%s has no help' % (group, name))

    def test_every_option_has_help(self):
        for group, group_opts in self._by_group().items():
            for opt in group_opts:
                self.assertTrue((opt.help or '').strip(),
                                '%s.%s has no help' % (group, opt.name))

    def test_defaults_match_nova(self):
        from nova.conf import CONF
        self.assertEqual(300, CONF.vif_plugging_timeout)
        self.assertTrue(CONF.vif_plugging_is_fatal)
        self.assertFalse(CONF.resume_guests_state_on_host_boot)

    def test_generator_writes_sample_with_every_required_option(self):
        out = os.path.join(self.tmp, 'nova.conf.sample')
        conf = generator.cfg.ConfigOpts()
        generator.register_cli_opts(conf)
        conf(['--namespace', 'nova.conf', '--output-file', out,
              '--wrap-width', '0'])
        generator.generate(conf)
        with open(out) as f:
            sample = f.read()
        for group, names in REQUIRED.items():
            self.assertIn('[%s]' % group, sample)
            for name in names:
                self.assertRegex(sample, re.compile(
                    r'^#%s =' % name, re.MULTILINE))
        self.assertIn('network-vif-plugged', sample)

    def test_genconfig_entry_point_is_registered(self):
        # tox -e genconfig relies on the oslo.config.opts entry point.
        result = subprocess.run(
            [sys.executable, '-c',
             'from importlib.metadata import entry_points;'
             'print([e.value for e in entry_points('
             'group="oslo.config.opts") if e.name == "nova.conf"])'],
            capture_output=True, text=True, check=True)
        self.assertIn('nova.conf.opts:list_opts', result.stdout)


class TestHostSettings(base.TestCase):

    def test_from_conf_uses_absolute_paths(self):
        from nova.conf import CONF
        self.flags(host='compute9', instances_path='relative/instances')
        settings = host_settings.HostSettings.from_conf(CONF)
        self.assertEqual('compute9', settings.host)
        self.assertTrue(os.path.isabs(settings.instances_path))
        self.assertEqual(300, settings.vif_plugging_timeout)

    def test_replace_gives_a_new_value(self):
        from nova.conf import CONF
        settings = host_settings.HostSettings.from_conf(CONF)
        other = settings.replace(host='other')
        self.assertEqual('other', other.host)
        self.assertNotEqual(settings.host, other.host)


class TestSampleIsCurrent(base.TestCase):

    def test_committed_sample_matches_the_options(self):
        # tox -e genconfig regenerates it; a stale sample misleads operators.
        top = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
        committed = os.path.join(top, 'etc', 'nova', 'nova.conf.sample')
        out = os.path.join(self.tmp, 'nova.conf.sample')
        conf = generator.cfg.ConfigOpts()
        generator.register_cli_opts(conf)
        conf(['--config-file', os.path.join(top, 'etc', 'nova',
                                            'nova-config-generator.conf'),
              '--output-file', out])
        generator.generate(conf)
        with open(committed) as a, open(out) as b:
            self.assertEqual(a.read(), b.read(),
                             'run tox -e genconfig and commit the sample')
