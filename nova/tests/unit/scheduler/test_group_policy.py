"""What each server group policy says about a host."""

import unittest

from nova.objects import instance_group as group_obj
from nova.scheduler import group_policy


def _rule(policy, members, most=None, ignored_host=None):
    group = group_obj.InstanceGroup(name='g', project_id='p', user_id='u',
                                    policy=policy, max_server_per_host=most)
    return group_policy.GroupRule.of(group, members,
                                     ignored_host=ignored_host)


class TestGroupRule(unittest.TestCase):

    def test_anti_affinity_one_per_host_unless_the_rule_says_more(self):
        rule = _rule('anti-affinity', {'b': 1})
        self.assertEqual([False, True], [rule.allows('b'), rule.allows('c')])
        rule = _rule('anti-affinity', {'b': 1, 'c': 2}, most=2)
        self.assertEqual([True, False], [rule.allows('b'), rule.allows('c')])
        self.assertIn('b, c', _rule('anti-affinity', {'b': 1, 'c': 1})
                      .refusal(['b', 'c']))

    def test_affinity_goes_where_the_members_are_or_anywhere_first(self):
        self.assertTrue(_rule('affinity', {}).allows('b'))
        rule = _rule('affinity', {'c': 1})
        self.assertEqual([False, True], [rule.allows('b'), rule.allows('c')])
        self.assertIn('on c', rule.refusal(['b']))

    def test_the_host_an_evacuation_leaves_does_not_count(self):
        # Every other member is still on the failed host a: the first to
        # leave may go anywhere.
        self.assertTrue(_rule('affinity', {'a': 3},
                              ignored_host='a').allows('b'))

    def test_soft_policies_allow_all_and_rank(self):
        members = {'b': 2, 'c': 1}
        soft_anti = _rule('soft-anti-affinity', members)
        soft = _rule('soft-affinity', members)
        hosts = ['b', 'c', 'd']
        self.assertTrue(all(soft_anti.allows(h) and soft.allows(h)
                            for h in hosts))
        self.assertEqual(['d', 'c', 'b'],
                         sorted(hosts, key=soft_anti.preference))
        self.assertEqual(['b', 'c', 'd'], sorted(hosts, key=soft.preference))
        self.assertFalse(soft.hard)
        self.assertTrue(_rule('affinity', {}).hard)
