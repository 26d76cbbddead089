"""createImage and createBackup through the API, with a real local image
store: what the answer says, the queued image, the task state, the cast;
and refused requests that change nothing."""

import os

from nova.api.openstack import auth
from nova.api import wsgi as api_wsgi
from nova.image import store as image_store
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.tests.unit.api.openstack import fakes


class ServerImagesTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.store = image_store.ImageStore(os.path.join(self.tmp, 'store'))
        self.compute_api.image_api = self.store
        self.app = api_wsgi.make_app(self.compute_api,
                                     image_store=self.store,
                                     authenticator=auth.NoAuth2())

    def create_image(self, instance, body=None, **kwargs):
        if body is None:
            body = {'name': 'snap1', 'metadata': {'purpose': 'test'}}
        return self.action(instance, {'createImage': body}, **kwargs)

    def assertNothingChanged(self, instance, task_state=None):
        self.assertEqual([], self.store.list())
        self.assertEqual(task_state, self.reload(instance).task_state)
        self.assertEqual([], self.compute_rpc.casts)

    def test_create_image_before_2_45_answers_a_location(self):
        instance = self.make_instance()
        response = self.create_image(instance)
        self.assertEqual(202, response.status_int, response.text)
        self.assertEqual(b'', response.body)
        image, = self.store.list()
        self.assertTrue(response.headers['Location'].endswith(
            '/images/%s' % image.id))
        self.assertEqual(('queued', 'snap1'), (image.status, image.name))
        self.assertEqual({'image_type': 'snapshot',
                          'instance_uuid': instance.uuid,
                          'user_id': 'alice', 'base_image_ref': fakes.IMAGE.id,
                          'purpose': 'test'}, image.properties)
        # The flavor's memory and disk, as a server booted from it needs.
        self.assertEqual((512, 1), (image.min_ram, image.min_disk))
        self.assertEqual(task_states.IMAGE_SNAPSHOT,
                         self.reload(instance).task_state)
        name, _args, kwargs = self.compute_rpc.casts[-1]
        self.assertEqual(('snapshot_instance', image.id),
                         (name, kwargs['image_id']))
        action, = objects.InstanceAction.get_by_instance_uuid(
            self.ctx, instance.uuid)
        self.assertEqual('createImage', action.action)

    def test_create_image_from_2_45_answers_the_id(self):
        instance = self.make_instance(vm_state=vm_states.STOPPED)
        response = self.create_image(instance, version='2.45')
        self.assertEqual(202, response.status_int, response.text)
        image, = self.store.list()
        self.assertEqual({'image_id': image.id}, response.json)
        self.assertNotIn('Location', response.headers)

    def test_a_second_image_while_the_first_is_saved_is_409(self):
        instance = self.make_instance()
        self.assertEqual(202, self.create_image(instance).status_int)
        self.assertFault(self.create_image(instance), 409,
                         'conflictingRequest')
        self.assertEqual(1, len(self.store.list()))
        self.assertEqual(1, len(self.compute_rpc.casts))

    def test_states_that_refuse_are_409_and_change_nothing(self):
        for vm_state in (vm_states.ERROR, vm_states.BUILDING):
            with self.subTest(vm_state=vm_state):
                instance = self.make_instance(vm_state=vm_state)
                self.assertFault(self.create_image(instance), 409,
                                 'conflictingRequest')
                self.assertNothingChanged(instance)
        busy = self.make_instance(task_state=task_states.REBOOTING)
        self.assertFault(self.create_image(busy), 409, 'conflictingRequest')
        self.assertNothingChanged(busy, task_states.REBOOTING)

    def test_invalid_bodies_are_400_and_change_nothing(self):
        instance = self.make_instance()
        for body in ({'name': 'x', 'metadata': {'': ''}},
                     {'name': 'x', 'metadata': {'a' * 256: 'b' * 256}},
                     {'name': 'x', 'metadata': {'k': 'v' * 256}},
                     {'name': 'a' * 256}, {'name': ''}, {},
                     {'name': 'x', 'other': 1}):
            with self.subTest(body=body):
                self.assertFault(self.create_image(instance, body), 400,
                                 'badRequest')
        self.assertNothingChanged(instance)

    def test_metadata_over_quota_is_403_and_changes_nothing(self):
        instance = self.make_instance()
        metadata = {'k%d' % i: 'v' for i in range(129)}
        self.assertFault(self.create_image(instance, {
            'name': 'x', 'metadata': metadata}), 403, 'forbidden')
        self.assertNothingChanged(instance)

    def test_create_backup(self):
        instance = self.make_instance()
        response = self.action(instance, {'createBackup': {
            'name': 'b1', 'backup_type': 'daily', 'rotation': '2'}},
            version='2.45')
        self.assertEqual(202, response.status_int, response.text)
        image, = self.store.list()
        self.assertEqual({'image_id': image.id}, response.json)
        self.assertEqual(('backup', 'daily'),
                         (image.properties['image_type'],
                          image.properties['backup_type']))
        self.assertEqual(task_states.IMAGE_BACKUP,
                         self.reload(instance).task_state)
        name, _args, kwargs = self.compute_rpc.casts[-1]
        self.assertEqual(('backup_instance', 'daily', 2),
                         (name, kwargs['backup_type'], kwargs['rotation']))

    def test_invalid_backups_are_400_and_change_nothing(self):
        instance = self.make_instance()
        for body in ({'name': 'b', 'backup_type': 'daily'},
                     {'name': 'b', 'rotation': 1},
                     {'name': 'b', 'backup_type': 'daily', 'rotation': -1},
                     {'name': 'b', 'backup_type': 'daily', 'rotation': 'x'}):
            with self.subTest(body=body):
                self.assertFault(self.action(instance,
                                             {'createBackup': body}),
                                 400, 'badRequest')
        self.assertNothingChanged(instance)

    def test_the_proxy_shows_and_filters_snapshots_by_server_and_type(self):
        instance = self.make_instance()
        other = self.make_instance(name='vm2')
        self.create_image(instance)
        self.action(other, {'createBackup': {
            'name': 'b1', 'backup_type': 'daily', 'rotation': 1}})
        snap, = [m for m in self.store.list() if m.name == 'snap1']
        server_href = 'http://localhost/v2.1/servers/%s' % instance.uuid
        for query in ('server=%s' % instance.uuid, 'server=%s' % server_href,
                      'type=snapshot'):
            with self.subTest(query=query):
                body = self.request('GET', '/v2.1/images/detail?' + query,
                                    version='2.35').json
                image, = body['images']
                self.assertEqual(snap.id, image['id'])
                self.assertEqual('SAVING', image['status'])
                self.assertEqual(instance.uuid, image['server']['id'])
                self.assertEqual('test', image['metadata']['purpose'])
        body = self.request('GET', '/v2.1/images?type=backup',
                            version='2.35').json
        self.assertEqual(1, len(body['images']))

    def test_deleting_a_blank_image_id_is_404(self):
        response = self.request('DELETE', '/v2.1/images/', version='2.35')
        self.assertFault(response, 404, 'itemNotFound')
