"""Admin-only and owner rules, the operator's policy file, the sample."""

import os

from oslo_config import cfg
from oslo_policy import generator
from oslo_policy import policy as oslo_policy

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

    def _interval(self, seconds):
        self.addCleanup(setattr, policy, 'RELOAD_CHECK_INTERVAL',
                        policy.RELOAD_CHECK_INTERVAL)
        policy.RELOAD_CHECK_INTERVAL = seconds

    def _rewrite(self, text):
        # A later modification time than the last read, whatever the file
        # system's clock resolution: the file counts as changed.
        self._write(text)
        stat = os.stat(self.path)
        os.utime(self.path, ns=(stat.st_atime_ns,
                                stat.st_mtime_ns + 10 ** 9 * self.writes))
        self.writes += 1

    def test_a_changed_file_applies_to_the_next_check(self):
        # Decisions are remembered; a change of the file forgets them.
        self.writes = 1
        self._interval(0)
        rule = 'os_compute_api:os-evacuate'
        self._rewrite('"%s": "role:operator"\n' % rule)
        policy.validate()
        self.assertTrue(policy.check(self.operator, rule))
        self.assertTrue(policy.check(self.operator, rule))
        self._rewrite('"%s": "role:admin"\n' % rule)
        self.assertFalse(policy.check(self.operator, rule))
        self._rewrite('"%s": "role:operator"\n' % rule)
        self.assertTrue(policy.check(self.operator, rule))

    def test_a_file_removed_from_policy_d_gives_the_default_back(self):
        # oslo.policy rebuilds its rules from scratch then, with nothing
        # to read: the remembered decisions go too.
        directory = os.path.join(self.tmp, 'policy.d')
        os.mkdir(directory)
        self.flags(policy_dirs=[directory], group='oslo_policy')
        policy.reset()
        self._interval(0)
        rule = 'os_compute_api:os-evacuate'
        path = os.path.join(directory, 'evacuate.yaml')
        with open(path, 'w') as f:
            f.write('"%s": "role:operator"\n' % rule)
        self.assertTrue(policy.check(self.operator, rule))
        os.unlink(path)
        stat = os.stat(directory)
        os.utime(directory, ns=(stat.st_atime_ns,
                                stat.st_mtime_ns + 10 ** 9))
        self.assertFalse(policy.check(self.operator, rule))

    def test_a_file_changed_within_the_interval_applies_after_it(self):
        self.writes = 1
        rule = 'os_compute_api:os-evacuate'
        self._rewrite('"%s": "role:operator"\n' % rule)
        policy.validate()
        self.assertTrue(policy.check(self.operator, rule))
        self._rewrite('"%s": "role:admin"\n' % rule)
        # Looked at a moment ago: the old decision still holds...
        self._interval(3600)
        self.assertTrue(policy.check(self.operator, rule))
        # ... until the interval has passed.
        self._interval(0)
        self.assertFalse(policy.check(self.operator, rule))

    def test_decisions_are_the_enforcers_for_every_caller_and_target(self):
        # The remembered answer is oslo.policy's own, for owners, other
        # projects and users, admins, and a role the file grants.
        self._write('"os_compute_api:os-evacuate": "role:operator"\n')
        policy.validate()
        callers = [self.operator, nova_context.get_admin_context(),
                   nova_context.RequestContext(user_id='u', project_id='p'),
                   nova_context.RequestContext(user_id='v', project_id='p',
                                               roles=('reader',))]
        targets = [(None, None), ('p', 'u'), ('p', 'v'), ('ops', 'x')]
        plain = oslo_policy.Enforcer(policy.CONF)
        plain.register_defaults(policy.list_rules())
        for _round in range(2):         # the second from memory
            for rule in sorted(policy.RULES):
                for caller in callers:
                    for project, user in targets:
                        target = {'project_id': project or caller.project_id,
                                  'user_id': user or caller.user_id}
                        creds = {'user_id': caller.user_id,
                                 'project_id': caller.project_id,
                                 'roles': list(caller.roles),
                                 'is_admin': bool(caller.is_admin)}
                        self.assertEqual(
                            bool(plain.enforce(rule, target, creds)),
                            policy.check(caller, rule, project, user),
                            (rule, caller.user_id, project, user))

    def test_a_check_of_another_kind_is_asked_every_time(self):
        # A check oslo.policy does not define itself (http:, an
        # extension's) may answer differently to the same question:
        # with one in the rules, no decision is remembered.
        answers = []

        class Toggle(oslo_policy.Check):
            def __call__(self, target, creds, enforcer, current_rule=None):
                answers.append(not answers[-1] if answers else True)
                return answers[-1]

        oslo_policy.register('test_toggle', Toggle)
        self.addCleanup(oslo_policy._checks.registered_checks.pop,
                        'test_toggle')
        rule = 'os_compute_api:os-evacuate'
        self._write('"%s": "test_toggle:x"\n' % rule)
        policy.validate()
        seen = [policy.check(self.operator, rule) for _ in range(4)]
        self.assertEqual([True, False, True, False], seen)


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
