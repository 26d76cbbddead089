"""GET /os-migrations."""

from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.unit.api.openstack import fakes


class MigrationsTest(fakes.APITestCase):

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
