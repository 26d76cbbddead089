"""/os-server-groups: create, list, show, delete, by microversion; the
``group`` scheduler hint of POST /servers, and server_groups in server
show."""

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova.db import models
from nova.model import vm_states
from nova import objects
from nova.objects import instance_group as group_obj
from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/os-server-groups'
BASE = {'id', 'name', 'members'}
V21 = BASE | {'policies', 'metadata'}
V213 = V21 | {'project_id', 'user_id'}
V264 = BASE | {'policy', 'rules', 'project_id', 'user_id'}
MISSING = '0b5a2e3c-5a3c-4b1e-9d2f-3f6c1e0e7a11'


class ServerGroupsTestCase(fakes.APITestCase):

    def groups(self):
        with db_api.session(read_only=True) as session:
            return [(r.name, r.project_id, r.policy, r.max_server_per_host)
                    for r in session.scalars(sa.select(
                        control_models.InstanceGroup).order_by(
                            control_models.InstanceGroup.id))]

    def members(self):
        with db_api.session(read_only=True) as session:
            return [(r.group_uuid, r.instance_uuid)
                    for r in session.scalars(sa.select(
                        models.InstanceGroupMember).order_by(
                            models.InstanceGroupMember.id))]

    def create(self, token=fakes.USER_TOKEN, version=None, **group):
        return self.request('POST', PATH, {'server_group': group},
                            token=token, version=version)

    def make(self, name='g', policy='anti-affinity', token=fakes.USER_TOKEN,
             version='2.64', **rest):
        response = self.create(name=name, policy=policy, token=token,
                               version=version, **rest)
        self.assertEqual(200, response.status_int, response.text)
        return response.json['server_group']

    def get(self, path='', token=fakes.USER_TOKEN, **kwargs):
        return self.request('GET', PATH + path, token=token, **kwargs)


