"""Evacuate through the REST API at microversions 2.94 and 2.95, end to end.

The WSGI application over the evacuation harness's compute API: API ->
conductor -> target compute over RPC (inproc://), the real manager and
libvirt driver on libvirt's test driver, a real SQLite database
(``evacuate_harness``). From 2.95 the evacuated server ends STOPPED on
its new host, its guest defined there but not running; at 2.94 it comes
back in the state it had.
"""

import json

import webob

from nova.api.openstack import auth
from nova.api import wsgi as api_wsgi
from nova.model import power_state
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.functional import evacuate_harness as harness


class TestEvacuateByMicroversion(harness.EvacuateTestCase):

    def setUp(self):
        super().setUp()
        self.app = api_wsgi.make_app(self.api, image_store=self.images,
                                     authenticator=auth.NoAuth2())

    def request(self, method, path, version, body=None):
        req = webob.Request.blank('/v2.1' + path, method=method)
        req.headers['X-Auth-Token'] = 'admin:admin'
        req.headers['OpenStack-API-Version'] = 'compute %s' % version
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def evacuate_over_rest(self, instance, version, host='b'):
        response = self.request('POST', '/servers/%s/action' % instance.uuid,
                                version, {'evacuate': {'host': host}})
        self.assertEqual(200, response.status_int, response.text)
        (migration,) = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)
        return self.wait_for_evacuation(migration)

    def server(self, instance, version):
        response = self.request('GET', '/servers/%s' % instance.uuid,
                                version)
        self.assertEqual(200, response.status_int, response.text)
        return response.json['server']

    def test_at_295_a_running_server_ends_stopped_on_the_target(self):
        instance = self.boot('a')
        self.assertTrue(self.hosts['a'].running(instance))
        self.kill('a')

        migration = self.evacuate_over_rest(instance, '2.95')

        self.assertEqual(migration_obj.DONE, migration.status)
        row = self.fresh(instance)
        self.assertEqual(('b', 'b', 'stopped', None, power_state.SHUTDOWN),
                         (row.host, row.node, row.vm_state, row.task_state,
                          row.power_state))
        b = self.hosts['b']
        self.assertTrue(b.has_domain(instance))
        self.assertFalse(b.running(instance))
        server = self.server(instance, '2.95')
        self.assertEqual(('SHUTOFF', 'b'),
                         (server['status'], server['OS-EXT-SRV-ATTR:host']))
        self.assertEqual(
            ('evacuate', 'compute_rebuild_instance', 'Success', 'b'),
            self.events(instance)[-1])

        # Stopped, not broken: starting it runs the guest on its new host.
        response = self.request('POST', '/servers/%s/action' % instance.uuid,
                                '2.95', {'os-start': None})
        self.assertEqual(202, response.status_int, response.text)
        self.wait_for(lambda: self.fresh(instance).vm_state == 'active',
                      'the start')
        self.wait_for(lambda: self.fresh(instance).task_state is None,
                      'the start to end')
        self.assertTrue(b.running(instance))

    def test_at_294_a_running_server_comes_back_active(self):
        instance = self.boot('a')
        self.kill('a')

        migration = self.evacuate_over_rest(instance, '2.94')

        self.assertLandedOn('b', instance, migration)
        self.assertEqual('ACTIVE', self.server(instance, '2.94')['status'])
