"""PUT /servers/{id}: what the row holds and the keys answered."""

from nova.tests.unit.api.openstack.compute import test_servers
from nova.tests.unit.api.openstack import fakes

# The reference's view of an update below 2.75 (no extended attributes).
CHANGED_KEYS = frozenset((
    'id', 'name', 'links', 'status', 'tenant_id', 'user_id', 'metadata',
    'hostId', 'image', 'flavor', 'created', 'updated', 'addresses',
    'accessIPv4', 'accessIPv6', 'progress', 'OS-DCF:diskConfig'))


class UpdateTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.instance = self.make_instance(name='before')
        self.path = '/v2.1/servers/%s' % self.instance.uuid

    def put(self, server, version=None, token=fakes.USER_TOKEN):
        return self.request('PUT', self.path, body={'server': server},
                            version=version, token=token)

    def test_name_description_and_access_addresses(self):
        response = self.put({'name': 'after', 'description': 'db',
                             'accessIPv4': '192.0.2.7',
                             'accessIPv6': '2001:DB8:0::1'}, version='2.19')
        self.assertEqual(200, response.status_int, response.text)
        server = response.json['server']
        self.assertEqual(('after', 'db', '192.0.2.7', '2001:db8::1'),
                         (server['name'], server['description'],
                          server['accessIPv4'], server['accessIPv6']))
        row = self.reload(self.instance)
        self.assertEqual(('after', 'db', '192.0.2.7', '2001:db8::1'),
                         (row.display_name, row.display_description,
                          row.access_ip_v4, row.access_ip_v6))

    def test_empty_update_answers_the_server(self):
        response = self.put({}, version='2.75')
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual('before', response.json['server']['name'])

    def test_keys_by_microversion(self):
        for version, token, extra in (
                ('2.1', fakes.USER_TOKEN, set()),
                ('2.1', fakes.ADMIN_TOKEN, set()),
                ('2.9', fakes.USER_TOKEN, {'locked'}),
                ('2.19', fakes.USER_TOKEN, {'locked', 'description'}),
                ('2.74', fakes.USER_TOKEN,
                 test_servers.CreateFieldsTest.KEYS_289)):
            with self.subTest(version=version, token=token):
                response = self.put({'name': 'n'}, version=version,
                                    token=token)
                self.assertEqual(CHANGED_KEYS | extra,
                                 set(response.json['server']))
        # From 2.75 the update answers what show answers.
        show = self.request('GET', self.path, version='2.75',
                            token=fakes.USER_TOKEN).json['server']
        response = self.put({'name': 'n'}, version='2.75')
        self.assertEqual(set(show), set(response.json['server']))

    def test_bad_bodies_are_400_and_change_nothing(self):
        for server, version in (({'name': ''}, None),
                                ({'name': 'x' * 256}, None),
                                ({'description': 'd'}, '2.18'),
                                ({'description': 'd' * 256}, '2.19'),
                                ({'accessIPv4': 'nope'}, None),
                                ({'hostname': 'h'}, '2.89'),
                                ({'flavorRef': '1'}, None)):
            with self.subTest(server=server, version=version):
                self.assertFault(self.put(server, version=version), 400,
                                 'badRequest')
        self.assertFault(self.request('PUT', self.path, body={'name': 'x'}),
                         400, 'badRequest')
        row = self.reload(self.instance)
        self.assertEqual(('before', None, None),
                         (row.display_name, row.display_description,
                          row.access_ip_v4))

    def test_other_project_is_404(self):
        other = self.make_instance(project_id='p2', user_id='bob')
        self.assertFault(self.request(
            'PUT', '/v2.1/servers/%s' % other.uuid,
            body={'server': {'name': 'mine'}}, token=fakes.USER_TOKEN),
            404, 'itemNotFound')
        self.assertEqual('vm1', self.reload(other).display_name)

    def test_disk_config_is_recorded_and_answered(self):
        for value, stored in (('AUTO', True), ('MANUAL', False)):
            with self.subTest(value=value):
                response = self.put({'OS-DCF:diskConfig': value})
                self.assertEqual(200, response.status_int, response.text)
                self.assertEqual(
                    value, response.json['server']['OS-DCF:diskConfig'])
                self.assertEqual(stored,
                                 self.reload(self.instance).auto_disk_config)
        # An update that names none keeps it.
        self.put({'OS-DCF:diskConfig': 'AUTO'})
        self.assertEqual('AUTO', self.put({'name': 'n'}).json['server'][
            'OS-DCF:diskConfig'])

    def test_bad_disk_config_is_400_and_changes_nothing(self):
        for value in ('auto', 'NONE', '', None, 1):
            with self.subTest(value=value):
                self.assertFault(self.put({'name': 'x',
                                           'OS-DCF:diskConfig': value}),
                                 400, 'badRequest', 'OS-DCF:diskConfig')
        row = self.reload(self.instance)
        self.assertEqual(('before', False),
                         (row.display_name, row.auto_disk_config))
