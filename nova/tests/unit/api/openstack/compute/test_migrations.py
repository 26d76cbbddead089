"""GET /os-migrations."""

from nova.api.openstack import common
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.unit.api.openstack import fakes


class _WithTwoMigrations(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.instance = self.make_instance()
        self.first = self.migration('host1', 'host2', migration_obj.DONE)
        self.second = self.migration('host2', 'host3',
                                     migration_obj.ACCEPTED)

    def migration(self, source, dest, status):
        return objects.Migration(
            self.ctx, instance_uuid=self.instance.uuid,
            source_compute=source, source_node=source, dest_compute=dest,
            dest_node=dest, migration_type=migration_obj.EVACUATION,
            status=status).create()


class MigrationsTest(_WithTwoMigrations):

    def ids(self, query='', version=None):
        response = self.request('GET', '/v2.1/os-migrations' + query,
                                version=version)
        self.assertEqual(200, response.status_int, response.text)
        return [m['id'] for m in response.json['migrations']]

    def test_list_newest_first(self):
        self.assertEqual([self.second.id, self.first.id], self.ids())

    def test_filters(self):
        self.assertEqual([self.second.id, self.first.id],
                         self.ids('?host=host2'))
        self.assertEqual([self.second.id], self.ids('?host=host3'))
        self.assertEqual([self.first.id], self.ids('?status=done'))
        self.assertEqual([self.first.id],
                         self.ids('?source_compute=host1'))
        self.assertEqual([], self.ids('?source_compute=host1&host=host3'))
        self.assertEqual([], self.ids(
            '?instance_uuid=3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c'))

    def test_view_by_microversion(self):
        response = self.request('GET', '/v2.1/os-migrations')
        view = response.json['migrations'][-1]
        self.assertEqual({'id': self.first.id,
                          'instance_uuid': self.instance.uuid,
                          'source_compute': 'host1', 'source_node': 'host1',
                          'dest_compute': 'host2', 'dest_node': 'host2',
                          'dest_host': None, 'status': 'done',
                          'old_instance_type_id': None,
                          'new_instance_type_id': None},
                         {k: v for k, v in view.items()
                          if k not in ('created_at', 'updated_at')})
        response = self.request('GET', '/v2.1/os-migrations',
                                version='2.23')
        self.assertEqual('evacuation',
                         response.json['migrations'][0]['migration_type'])

    def test_admin_only(self):
        self.assertFault(self.request('GET', '/v2.1/os-migrations',
                                      token=fakes.USER_TOKEN), 403,
                         'forbidden')


class MigrationsFrom259Test(_WithTwoMigrations):
    """What 2.59, 2.66 and 2.80 add."""

    def listed(self, query='', version='2.59'):
        response = self.request('GET', '/v2.1/os-migrations' + query,
                                version=version)
        self.assertEqual(200, response.status_int, response.text)
        return response.json['migrations']

    def uuids(self, query='', version='2.59'):
        return [m['uuid'] for m in self.listed(query, version)]

    def test_uuid_from_259(self):
        self.assertNotIn('uuid', self.listed(version='2.58')[0])
        self.assertEqual([self.second.uuid, self.first.uuid], self.uuids())

    def test_limit_and_marker_from_259(self):
        self.assertEqual([self.second.uuid], self.uuids('?limit=1'))
        self.assertEqual([self.first.uuid],
                         self.uuids('?marker=%s' % self.second.uuid))
        self.assertEqual([], self.uuids('?marker=%s' % self.first.uuid))
        self.assertFault(self.request(
            'GET', '/v2.1/os-migrations?marker=%s' % self.instance.uuid,
            version='2.59'), 400, 'badRequest', 'marker')

    def test_changes_since_from_259_and_before_from_266(self):
        since = common.dbtime(self.second.updated_at)
        self.assertEqual([self.second.uuid],
                         self.uuids('?changes-since=%s' % since))
        # changes-since is not a filter below 2.59.
        self.assertEqual(2, len(self.listed('?changes-since=%s' % since,
                                            version='2.58')))
        before = common.dbtime(self.first.updated_at)
        self.assertEqual([self.first.uuid], self.uuids(
            '?changes-before=%s' % before, version='2.66'))
        self.assertEqual(2, len(self.uuids('?changes-before=%s' % before,
                                           version='2.65')))
        self.assertFault(self.request(
            'GET', '/v2.1/os-migrations?changes-since=%s&changes-before=%s'
            % (since, before), version='2.66'), 400, 'badRequest')

    def test_user_and_project_of_the_requester_from_280(self):
        self.set_down(self.host1)
        response = self.action(self.instance, {'evacuate': {'host': 'host2'}},
                               version='2.80', token='admin:ops')
        self.assertEqual(200, response.status_int, response.text)
        (evacuation,) = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=self.instance.uuid,
            status=migration_obj.ACCEPTED, dest_compute='host2')
        self.assertNotIn('user_id', self.listed(version='2.79')[0])
        shown = {m['uuid']: (m['user_id'], m['project_id'])
                 for m in self.listed(version='2.80')}
        # Recorded without a request (no instance action): unknown.
        self.assertEqual({evacuation.uuid: ('admin', 'ops'),
                          self.second.uuid: (None, None),
                          self.first.uuid: (None, None)}, shown)
        self.assertEqual([evacuation.uuid], self.uuids(
            '?user_id=admin&project_id=ops', version='2.80'))
        self.assertEqual([], self.uuids('?project_id=demo', version='2.80'))
        # Not filters below 2.80.
        self.assertEqual(3, len(self.uuids('?project_id=demo',
                                           version='2.79')))
