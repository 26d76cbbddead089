"""/os-quota-sets, /os-quota-class-sets and /limits: exact fields by
microversion, who may do what, and the rows updates leave."""

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova.model import vm_states
from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/os-quota-sets/demo'
CLASS_PATH = '/v2.1/os-quota-class-sets/default'

NETWORK = {'fixed_ips', 'floating_ips', 'security_group_rules',
           'security_groups'}
INJECTED = {'injected_file_content_bytes', 'injected_file_path_bytes',
            'injected_files'}
SERVER_GROUPS = {'server_groups', 'server_group_members'}
QUOTAS_257 = {'instances', 'cores', 'ram', 'metadata_items', 'key_pairs'
              } | SERVER_GROUPS
QUOTAS_236 = QUOTAS_257 | INJECTED
QUOTAS_21 = QUOTAS_236 | NETWORK
DEFAULTS = {'instances': 10, 'cores': 20, 'ram': 51200,
            'metadata_items': 128, 'key_pairs': 100, 'server_groups': 10,
            'server_group_members': 10, 'injected_files': 5,
            'injected_file_content_bytes': 10240,
            'injected_file_path_bytes': 255, 'fixed_ips': -1,
            'floating_ips': -1, 'security_groups': -1,
            'security_group_rules': -1}


def rows(model):
    with db_api.session(read_only=True) as session:
        return sorted(
            tuple(getattr(r, c) for c in ('resource', 'hard_limit'))
            + tuple(getattr(r, c) for c in ('project_id', 'user_id',
                                            'class_name') if hasattr(r, c))
            for r in session.scalars(sa.select(model)))


