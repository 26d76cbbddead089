"""Rebuild and lock through the REST API, end to end.

The WSGI application over the evacuation harness's compute API: API ->
compute host over RPC (inproc://), the real manager and libvirt driver on
libvirt's test driver, a real SQLite database. A rebuild boots the new
image on the server's own host, records the name, metadata and user_data
it was given, and keeps the server's power state; a locked server refuses
it (409) and nothing of the guest changes.
"""

import json
import os

import webob

from nova.api.openstack import auth
from nova.api import wsgi as api_wsgi
from nova.objects import instance_metadata as metadata_obj
from nova.tests.fixtures import libvirt_host as fixtures
from nova.tests.functional import evacuate_harness as harness


class TestRebuildOverRest(harness.EvacuateTestCase):

    HOSTS = ('a',)

    def setUp(self):
        super().setUp()
        self.app = api_wsgi.make_app(self.api, image_store=self.images,
                                     authenticator=auth.NoAuth2())
        self.alt = fixtures.add_disk_image(self.images, self.tmp,
                                           name='alt', size_mb=1)

    def request(self, method, path, version='2.57', body=None,
                token='admin:admin'):
        req = webob.Request.blank('/v2.1' + path, method=method)
        req.headers['X-Auth-Token'] = token
        req.headers['OpenStack-API-Version'] = 'compute %s' % version
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def act(self, instance, body, **kwargs):
        return self.request('POST', '/servers/%s/action' % instance.uuid,
                            body=body, **kwargs)

    def wait_idle(self, instance):
        self.wait_for(lambda: self.fresh(instance).task_state is None,
                      'the task of %s to end' % instance.uuid)
        return self.fresh(instance)

    def test_rebuild_boots_the_new_image_and_records_what_it_was_given(self):
        instance = self.boot('a')
        a = self.hosts['a']
        metadata_obj.InstanceMetadata.replace(self.ctx, instance.uuid,
                                              {'old': 'gone'})
        response = self.act(instance, {'rebuild': {
            'imageRef': self.alt.id, 'name': 'rebuilt',
            'metadata': {'HA_Enabled': 'True'},
            'user_data': 'aGVsbG8='}})
        self.assertEqual(202, response.status_int, response.text)
        self.assertEqual(self.alt.id,
                         response.json['server']['image']['id'])

        row = self.wait_idle(instance)
        self.assertEqual(('active', self.alt.id, 'rebuilt', 'aGVsbG8='),
                         (row.vm_state, row.image_ref, row.display_name,
                          row.user_data))
        self.assertTrue(a.running(instance))
        self.assertTrue(os.path.isdir(a.instance_dir(instance)))
        self.assertEqual({'HA_Enabled': 'True'},
                         metadata_obj.InstanceMetadata.get(self.ctx,
                                                           instance.uuid))
        server = self.request('GET', '/servers/%s' % instance.uuid).json[
            'server']
        self.assertEqual(('ACTIVE', self.alt.id, {'HA_Enabled': 'True'}),
                         (server['status'], server['image']['id'],
                          server['metadata']))
        self.assertEqual('Success', self.events(instance)[-1][2])

    def test_a_stopped_server_is_rebuilt_stopped(self):
        instance = self.boot('a')
        self.assertEqual(202, self.act(instance, {'os-stop': None}).status_int)
        self.assertEqual('stopped', self.wait_idle(instance).vm_state)
        response = self.act(instance, {'rebuild': {'imageRef': self.alt.id}})
        self.assertEqual(202, response.status_int, response.text)
        row = self.wait_idle(instance)
        self.assertEqual(('stopped', self.alt.id),
                         (row.vm_state, row.image_ref))
        self.assertFalse(self.hosts['a'].running(instance))

    def test_a_locked_server_refuses_its_owner_a_rebuild(self):
        instance = self.boot('a')
        instance.user_id, instance.project_id = 'alice', 'demo'
        instance.save()
        owner = 'alice:demo'
        self.assertEqual(202, self.act(instance, {'lock': None},
                                       token=owner).status_int)
        response = self.act(instance, {'rebuild': {'imageRef': self.alt.id}},
                            token=owner)
        self.assertEqual(409, response.status_int, response.text)
        row = self.fresh(instance)
        self.assertEqual((None, self.image.id),
                         (row.task_state, row.image_ref))
        self.assertTrue(self.hosts['a'].running(instance))
