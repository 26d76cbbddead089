"""What the API tests share: a real compute API on a real database, with
RPC replaced by recorders.

NOTE: the casts to compute hosts and the conductor are recorded instead of
sent, because no compute service runs in a unit test; the functional tests
(``nova/tests/functional/api``) run the real RPC. Everything else (the
compute API's state checks, the objects, SQLite) is real.
"""

import datetime
import json

import webob

from nova.api.openstack import auth
from nova.api import wsgi as api_wsgi
from nova.compute import api as compute_api_mod
from nova import context as nova_context
from nova.image import meta as image_meta
from nova.model import vm_states
from nova import objects
from nova.objects import base as obj_base
from nova.objects import flavor_catalog
from nova.tests import base

COMPUTE = 'nova-compute'
ADMIN_TOKEN = 'admin:admin'
USER_TOKEN = 'alice:demo'


class RecordingRPC:
    """Records every cast as (method, kwargs)."""

    def __init__(self):
        self.casts = []

    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(name)

        def cast(ctxt, *args, **kwargs):
            self.casts.append((name, args, kwargs))
        return cast

    def methods(self):
        return [name for name, _args, _kwargs in self.casts]


class FakeImageStore:
    """The image store's reading side (list/get) over fixed metadata."""

    def __init__(self, images=()):
        self.images = {m.id: m for m in images}

    def list(self):
        return sorted(self.images.values(), key=lambda m: m.id)

    def get(self, image_id):
        from nova import exception
        try:
            return self.images[image_id]
        except KeyError:
            raise exception.ImageNotFound(image_id=image_id)


IMAGE = image_meta.ImageMeta(id='155d900f-4e14-4e4c-a73d-069cbf4541e6',
                             name='cirros', disk_format='qcow2', size=1024,
                             created_at='2024-05-06T07:08:09Z')
KERNEL = image_meta.ImageMeta(id='a2459075-d96c-40d5-893e-577ff92e721c',
                              name='kernel', disk_format='aki')


class APITestCase(base.TestCase):
    """A database with two compute hosts, a flavor and an image, and the
    API application over them (called in-process, no socket)."""

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = nova_context.get_admin_context()
        self.user_ctx = nova_context.RequestContext(
            user_id='alice', project_id='demo')
        self.compute_rpc = RecordingRPC()
        self.conductor_rpc = RecordingRPC()
        self.images = FakeImageStore([IMAGE, KERNEL])
        self.compute_api = compute_api_mod.API(
            self.compute_rpc, self.conductor_rpc, image_api=self.images)
        self.flavor = flavor_catalog.create(self.ctx, '1', 'm1.tiny', 512, 1,
                                            1)
        self.host1 = self.make_service('host1')
        self.host2 = self.make_service('host2')
        self.app = api_wsgi.make_app(self.compute_api,
                                     image_store=self.images,
                                     authenticator=auth.NoAuth2())

    # -- data ----------------------------------------------------------------

    def make_service(self, host, up=True, binary=COMPUTE):
        service = objects.Service(self.ctx, host=host, binary=binary,
                                  topic='compute').create()
        if up:
            service.heartbeat()
        else:
            self.set_down(service)
        return service

    def set_down(self, service):
        service.last_seen_up = obj_base.utcnow() - datetime.timedelta(
            hours=1)
        service.save()

    def make_instance(self, host='host1', vm_state=vm_states.ACTIVE,
                      task_state=None, project_id='demo', user_id='alice',
                      name='vm1', **fields):
        instance = objects.Instance(
            self.ctx, display_name=name, host=host, node=host,
            vm_state=vm_state, task_state=task_state, flavor=self.flavor,
            image_ref=IMAGE.id, user_id=user_id, project_id=project_id,
            power_state=fields.pop('power_state', 1), **fields)
        return instance.create()

    def reload(self, instance):
        return objects.Instance.get_by_uuid(self.ctx, instance.uuid,
                                            read_deleted='yes')

    # -- requests ------------------------------------------------------------

    def request(self, method, path, body=None, token=ADMIN_TOKEN,
                version=None, headers=None, raw=None):
        req = webob.Request.blank(path, method=method)
        if token is not None:
            req.headers['X-Auth-Token'] = token
        if version is not None:
            req.headers['OpenStack-API-Version'] = 'compute %s' % version
        if raw is not None:
            req.body = raw
            req.content_type = 'application/json'
        elif body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        for name, value in (headers or {}).items():
            req.headers[name] = value
        return req.get_response(self.app)

    def action(self, instance_or_id, body, **kwargs):
        server_id = getattr(instance_or_id, 'uuid', instance_or_id)
        return self.request('POST', '/v2.1/servers/%s/action' % server_id,
                            body=body, **kwargs)

    def assertFault(self, response, status, name, contains=None):
        self.assertEqual(status, response.status_int, response.text)
        body = response.json
        self.assertEqual([name], list(body), body)
        self.assertEqual(status, body[name]['code'])
        if contains is not None:
            self.assertIn(contains, body[name]['message'])
        return body[name]['message']