class QuotaSetsTest(fakes.APITestCase):

    def show(self, path=PATH, token=fakes.USER_TOKEN, version=None):
        response = self.request('GET', path, token=token, version=version)
        self.assertEqual(200, response.status_int, response.text)
        return response.json['quota_set']

    def update(self, quota_set, path=PATH, version=None, status=200):
        response = self.request('PUT', path, {'quota_set': quota_set},
                                version=version)
        self.assertEqual(status, response.status_int, response.text)
        return response

    def test_exact_fields_by_microversion(self):
        for version, expected in (('2.1', QUOTAS_21), ('2.35', QUOTAS_21),
                                  ('2.36', QUOTAS_236),
                                  ('2.56', QUOTAS_236),
                                  ('2.57', QUOTAS_257),
                                  ('2.95', QUOTAS_257)):
            with self.subTest(version=version):
                shown = self.show(version=version)
                self.assertEqual(expected | {'id'}, set(shown))
                self.assertEqual('demo', shown['id'])
                self.assertEqual({k: DEFAULTS[k] for k in expected},
                                 {k: shown[k] for k in expected})
                defaults = self.show(PATH + '/defaults', version=version)
                self.assertEqual(shown, defaults)
                detail = self.show(PATH + '/detail', version=version)
                self.assertEqual(expected | {'id'}, set(detail))
                for name in expected:
                    self.assertEqual({'limit': DEFAULTS[name], 'in_use': 0,
                                      'reserved': 0}, detail[name])
                updated = self.update({'metadata_items': 128},
                                      version=version)
                self.assertEqual(expected, set(updated.json['quota_set']))

    def test_update_writes_the_project_row_and_show_reads_it(self):
        updated = self.update({'ram': '5120', 'cores': 4}).json['quota_set']
        self.assertEqual((5120, 4), (updated['ram'], updated['cores']))
        self.assertEqual([('cores', 4, 'demo'), ('ram', 5120, 'demo')],
                         rows(control_models.Quota))
        shown = self.show(PATH + '/detail')
        self.assertEqual(5120, shown['ram']['limit'])
        # The defaults did not move.
        self.assertEqual(51200, self.show(PATH + '/defaults')['ram'])

    def test_user_limits_default_to_the_project_and_are_their_own(self):
        self.update({'ram': 5120})
        self.assertEqual(5120, self.show(PATH + '?user_id=alice')['ram'])
        self.update({'ram': 2048}, path=PATH + '?user_id=alice')
        self.assertEqual([('ram', 2048, 'demo', 'alice')],
                         rows(control_models.ProjectUserQuota))
        self.assertEqual(2048, self.show(PATH + '?user_id=alice')['ram'])
        self.assertEqual(5120, self.show(PATH)['ram'])

    def test_a_user_limit_above_the_project_is_refused_unless_forced(self):
        self.update({'ram': 5120})
        self.update({'ram': 6000}, path=PATH + '?user_id=alice',
                    status=400)
        self.assertEqual([], rows(control_models.ProjectUserQuota))
        self.update({'ram': 6000, 'force': True},
                    path=PATH + '?user_id=alice')
        self.assertEqual([('ram', 6000, 'demo', 'alice')],
                         rows(control_models.ProjectUserQuota))

    def test_a_limit_below_usage_is_refused_unless_forced(self):
        self.make_instance(project_id='demo')
        self.make_instance(project_id='demo', name='vm2',
                           vm_state=vm_states.ERROR)
        response = self.update({'instances': 1}, status=400)
        self.assertIn('Quota limit 1 for instances must be greater than or '
                      'equal to already used and reserved 2.',
                      response.text)
        self.assertEqual([], rows(control_models.Quota))
        self.update({'instances': 1, 'force': 'True'})
        self.assertEqual([('instances', 1, 'demo')],
                         rows(control_models.Quota))
        detail = self.show(PATH + '/detail')
        self.assertEqual({'limit': 1, 'in_use': 2, 'reserved': 0},
                         detail['instances'])
        self.assertEqual({'limit': 20, 'in_use': 2, 'reserved': 0},
                         detail['cores'])
        self.assertEqual({'limit': 51200, 'in_use': 1024, 'reserved': 0},
                         detail['ram'])

    def test_delete_reverts_the_project_and_its_users(self):
        self.update({'ram': 5120})
        self.update({'ram': 2048}, path=PATH + '?user_id=alice')
        other = '/v2.1/os-quota-sets/other'
        self.update({'ram': 1}, path=other)
        response = self.request('DELETE', PATH)
        self.assertEqual(202, response.status_int, response.text)
        self.assertEqual([('ram', 1, 'other')], rows(control_models.Quota))
        self.assertEqual([], rows(control_models.ProjectUserQuota))
        self.assertEqual(51200, self.show(PATH)['ram'])

    def test_delete_of_one_user_keeps_the_project(self):
        self.update({'ram': 5120})
        self.update({'ram': 2048}, path=PATH + '?user_id=alice')
        self.assertEqual(202, self.request(
            'DELETE', PATH + '?user_id=alice').status_int)
        self.assertEqual([('ram', 5120, 'demo')], rows(control_models.Quota))
        self.assertEqual([], rows(control_models.ProjectUserQuota))

    def test_bodies_are_checked_by_microversion(self):
        for body, version in (({'floating_ips': 1}, '2.36'),
                              ({'injected_files': 1}, '2.57'),
                              ({'ram': -2}, None), ({'ram': 'x'}, None),
                              ({'ram': 2 ** 31}, None),
                              ({'ram': str(2 ** 31)}, None),
                              ({'ram': '9' * 30}, None), ({'ram': '-2'}, None),
                              ({'networks': 1}, None),
                              ({'ram': 1, 'force': 'maybe'}, None)):
            with self.subTest(body=body, version=version):
                self.update(body, version=version, status=400)
        self.assertEqual([], rows(control_models.Quota))
        self.update({'floating_ips': 1}, version='2.35')
        self.assertEqual(1, self.show(version='2.35')['floating_ips'])

    def test_policy(self):
        # Members read their project; only administrators write.
        self.show()
        self.show(PATH + '/detail')
        self.show('/v2.1/os-quota-sets/other/defaults')
        for method, path in (('GET', '/v2.1/os-quota-sets/other'),
                             ('GET', '/v2.1/os-quota-sets/other/detail'),
                             ('PUT', PATH), ('DELETE', PATH)):
            with self.subTest(method=method, path=path):
                response = self.request(method, path,
                                        {'quota_set': {'ram': 0}}
                                        if method == 'PUT' else None,
                                        token=fakes.USER_TOKEN)
                self.assertFault(response, 403, 'forbidden')
        self.assertEqual([], rows(control_models.Quota))

    def test_unknown_query_is_refused_from_275(self):
        self.show(PATH + '?foo=1', version='2.74')
        response = self.request('GET', PATH + '?foo=1', version='2.75',
                                token=fakes.USER_TOKEN)
        self.assertFault(response, 400, 'badRequest')