class CreateTest(ServerGroupsTestCase):

    def test_fields_by_microversion(self):
        for version, body, keys in (
                ('2.1', {'policies': ['affinity']}, V21),
                ('2.12', {'policies': ['anti-affinity']}, V21),
                ('2.13', {'policies': ['affinity']}, V213),
                ('2.15', {'policies': ['soft-affinity']}, V213),
                ('2.63', {'policies': ['soft-anti-affinity']}, V213),
                ('2.64', {'policy': 'affinity'}, V264),
                ('2.95', {'policy': 'anti-affinity',
                          'rules': {'max_server_per_host': 2}}, V264)):
            with self.subTest(version=version):
                response = self.create(name='g' + version, version=version,
                                       **body)
                self.assertEqual(200, response.status_int, response.text)
                group = response.json['server_group']
                self.assertEqual({'server_group'}, set(response.json))
                self.assertEqual(keys, set(group))
                self.assertEqual([], group['members'])
                self.assertEqual('g' + version, group['name'])
                shown = self.get('/' + group['id'], version=version).json
                self.assertEqual({'server_group': group}, shown)
        created = self.get(version='2.64').json['server_groups']
        self.assertEqual({}, created[5]['rules'])
        self.assertEqual({'max_server_per_host': 2}, created[6]['rules'])
        self.assertEqual(('demo', 'alice'), (created[0]['project_id'],
                                             created[0]['user_id']))
        self.assertEqual(['affinity', 'anti-affinity', 'affinity',
                          'soft-affinity', 'soft-anti-affinity', 'affinity',
                          'anti-affinity'],
                         [g['policy'] for g in created])
        listed = self.get(version='2.15').json['server_groups'][3]
        self.assertEqual((['soft-affinity'], {}),
                         (listed['policies'], listed['metadata']))

    def test_two_groups_may_share_a_name(self):
        first, second = self.make(name='same'), self.make(name='same')
        self.assertNotEqual(first['id'], second['id'])

    def test_bad_input_is_400_and_creates_nothing(self):
        bodies = [
            ('2.1', {}),
            ('2.1', {'name': 'g'}),
            ('2.1', {'name': '', 'policies': ['affinity']}),
            ('2.1', {'name': ' g', 'policies': ['affinity']}),
            ('2.1', {'name': 'x' * 256, 'policies': ['affinity']}),
            ('2.1', {'name': 'g', 'policies': []}),
            ('2.1', {'name': 'g', 'policies': ['affinity',
                                               'anti-affinity']}),
            ('2.1', {'name': 'g', 'policies': ['affinity', 'affinity']}),
            ('2.1', {'name': 'g', 'policies': ['spread']}),
            ('2.14', {'name': 'g', 'policies': ['soft-affinity']}),
            ('2.1', {'name': 'g', 'policy': 'affinity'}),
            ('2.1', {'name': 'g', 'policies': ['affinity'], 'x': 1}),
            ('2.63', {'name': 'g', 'policy': 'affinity'}),
            ('2.64', {'name': 'g', 'policies': ['affinity']}),
            ('2.64', {'name': 'g', 'policy': 'spread'}),
            ('2.64', {'name': 'g', 'policy': 'affinity',
                      'rules': {'max_server_per_host': 2}}),
            ('2.64', {'name': 'g', 'policy': 'soft-anti-affinity',
                      'rules': {'max_server_per_host': 2}}),
            ('2.64', {'name': 'g', 'policy': 'anti-affinity',
                      'rules': {'max_server_per_host': 0}}),
            ('2.64', {'name': 'g', 'policy': 'anti-affinity',
                      'rules': {'max_server_per_host': 'two'}}),
            ('2.64', {'name': 'g', 'policy': 'anti-affinity',
                      'rules': {'max_server_per_host': '9' * 20}}),
            ('2.64', {'name': 'g', 'policy': 'anti-affinity',
                      'rules': {'max_server_per_host': 2 ** 31}}),
            ('2.64', {'name': 'g', 'policy': 'anti-affinity',
                      'rules': {'other': 1}}),
        ]
        for version, group in bodies:
            with self.subTest(version=version, group=group):
                self.assertFault(self.create(version=version, **group),
                                 400, 'badRequest')
        self.assertFault(self.request('POST', PATH, {'group': {}},
                                      token=fakes.USER_TOKEN),
                         400, 'badRequest')
        self.assertEqual([], self.groups())

    def test_max_server_per_host_as_a_string_of_digits(self):
        group = self.make(rules={'max_server_per_host': '3'})
        self.assertEqual({'max_server_per_host': 3}, group['rules'])
        self.assertEqual([('g', 'demo', 'anti-affinity', 3)], self.groups())


