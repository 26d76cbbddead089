"""Admin-only and owner rules, the operator's policy file, the sample."""

import os

from oslo_config import cfg
from oslo_policy import generator

from nova.api.openstack import policy
from nova import context as nova_context
from nova import exception
from nova.tests import base

ADMIN_ONLY = ('os_compute_api:os-evacuate',
              'os_compute_api:os-admin-actions:reset_state',
              'os_compute_api:os-services:list',
              'os_compute_api:os-services:update',
              'os_compute_api:os-migrations:index',
              'os_compute_api:os-server-external-events:create')


class PolicyTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.admin = nova_context.get_admin_context()
        self.user = nova_context.RequestContext(user_id='u', project_id='p')

    def test_admin_only_rules(self):
        for rule in ADMIN_ONLY:
            with self.subTest(rule=rule):
                policy.authorize(self.admin, rule)
                with self.assertRaises(exception.PolicyNotAuthorized) as c:
                    policy.authorize(self.user, rule, 'p')
                self.assertEqual(403, c.exception.code)
                self.assertIn(rule, c.exception.format_message())

    def test_owner_rules(self):
        rule = 'os_compute_api:servers:start'
        self.assertTrue(policy.check(self.user, rule, 'p'))
        self.assertFalse(policy.check(self.user, rule, 'other'))
        self.assertTrue(policy.check(self.admin, rule, 'other'))

    def test_user_rules(self):
        # Key pairs belong to users: the project does not matter.
        rule = 'os_compute_api:os-keypairs:show'
        self.assertTrue(policy.check(self.user, rule))
        self.assertTrue(policy.check(self.user, rule, 'other', 'u'))
        self.assertFalse(policy.check(self.user, rule, 'p', 'v'))
        self.assertTrue(policy.check(self.admin, rule, 'p', 'v'))

    def test_unknown_rule_is_a_bug(self):
        self.assertRaises(KeyError, policy.check, self.admin, 'no:such')


class PolicyFileTest(base.TestCase):
    """An operator's policy file, read through oslo.policy."""

    def setUp(self):
        super().setUp()
        policy.reset()
        self.addCleanup(policy.reset)
        policy.get_enforcer()       # registers [oslo_policy]
        self.path = os.path.join(self.tmp, 'policy.yaml')
        self.flags(policy_file=self.path, group='oslo_policy')
        policy.reset()
        self.operator = nova_context.RequestContext(
            user_id='op', project_id='ops', roles=('operator',))

    def _write(self, text):
        with open(self.path, 'w') as f:
            f.write(text)

    def test_a_rule_overridden_in_the_file(self):
        self.assertFalse(policy.check(self.operator,
                                      'os_compute_api:os-evacuate'))
        self._write('"os_compute_api:os-evacuate": "role:operator"\n')
        policy.reset()
        policy.validate()
        self.assertTrue(policy.check(self.operator,
                                     'os_compute_api:os-evacuate'))
        # The other rules keep their defaults.
        self.assertFalse(policy.check(self.operator,
                                      'os_compute_api:os-services:list'))

    def test_a_file_that_cannot_be_parsed_is_refused_at_start(self):
        self._write('"os_compute_api:os-evacuate": [unclosed\n')
        with self.assertRaises(exception.InvalidConfiguration) as c:
            policy.validate()
        self.assertIn('policy file', str(c.exception))

    def test_a_rule_naming_an_unknown_rule_is_refused_at_start(self):
        self._write('"os_compute_api:os-evacuate": "rule:no_such_rule"\n')
        self.assertRaises(exception.InvalidConfiguration, policy.validate)

    def test_no_file_means_the_defaults(self):
        policy.validate()
        self.assertTrue(policy.check(self.operator,
                                     'os_compute_api:servers:show', 'ops'))


class SamplePolicyTest(base.TestCase):

    def test_the_sample_file_has_every_rule_with_its_default(self):
        # tox -e genpolicy writes it; regenerate it when a rule changes.
        out = os.path.join(self.tmp, 'policy.yaml.sample')
        generator.generate_sample(args=['--namespace', 'nova',
                                        '--output-file', out],
                                  conf=cfg.ConfigOpts())
        sample = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                              '..', '..', 'etc', 'nova', 'policy.yaml.sample')
        with open(out) as f, open(sample) as g:
            self.assertEqual(f.read(), g.read(),
                             'etc/nova/policy.yaml.sample is out of date: '
                             'run tox -e genpolicy')
        for rule in policy.RULES:
            self.assertIn('"%s"' % rule, open(out).read())