class QuotaClassSetsTest(fakes.APITestCase):

    def test_exact_fields_by_microversion(self):
        for version, expected in (
                ('2.1', QUOTAS_21 - SERVER_GROUPS),
                ('2.49', QUOTAS_21 - SERVER_GROUPS),
                ('2.50', QUOTAS_236), ('2.56', QUOTAS_236),
                ('2.57', QUOTAS_257), ('2.95', QUOTAS_257)):
            with self.subTest(version=version):
                response = self.request('GET', CLASS_PATH, version=version)
                self.assertEqual(200, response.status_int, response.text)
                shown = response.json['quota_class_set']
                self.assertEqual(expected | {'id'}, set(shown))
                self.assertEqual('default', shown['id'])
                response = self.request(
                    'PUT', CLASS_PATH,
                    {'quota_class_set': {'metadata_items': 128}},
                    version=version)
                self.assertEqual(200, response.status_int, response.text)
                self.assertEqual(expected,
                                 set(response.json['quota_class_set']))

    def test_the_default_class_sets_every_project_default(self):
        body = {name: DEFAULTS[name] + 100 for name in QUOTAS_21
                if name not in SERVER_GROUPS}
        response = self.request('PUT', CLASS_PATH,
                                {'quota_class_set': body})
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual(body, response.json['quota_class_set'])
        self.assertIn(('ram', 51300, 'default'),
                      rows(control_models.QuotaClass))
        shown = self.request('GET', PATH,
                             token=fakes.USER_TOKEN).json['quota_set']
        self.assertEqual((51300, 99), (shown['ram'], shown['floating_ips']))
        # A project's own limit still wins.
        self.request('PUT', PATH, {'quota_set': {'ram': 7}})
        self.assertEqual(7, self.request(
            'GET', PATH, token=fakes.USER_TOKEN).json['quota_set']['ram'])

    def test_other_classes_do_not_change_the_defaults(self):
        response = self.request('PUT', '/v2.1/os-quota-class-sets/gold',
                                {'quota_class_set': {'ram': 1}})
        self.assertEqual(1, response.json['quota_class_set']['ram'])
        self.assertEqual(51200, self.request(
            'GET', PATH, token=fakes.USER_TOKEN).json['quota_set']['ram'])

    def test_limits_out_of_range_are_refused(self):
        for value in (-2, '-2', 2 ** 31, str(2 ** 31), '9' * 30):
            with self.subTest(value=value):
                response = self.request(
                    'PUT', CLASS_PATH, {'quota_class_set': {'ram': value}})
                self.assertFault(response, 400, 'badRequest')
        self.assertEqual([], rows(control_models.QuotaClass))

    def test_only_administrators(self):
        for method in ('GET', 'PUT'):
            with self.subTest(method=method):
                response = self.request(
                    method, CLASS_PATH,
                    {'quota_class_set': {'ram': 1}}
                    if method == 'PUT' else None, token=fakes.USER_TOKEN)
                self.assertFault(response, 403, 'forbidden')
        self.assertEqual([], rows(control_models.QuotaClass))


LIMITS_21 = {'maxImageMeta', 'maxPersonality', 'maxPersonalitySize',
             'maxSecurityGroupRules', 'maxSecurityGroups', 'maxServerMeta',
             'maxTotalCores', 'maxTotalFloatingIps', 'maxTotalInstances',
             'maxTotalKeypairs', 'maxTotalRAMSize', 'maxServerGroups',
             'maxServerGroupMembers', 'totalCoresUsed',
             'totalFloatingIpsUsed', 'totalInstancesUsed', 'totalRAMUsed',
             'totalSecurityGroupsUsed', 'totalServerGroupsUsed'}
LIMITS_236 = LIMITS_21 - {'maxSecurityGroupRules', 'maxSecurityGroups',
                          'maxTotalFloatingIps', 'totalFloatingIpsUsed',
                          'totalSecurityGroupsUsed'}
LIMITS_239 = LIMITS_236 - {'maxImageMeta'}
LIMITS_257 = LIMITS_239 - {'maxPersonality', 'maxPersonalitySize'}


class LimitsTest(fakes.APITestCase):

    def limits(self, path='/v2.1/limits', token=fakes.USER_TOKEN,
               version=None):
        response = self.request('GET', path, token=token, version=version)
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual({'limits'}, set(response.json))
        self.assertEqual({'absolute', 'rate'}, set(response.json['limits']))
        self.assertEqual([], response.json['limits']['rate'])
        return response.json['limits']['absolute']

    def test_exact_fields_by_microversion(self):
        for version, expected in (('2.1', LIMITS_21), ('2.35', LIMITS_21),
                                  ('2.36', LIMITS_236),
                                  ('2.38', LIMITS_236),
                                  ('2.39', LIMITS_239),
                                  ('2.56', LIMITS_239),
                                  ('2.57', LIMITS_257),
                                  ('2.95', LIMITS_257)):
            with self.subTest(version=version):
                self.assertEqual(expected,
                                 set(self.limits(version=version)))

    def test_limits_and_usage_of_the_project(self):
        self.make_instance(project_id='demo')
        self.make_instance(project_id='demo', name='vm2',
                           vm_state=vm_states.ERROR)
        self.make_instance(project_id='demo', name='gone').destroy()
        self.make_instance(project_id='other', name='theirs')
        self.request('PUT', PATH, {'quota_set': {'cores': 7}})
        absolute = self.limits()
        self.assertEqual(
            (7, 10, 51200, 128, 100, 2, 2, 1024, 0),
            (absolute['maxTotalCores'], absolute['maxTotalInstances'],
             absolute['maxTotalRAMSize'], absolute['maxServerMeta'],
             absolute['maxTotalKeypairs'], absolute['totalInstancesUsed'],
             absolute['totalCoresUsed'], absolute['totalRAMUsed'],
             absolute['totalServerGroupsUsed']))

    def test_tenant_id_is_for_administrators(self):
        self.make_instance(project_id='demo')
        absolute = self.limits('/v2.1/limits?tenant_id=demo',
                               token=fakes.ADMIN_TOKEN)
        self.assertEqual(1, absolute['totalInstancesUsed'])
        self.assertEqual(0, self.limits(
            token=fakes.ADMIN_TOKEN)['totalInstancesUsed'])
        self.assertFault(self.request(
            'GET', '/v2.1/limits?tenant_id=other', token=fakes.USER_TOKEN),
            403, 'forbidden')