class ListShowDeleteTest(ServerGroupsTestCase):

    def setUp(self):
        super().setUp()
        self.mine = [self.make(name='g%d' % i) for i in range(3)]
        self.theirs = self.make(name='other', token='bob:elsewhere')

    def names(self, response):
        self.assertEqual(200, response.status_int, response.text)
        return [g['name'] for g in response.json['server_groups']]

    def test_a_project_lists_its_own(self):
        self.assertEqual(['g0', 'g1', 'g2'], self.names(self.get()))
        self.assertEqual(['other'], self.names(self.get(
            token='bob:elsewhere')))

    def test_all_projects_for_administrators_only(self):
        self.assertEqual(['g0', 'g1', 'g2', 'other'], self.names(self.get(
            '?all_projects=True', token=fakes.ADMIN_TOKEN)))
        # An administrator without it sees their own project's (none).
        self.assertEqual([], self.names(self.get(token=fakes.ADMIN_TOKEN)))
        # Others asking for it get their own.
        self.assertEqual(['g0', 'g1', 'g2'],
                         self.names(self.get('?all_projects=True')))

    def test_limit_and_offset(self):
        self.assertEqual(['g0', 'g1'], self.names(self.get('?limit=2')))
        self.assertEqual(['g1', 'g2'],
                         self.names(self.get('?limit=2&offset=1')))
        self.assertEqual(['g2'], self.names(self.get('?offset=2')))
        self.assertEqual([], self.names(self.get('?offset=9')))
        for query in ('?limit=-1', '?limit=x', '?offset=-1', '?offset=x'):
            with self.subTest(query=query):
                self.assertFault(self.get(query), 400, 'badRequest')

    def test_unknown_query_is_400_from_275(self):
        self.assertEqual(['g0', 'g1', 'g2'],
                         self.names(self.get('?foo=1', version='2.74')))
        self.assertFault(self.get('?foo=1', version='2.75'), 400,
                         'badRequest')
        self.assertEqual(['g0'], self.names(self.get(
            '?limit=1&offset=0&all_projects=1', version='2.75')))

    def test_show_and_delete_are_the_owners(self):
        for method in ('GET', 'DELETE'):
            with self.subTest(method=method):
                self.assertFault(
                    self.request(method, PATH + '/' + self.theirs['id'],
                                 token=fakes.USER_TOKEN), 403, 'forbidden')
                for missing in (MISSING, 'not-a-uuid'):
                    self.assertFault(
                        self.request(method, PATH + '/' + missing,
                                     token=fakes.USER_TOKEN),
                        404, 'itemNotFound')
        shown = self.get('/' + self.theirs['id'], token=fakes.ADMIN_TOKEN)
        self.assertEqual(200, shown.status_int, shown.text)

    def test_delete_removes_the_group_and_its_memberships(self):
        instance = self.make_instance()
        group_obj.InstanceGroup.add_member(self.ctx, self.mine[0]['id'],
                                           instance.uuid)
        response = self.request('DELETE', PATH + '/' + self.mine[0]['id'],
                                token=fakes.USER_TOKEN)
        self.assertEqual(204, response.status_int, response.text)
        self.assertEqual(['g1', 'g2'], self.names(self.get()))
        self.assertFault(self.get('/' + self.mine[0]['id']), 404,
                         'itemNotFound')
        self.assertEqual([], self.members())
        # The server stays.
        self.assertFalse(self.reload(instance).deleted)


