"""GET /servers/{id}/os-instance-actions[/{request_id}]."""

from nova import context as nova_context
from nova import exception
from nova import objects
from nova.tests.unit.api.openstack import fakes


class InstanceActionsTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.instance = self.make_instance()
        self.req_ctx = nova_context.RequestContext(
            user_id='alice', project_id='demo', request_id='req-stop-1')
        objects.InstanceAction.action_start(self.req_ctx, self.instance.uuid,
                                            'stop')
        objects.InstanceActionEvent.event_start(
            self.req_ctx, self.instance.uuid, 'compute_stop_instance',
            'host1')
        objects.InstanceActionEvent.event_finish(
            self.req_ctx, self.instance.uuid, 'compute_stop_instance',
            exc=exception.InstancePowerOffFailure(reason='stuck'))

    def path(self, suffix=''):
        return '/v2.1/servers/%s/os-instance-actions%s' % (
            self.instance.uuid, suffix)

    def test_list(self):
        response = self.request('GET', self.path(), token=fakes.USER_TOKEN)
        self.assertEqual(200, response.status_int, response.text)
        (action,) = response.json['instanceActions']
        self.assertEqual(('stop', 'req-stop-1', 'alice', 'demo',
                          self.instance.uuid),
                         (action['action'], action['request_id'],
                          action['user_id'], action['project_id'],
                          action['instance_uuid']))

    def test_show_with_events_for_admin(self):
        response = self.request('GET', self.path('/req-stop-1'))
        action = response.json['instanceAction']
        (event,) = action['events']
        self.assertEqual(('compute_stop_instance', 'Error'),
                         (event['event'], event['result']))
        self.assertIn('InstancePowerOffFailure', event['traceback'])

    def test_events_for_owner_from_251_without_traceback(self):
        response = self.request('GET', self.path('/req-stop-1'),
                                token=fakes.USER_TOKEN)
        self.assertNotIn('events', response.json['instanceAction'])
        response = self.request('GET', self.path('/req-stop-1'),
                                token=fakes.USER_TOKEN, version='2.51')
        (event,) = response.json['instanceAction']['events']
        self.assertNotIn('traceback', event)

    def test_unknown_request_id_is_404(self):
        for request_id in ('req-nope', '%252e%252e', 'x' * 300):
            with self.subTest(request_id=request_id):
                self.assertFault(self.request(
                    'GET', self.path('/' + request_id)), 404,
                    'itemNotFound')

    def test_deleted_server_from_221(self):
        self.instance.destroy()
        self.assertFault(self.request('GET', self.path()), 404,
                         'itemNotFound')
        response = self.request('GET', self.path(), version='2.21')
        self.assertEqual(1, len(response.json['instanceActions']))

    def test_foreign_server_is_404(self):
        self.assertFault(self.request('GET', self.path(),
                                      token='mallory:evil'), 404,
                         'itemNotFound')
