"""POST /os-server-external-events: per-event codes, 200/207/404."""

from nova.tests.unit.api.openstack import fakes

MISSING = '3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c'
PORT = 'a3b0c6a2-1f0e-4b8e-9c11-5d2f7e8a9b01'


class ExternalEventsTest(fakes.APITestCase):

    def post(self, events, **kwargs):
        return self.request('POST', '/v2.1/os-server-external-events',
                            {'events': events}, **kwargs)

    def event(self, server_uuid, name='network-vif-plugged', **extra):
        return dict(server_uuid=server_uuid, name=name, **extra)

    def test_all_delivered_is_200(self):
        instance = self.make_instance()
        response = self.post([self.event(instance.uuid, tag=PORT),
                              self.event(instance.uuid,
                                         'network-vif-unplugged',
                                         tag=PORT, status='failed')])
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual([
            {'server_uuid': instance.uuid, 'name': 'network-vif-plugged',
             'status': 'completed', 'tag': PORT, 'code': 200},
            {'server_uuid': instance.uuid, 'name': 'network-vif-unplugged',
             'status': 'failed', 'tag': PORT, 'code': 200},
        ], response.json['events'])
        ((name, args, kwargs),) = self.compute_rpc.casts
        self.assertEqual(('external_instance_event', 'host1'),
                         (name, kwargs['host']))
        self.assertEqual(['network-vif-plugged', 'network-vif-unplugged'],
                         [e.name for e in args[1]])

    def test_some_undeliverable_is_207(self):
        instance = self.make_instance()
        nowhere = self.make_instance(host=None)
        response = self.post([self.event(instance.uuid),
                              self.event(MISSING),
                              self.event(nowhere.uuid)])
        self.assertEqual(207, response.status_int, response.text)
        self.assertEqual([200, 404, 422],
                         [e['code'] for e in response.json['events']])
        self.assertEqual('failed', response.json['events'][1]['status'])
        self.assertNotIn('tag', response.json['events'][0])

    def test_none_found_is_404(self):
        self.assertFault(self.post([self.event(MISSING)]), 404,
                         'itemNotFound', 'No instances found')
        self.assertEqual([], self.compute_rpc.casts)

    def test_bad_bodies_are_400(self):
        instance = self.make_instance()
        for events in ([], [self.event('not-a-uuid')],
                       [self.event(instance.uuid, 'network-bogus')],
                       [self.event(instance.uuid, status='done')],
                       [self.event(instance.uuid, extra=1)],
                       [{'name': 'network-vif-plugged'}],
                       [self.event(instance.uuid, 'volume-extended')]):
            with self.subTest(events=events):
                self.assertFault(self.post(events), 400, 'badRequest')
        self.assertEqual([], self.compute_rpc.casts)

    def test_volume_extended_from_251(self):
        instance = self.make_instance()
        response = self.post([self.event(instance.uuid, 'volume-extended')],
                             version='2.51')
        self.assertEqual(200, response.status_int, response.text)

    def test_admin_only(self):
        instance = self.make_instance()
        self.assertFault(self.post([self.event(instance.uuid)],
                                   token=fakes.USER_TOKEN), 403, 'forbidden')
        self.assertEqual([], self.compute_rpc.casts)