class BootInGroupTest(ServerGroupsTestCase):
    """POST /servers with os:scheduler_hints: {"group": uuid}."""

    def boot(self, group_id, name='vm', version=None, hint_key=None):
        body = {'server': {'name': name, 'imageRef': fakes.IMAGE.id,
                           'flavorRef': '1'},
                hint_key or 'os:scheduler_hints': {'group': group_id}}
        return self.request('POST', '/v2.1/servers', body,
                            token=fakes.USER_TOKEN, version=version)

    def booted(self, response):
        self.assertEqual(202, response.status_int, response.text)
        return self.reload(objects.Instance(
            self.ctx, uuid=response.json['server']['id']))

    def test_anti_affinity_members_take_separate_hosts_then_error(self):
        group = self.make()
        first = self.booted(self.boot(group['id']))
        second = self.booted(self.boot(group['id'],
                                       hint_key='OS-SCH-HNT:scheduler_hints'))
        self.assertEqual({'host1', 'host2'}, {first.host, second.host})
        # No host is left without a member: the third is refused by the
        # policy, in ERROR, on no host, with the fault, nothing cast.
        casts = len(self.compute_rpc.casts)
        third = self.booted(self.boot(group['id']))
        self.assertEqual((vm_states.ERROR, None, None),
                         (third.vm_state, third.task_state, third.host))
        self.assertEqual(casts, len(self.compute_rpc.casts))
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, third.uuid)
        self.assertIn('No valid host was found', fault.message)
        self.assertIn(group['id'], fault.message)
        self.assertEqual([], objects.Port.get_by_instance_uuid(
            self.ctx, third.uuid))
        shown = self.get('/' + group['id']).json['server_group']
        self.assertEqual([first.uuid, second.uuid, third.uuid],
                         shown['members'])
        server = self.request('GET', '/v2.1/servers/' + third.uuid,
                              token=fakes.USER_TOKEN).json['server']
        self.assertEqual('ERROR', server['status'])
        self.assertIn('fault', server)

    def test_max_server_per_host_lets_that_many_share(self):
        group = self.make(rules={'max_server_per_host': 2})
        hosts = [self.booted(self.boot(group['id'], name='vm%d' % i)).host
                 for i in range(4)]
        self.assertEqual({'host1': 2, 'host2': 2},
                         {h: hosts.count(h) for h in set(hosts)})
        self.assertEqual(vm_states.ERROR,
                         self.booted(self.boot(group['id'])).vm_state)

    def test_affinity_members_share_a_host(self):
        group = self.make(policy='affinity')
        hosts = {self.booted(self.boot(group['id'], name='vm%d' % i)).host
                 for i in range(3)}
        self.assertEqual(1, len(hosts))

    def test_soft_anti_affinity_prefers_then_shares(self):
        group = self.make(policy='soft-anti-affinity')
        hosts = [self.booted(self.boot(group['id'], name='vm%d' % i)).host
                 for i in range(3)]
        self.assertEqual({'host1', 'host2'}, set(hosts[:2]))
        self.assertIn(hosts[2], ('host1', 'host2'))

    def test_server_show_names_the_group_from_271(self):
        group = self.make()
        server_id = self.booted(self.boot(group['id'])).uuid
        alone = self.booted(self.request('POST', '/v2.1/servers', {
            'server': {'name': 'alone', 'imageRef': fakes.IMAGE.id,
                       'flavorRef': '1'}}, token=fakes.USER_TOKEN))
        for version, expected in (('2.70', None), ('2.71', [group['id']]),
                                  ('2.95', [group['id']])):
            with self.subTest(version=version):
                server = self.request(
                    'GET', '/v2.1/servers/' + server_id,
                    token=fakes.USER_TOKEN,
                    version=version).json['server']
                self.assertEqual(expected, server.get('server_groups'))
        server = self.request('GET', '/v2.1/servers/' + alone.uuid,
                              token=fakes.USER_TOKEN,
                              version='2.71').json['server']
        self.assertEqual([], server['server_groups'])
        listed = self.request('GET', '/v2.1/servers/detail',
                              token=fakes.USER_TOKEN,
                              version='2.71').json['servers']
        self.assertNotIn('server_groups', listed[0])

    def test_deleting_a_server_takes_it_out_of_its_group(self):
        group = self.make()
        first = self.booted(self.boot(group['id']))
        second = self.booted(self.boot(group['id']))
        # Its host's service is down: the delete is local, and final.
        self.set_down(objects.Service.get_by_host_and_binary(
            self.ctx, first.host, 'nova-compute'))
        response = self.request('DELETE', '/v2.1/servers/' + first.uuid,
                                token=fakes.USER_TOKEN)
        self.assertEqual(204, response.status_int, response.text)
        self.assertTrue(self.reload(first).deleted)
        self.assertEqual([(group['id'], second.uuid)], self.members())
        self.assertEqual([second.uuid], self.get(
            '/' + group['id']).json['server_group']['members'])

    def test_bad_hints_are_400_and_create_nothing(self):
        theirs = self.make(token='bob:elsewhere')
        bad = [
            {'group': MISSING},
            {'group': 'not-a-uuid'},
            {'group': theirs['id']},
            {'same_host': MISSING},
        ]
        for hints in bad:
            with self.subTest(hints=hints):
                body = {'server': {'name': 'vm', 'imageRef': fakes.IMAGE.id,
                                   'flavorRef': '1'},
                        'os:scheduler_hints': hints}
                self.assertFault(self.request('POST', '/v2.1/servers', body,
                                              token=fakes.USER_TOKEN),
                                 400, 'badRequest')
        self.assertEqual([], objects.Instance.get_all(self.ctx))
        self.assertEqual([], self.members())

    def test_a_refused_create_leaves_no_member(self):
        group = self.make()
        body = {'server': {'name': 'vm', 'imageRef': fakes.IMAGE.id,
                           'flavorRef': '99'},
                'os:scheduler_hints': {'group': group['id']}}
        self.assertFault(self.request('POST', '/v2.1/servers', body,
                                      token=fakes.USER_TOKEN),
                         400, 'badRequest')
        for service in (self.host1, self.host2):
            self.set_down(service)
        # No host at all (not the policy): refused as without a group.
        self.assertFault(self.boot(group['id']), 400, 'badRequest')
        self.assertEqual([], objects.Instance.get_all(self.ctx))
        self.assertEqual([], self.members())
