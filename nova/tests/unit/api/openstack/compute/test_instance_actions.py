"""GET /servers/{id}/os-instance-actions[/{request_id}]."""

import datetime

import sqlalchemy as sa

from nova.api.openstack import common
from nova.api.openstack.compute.views import servers as server_views
from nova import context as nova_context
from nova.db import api as db_api
from nova.db import models
from nova import exception
from nova import objects
from nova.tests.unit.api.openstack import fakes


class _WithAStopAction(fakes.APITestCase):
    """A server with one action, req-stop-1, whose event failed on
    host1."""

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


class InstanceActionsTest(_WithAStopAction):

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


class InstanceActionsFrom258Test(_WithAStopAction):
    """What 2.58, 2.62, 2.66 and 2.84 add."""

    def setUp(self):
        super().setUp()
        for request_id, action in (('req-start-2', 'start'),
                                   ('req-reboot-3', 'reboot')):
            ctx = nova_context.RequestContext(
                user_id='alice', project_id='demo', request_id=request_id)
            objects.InstanceAction.action_start(ctx, self.instance.uuid,
                                                action)

    def listed(self, query='', version='2.58'):
        response = self.request('GET', self.path(query), version=version,
                                token=fakes.USER_TOKEN)
        self.assertEqual(200, response.status_int, response.text)
        return response.json['instanceActions']

    def request_ids(self, query='', version='2.58'):
        return [a['request_id'] for a in self.listed(query, version)]

    def test_updated_at_from_258(self):
        self.assertNotIn('updated_at', self.listed(version='2.57')[0])
        (stop,) = [a for a in self.listed()
                   if a['request_id'] == 'req-stop-1']
        action = objects.InstanceAction.get_by_request_id(
            self.ctx, self.instance.uuid, 'req-stop-1')
        self.assertEqual(common.dbtime(action.updated_at),
                         stop['updated_at'])

    def test_limit_and_marker_from_258(self):
        everything = ['req-reboot-3', 'req-start-2', 'req-stop-1']
        self.assertEqual(everything,
                         self.request_ids('?limit=1', version='2.57'))
        self.assertEqual(['req-reboot-3'], self.request_ids('?limit=1'))
        self.assertEqual(['req-start-2'],
                         self.request_ids('?limit=1&marker=req-reboot-3'))
        self.assertEqual(['req-stop-1'],
                         self.request_ids('?marker=req-start-2'))
        self.assertFault(self.request(
            'GET', self.path('?marker=req-nope'), version='2.58'), 400,
            'badRequest', 'marker')

    def test_changes_since_from_258_and_before_from_266(self):
        stop = objects.InstanceAction.get_by_request_id(
            self.ctx, self.instance.uuid, 'req-stop-1')
        reboot = objects.InstanceAction.get_by_request_id(
            self.ctx, self.instance.uuid, 'req-reboot-3')
        after_stop = common.dbtime(stop.updated_at + datetime.timedelta(
            microseconds=1))
        self.assertEqual(['req-reboot-3', 'req-start-2'], self.request_ids(
            '?changes-since=%s' % after_stop))
        self.assertEqual(['req-stop-1'], self.request_ids(
            '?changes-before=%s' % common.dbtime(stop.updated_at),
            version='2.66'))
        # Ignored before 2.66.
        self.assertEqual(3, len(self.request_ids(
            '?changes-before=%s' % common.dbtime(stop.updated_at),
            version='2.65')))
        self.assertFault(self.request(
            'GET', self.path('?changes-since=%s&changes-before=%s'
                             % (common.dbtime(reboot.updated_at),
                                common.dbtime(stop.updated_at))),
            version='2.66'), 400, 'badRequest')

    def event(self, version, token=fakes.ADMIN_TOKEN):
        response = self.request('GET', self.path('/req-stop-1'),
                                version=version, token=token)
        self.assertEqual(200, response.status_int, response.text)
        (event,) = response.json['instanceAction']['events']
        return event

    def test_event_host_and_host_id_from_262(self):
        for key in ('host', 'hostId'):
            self.assertNotIn(key, self.event('2.61'))
        host_id = server_views.host_id_of('demo', 'host1')
        admin = self.event('2.62')
        self.assertEqual(('host1', host_id), (admin['host'],
                                              admin['hostId']))
        # The owner sees the hashed host only, the one GET /servers shows.
        owner = self.event('2.62', token=fakes.USER_TOKEN)
        self.assertNotIn('host', owner)
        self.assertEqual(host_id, owner['hostId'])
        server = self.request('GET', '/v2.1/servers/%s' % self.instance.uuid,
                              token=fakes.USER_TOKEN).json['server']
        self.assertEqual(server['hostId'], owner['hostId'])

    def test_event_details_from_284_for_owners_too(self):
        self.assertNotIn('details', self.event('2.83'))
        self.assertEqual('Failed to power off instance: stuck',
                         self.event('2.84')['details'])
        owner = self.event('2.84', token=fakes.USER_TOKEN)
        # The owner's sentence, not the operator's message.
        self.assertEqual('The server could not be powered off.',
                         owner['details'])
        self.assertNotIn('traceback', owner)

    def test_event_details_never_name_the_host_to_the_owner(self):
        ctx = nova_context.RequestContext(
            user_id='alice', project_id='demo', request_id='req-start-2')
        objects.InstanceActionEvent.event_start(
            ctx, self.instance.uuid, 'compute_start_instance', 'compute-17')
        objects.InstanceActionEvent.event_finish(
            ctx, self.instance.uuid, 'compute_start_instance',
            exc=exception.DiskLeaseHeld(disk='/srv/nova/x/disk',
                                        holder='compute-17', reason='held'))
        response = self.request('GET', self.path('/req-start-2'),
                                version='2.84', token=fakes.USER_TOKEN)
        (event,) = response.json['instanceAction']['events']
        self.assertEqual(exception.DiskLeaseHeld.safe_msg, event['details'])
        self.assertNotIn('compute-17', response.text)
        self.assertNotIn('/srv/nova', response.text)
        admin = self.request('GET', self.path('/req-start-2'),
                             version='2.84').json['instanceAction']
        self.assertIn('fence compute-17 first',
                      admin['events'][0]['details'])

    def test_event_recorded_before_0009_shows_the_owner_a_sentence(self):
        # An old failed event has no owner's sentence: a generic one, never
        # its details; an event that did not fail has no details at all.
        action = objects.InstanceAction.get_by_request_id(
            self.ctx, self.instance.uuid, 'req-stop-1')
        with db_api.session() as session:
            session.execute(sa.update(models.InstanceActionEvent).where(
                models.InstanceActionEvent.action_id == action.id).values(
                    user_details=None, details='fence compute-17 first'))
        owner = self.event('2.84', token=fakes.USER_TOKEN)
        self.assertEqual(exception.GENERIC_SAFE_MESSAGE, owner['details'])
        ctx = nova_context.RequestContext(
            user_id='alice', project_id='demo', request_id='req-reboot-3')
        with objects.InstanceActionEvent.record(
                ctx, self.instance.uuid, 'compute_reboot_instance', 'h1'):
            pass
        response = self.request('GET', self.path('/req-reboot-3'),
                                version='2.84', token=fakes.USER_TOKEN)
        (event,) = response.json['instanceAction']['events']
        self.assertEqual(('Success', None),
                         (event['result'], event['details']))
