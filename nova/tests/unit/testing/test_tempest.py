"""nova.testing.tempest: the configuration it writes and the totals it
reads (the run itself needs Keystone and Tempest: tools/tempest)."""

import configparser
import os
import re

from nova.testing import tempest
from nova.tests import base

# The tail of a real `tempest run` (stestr's summary).
OUTPUT = '''\
{0} tempest.api.compute.flavors.test_flavors.FlavorsV2TestJSON... ok

======
Totals
======
Ran: 13 tests in 4.5191 sec.
 - Passed: 9
 - Skipped: 1
 - Expected Fail: 0
 - Unexpected Success: 0
 - Failed: 3
Sum of execute time for each test: 2.6722 sec.
'''


class TestTempestConf(base.TestCase):

    def _parse(self, text):
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        return parser

    def test_every_missing_feature_is_declared_off_with_its_reason(self):
        text = tempest.tempest_conf('http://127.0.0.1:5000/v3', 'img-1',
                                    'flavor-1', '2.95')
        conf = self._parse(text)
        for section, features in tempest.UNSUPPORTED.items():
            for name, why in features.items():
                self.assertEqual('False', conf[section][name])
                # The reason sits on the line above the setting.
                self.assertIn('# %s\n%s = False' % (why, name), text)
        self.assertEqual('True', conf['service_available']['nova'])
        self.assertEqual('True', conf['service_available']['glance'])

    def test_compute_section_names_what_the_run_found(self):
        conf = self._parse(tempest.tempest_conf(
            'http://127.0.0.1:5000/v3', 'img-1', 'flavor-1', '2.95'))
        self.assertEqual('img-1', conf['compute']['image_ref'])
        self.assertEqual('flavor-1', conf['compute']['flavor_ref'])
        self.assertEqual('2.95', conf['compute']['max_microversion'])
        self.assertEqual('http://127.0.0.1:5000/v3',
                         conf['identity']['uri_v3'])
        self.assertEqual('False', conf['validation']['run_validation'])

    def test_nova_conf_puts_the_api_behind_keystone(self):
        base_dir = '/srv/tempest-run'
        conf = self._parse(tempest.nova_conf(base_dir, 8774,
                                             'http://127.0.0.1:5000/v3'))
        self.assertEqual('keystone', conf['api']['auth_strategy'])
        self.assertEqual('8774', conf['api']['listen_port'])
        self.assertEqual(tempest.SERVICE_USER[0],
                         conf['keystone_authtoken']['username'])
        self.assertEqual(os.path.join(base_dir, 'state'),
                         conf['DEFAULT']['state_path'])


class TestTotals(base.TestCase):

    def test_parses_stestr_summary(self):
        self.assertEqual(tempest.Totals(ran=13, passed=9, skipped=1,
                                        failed=3),
                         tempest.parse_totals(OUTPUT))

    def test_no_summary_is_all_zero(self):
        self.assertEqual(tempest.Totals(), tempest.parse_totals('boom\n'))

    def test_missing_venv_says_how_to_get_it(self):
        reason = tempest.missing_reason('/nonexistent-venv')
        self.assertIn('tools/tempest', reason)


class TestExcludeList(base.TestCase):

    def test_each_regex_has_its_reason_above_it(self):
        lines = tempest.exclude_list().splitlines()
        self.assertEqual(2 * len(tempest.EXCLUDED), len(lines))
        for why_line, regex in zip(lines[::2], lines[1::2]):
            re.compile(regex)
            self.assertEqual('# %s' % tempest.EXCLUDED[regex], why_line)


class TestAltRefs(base.TestCase):

    def test_alt_image_and_flavor_default_to_the_first(self):
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(tempest.tempest_conf(
            'http://k/v3', 'img-1', 'flavor-1', '2.95'))
        self.assertEqual(('img-1', 'flavor-1'), (
            parser['compute']['image_ref_alt'],
            parser['compute']['flavor_ref_alt']))
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(tempest.tempest_conf(
            'http://k/v3', 'img-1', 'flavor-1', '2.95', flavor_alt='f2'))
        self.assertEqual('f2', parser['compute']['flavor_ref_alt'])
