"""Admin-only and owner rules."""

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

    def test_unknown_rule_is_a_bug(self):
        self.assertRaises(KeyError, policy.check, self.admin, 'no:such')
