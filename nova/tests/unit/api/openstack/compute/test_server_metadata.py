"""/servers/{id}/metadata and metadata on create: what the rows hold."""

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova.model import vm_states
from nova.objects import instance_metadata as metadata_obj
from nova.tests.unit.api.openstack import fakes


def _rows(uuid) -> dict:
    """The server's metadata as stored, one row per key."""
    table = control_models.InstanceMetadata
    with db_api.session(read_only=True) as session:
        rows = session.execute(sa.select(table.key, table.value).where(
            table.instance_uuid == uuid)).all()
    return dict(rows)


class MetadataTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.instance = self.make_instance()
        metadata_obj.InstanceMetadata.replace(self.ctx, self.instance.uuid,
                                              {'a': '1', 'b': '2'})
        self.path = '/v2.1/servers/%s/metadata' % self.instance.uuid

    def call(self, method, suffix='', body=None, **kwargs):
        kwargs.setdefault('token', fakes.USER_TOKEN)
        return self.request(method, self.path + suffix, body=body, **kwargs)

    def test_list_and_show(self):
        response = self.call('GET')
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual({'metadata': {'a': '1', 'b': '2'}}, response.json)
        response = self.call('GET', '/b')
        self.assertEqual({'meta': {'b': '2'}}, response.json)
        self.assertFault(self.call('GET', '/nope'), 404, 'itemNotFound')

    def test_post_merges_and_put_replaces(self):
        response = self.call('POST', body={'metadata': {'b': '3', 'c': ''}})
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual({'a': '1', 'b': '3', 'c': ''},
                         response.json['metadata'])
        self.assertEqual({'a': '1', 'b': '3', 'c': ''},
                         _rows(self.instance.uuid))
        response = self.call('PUT', body={'metadata': {'z': '9'}})
        self.assertEqual({'metadata': {'z': '9'}}, response.json)
        self.assertEqual({'z': '9'}, _rows(self.instance.uuid))
        response = self.call('PUT', body={'metadata': {}})
        self.assertEqual({}, _rows(self.instance.uuid))

    def test_item_put_and_delete(self):
        response = self.call('PUT', '/c', body={'meta': {'c': 'x'}})
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual({'meta': {'c': 'x'}}, response.json)
        response = self.call('DELETE', '/a')
        self.assertEqual(204, response.status_int, response.text)
        self.assertEqual({'b': '2', 'c': 'x'}, _rows(self.instance.uuid))
        self.assertFault(self.call('DELETE', '/a'), 404, 'itemNotFound')

    def test_bad_bodies_are_400_and_change_nothing(self):
        for method, suffix, body in (
                ('POST', '', {'metadata': {'': 'v'}}),
                ('POST', '', {'metadata': {'k' * 256: 'v'}}),
                ('PUT', '', {'metadata': {'k': 'v' * 256}}),
                ('PUT', '', {'metadata': {'k': 1}}),
                ('PUT', '', {'meta': {'k': 'v'}}),
                ('POST', '', None),
                ('PUT', '/k', {'meta': {'other': 'v'}}),
                ('PUT', '/k', {'meta': {'k': 'v', 'l': 'w'}}),
                ('PUT', '/k', {'meta': {}}),
                ('PUT', '/k', {'metadata': {'k': 'v'}})):
            with self.subTest(method=method, suffix=suffix, body=body):
                self.assertFault(self.call(method, suffix, body=body), 400,
                                 'badRequest')
        self.assertEqual({'a': '1', 'b': '2'}, _rows(self.instance.uuid))

    def test_other_project_is_404(self):
        other = self.make_instance(project_id='p2', user_id='bob')
        self.assertFault(self.request(
            'GET', '/v2.1/servers/%s/metadata' % other.uuid,
            token=fakes.USER_TOKEN), 404, 'itemNotFound')

    def test_locked_server_refuses_owner_but_not_admin(self):
        self.instance.locked_by = 'admin'
        self.instance.save()
        self.assertFault(self.call('POST', body={'metadata': {'c': '3'}}),
                         409, 'conflictingRequest')
        self.assertFault(self.call('DELETE', '/a'), 409,
                         'conflictingRequest')
        self.assertEqual({'a': '1', 'b': '2'}, _rows(self.instance.uuid))
        response = self.call('POST', body={'metadata': {'c': '3'}},
                             token=fakes.ADMIN_TOKEN)
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual('3', _rows(self.instance.uuid)['c'])

    def test_building_server_refuses_changes(self):
        building = self.make_instance(vm_state=vm_states.BUILDING)
        self.assertFault(self.request(
            'PUT', '/v2.1/servers/%s/metadata' % building.uuid,
            body={'metadata': {'k': 'v'}}), 409, 'conflictingRequest')
        self.assertEqual({}, _rows(building.uuid))

    def test_shown_in_server_views_and_queryable(self):
        other = self.make_instance(name='vm2')
        metadata_obj.InstanceMetadata.replace(self.ctx, other.uuid,
                                              {'HA_Enabled': 'True'})
        shown = self.request('GET', '/v2.1/servers/%s' % self.instance.uuid,
                             token=fakes.USER_TOKEN).json['server']
        self.assertEqual({'a': '1', 'b': '2'}, shown['metadata'])
        listed = {s['id']: s['metadata'] for s in self.request(
            'GET', '/v2.1/servers/detail',
            token=fakes.USER_TOKEN).json['servers']}
        self.assertEqual({self.instance.uuid: {'a': '1', 'b': '2'},
                          other.uuid: {'HA_Enabled': 'True'}}, listed)
        self.assertEqual([other.uuid],
                         metadata_obj.InstanceMetadata.instances_with(
                             self.ctx, 'HA_Enabled', 'True'))


class CreateWithMetadataTest(fakes.APITestCase):

    def test_metadata_on_create_is_stored_and_shown(self):
        body = {'server': {'name': 'vm', 'imageRef': fakes.IMAGE.id,
                           'flavorRef': '1', 'OS-DCF:diskConfig': 'AUTO',
                           'metadata': {'HA_Enabled': 'True', 'k': ''}}}
        response = self.request('POST', '/v2.1/servers', body=body,
                                token=fakes.USER_TOKEN)
        self.assertEqual(202, response.status_int, response.text)
        uuid = response.json['server']['id']
        self.assertEqual({'HA_Enabled': 'True', 'k': ''}, _rows(uuid))
        shown = self.request('GET', '/v2.1/servers/%s' % uuid,
                             token=fakes.USER_TOKEN).json['server']
        self.assertEqual({'HA_Enabled': 'True', 'k': ''}, shown['metadata'])
