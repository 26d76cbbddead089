"""/os-services: list, the legacy updates and the 2.53 update."""

from nova import objects
from nova.objects import aggregate as aggregate_obj
from nova.tests.unit.api.openstack import fakes


class ServicesTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.conductor = self.make_service('ctl', binary='nova-conductor')
        self.set_down(self.host2)

    def reloaded(self, service):
        return objects.Service.get_by_id(self.ctx, service.id)

    def services(self, version=None, query=''):
        response = self.request('GET', '/v2.1/os-services' + query,
                                version=version)
        self.assertEqual(200, response.status_int, response.text)
        return {s['host'] + '/' + s['binary']: s
                for s in response.json['services']}

    # The reference's fields, exactly: strict clients refuse any other.
    FIELDS_21 = {'id', 'binary', 'host', 'zone', 'status', 'state',
                 'updated_at', 'disabled_reason'}
    FIELDS_211 = FIELDS_21 | {'forced_down'}

    def test_list_at_21(self):
        services = self.services()
        host1 = services['host1/nova-compute']
        self.assertEqual({'id': self.host1.id, 'binary': 'nova-compute',
                          'host': 'host1', 'zone': 'nova',
                          'status': 'enabled', 'state': 'up',
                          'disabled_reason': None},
                         {k: v for k, v in host1.items()
                          if k != 'updated_at'})
        self.assertEqual('down', services['host2/nova-compute']['state'])
        self.assertEqual('internal', services['ctl/nova-conductor']['zone'])

    def test_a_compute_host_shows_its_aggregates_zone(self):
        aggregate = aggregate_obj.Aggregate.create(
            self.ctx, 'rack1', {'availability_zone': 'az1'})
        aggregate_obj.Aggregate.add_host(self.ctx, aggregate.id, 'host1')
        services = self.services()
        self.assertEqual(('az1', 'nova', 'internal'), tuple(
            services[name]['zone'] for name in (
                'host1/nova-compute', 'host2/nova-compute',
                'ctl/nova-conductor')))

    def test_exactly_the_reference_fields_at_each_microversion(self):
        # A compute host that records disk leases on shared storage (this
        # project's own knowledge) shows none of it here.
        for service, leases in ((self.host1, 'lockd'), (self.host2, 'none')):
            row = self.reloaded(service)
            row.storage_identity = 'shared'
            row.disk_leases = leases
            row.disk_leases_reason = 'why'
            row.save()
        for version, fields in (('2.1', self.FIELDS_21),
                                ('2.10', self.FIELDS_21),
                                ('2.11', self.FIELDS_211),
                                ('2.53', self.FIELDS_211),
                                ('2.95', self.FIELDS_211)):
            with self.subTest(version=version):
                for name, service in self.services(version).items():
                    self.assertEqual(fields, set(service), name)
        response = self.request(
            'PUT', '/v2.1/os-services/%s' % self.host1.uuid,
            {'status': 'disabled'}, version='2.53')
        self.assertEqual(self.FIELDS_211, set(response.json['service']))

    def test_list_by_microversion(self):
        self.assertIn('forced_down',
                      self.services('2.11')['host1/nova-compute'])
        self.assertEqual(self.host1.uuid,
                         self.services('2.53')['host1/nova-compute']['id'])

    def test_filters(self):
        self.assertEqual(['host2/nova-compute'],
                         list(self.services(query='?host=host2')))
        self.assertEqual(['ctl/nova-conductor'],
                         list(self.services(query='?binary=nova-conductor')))

    def test_admin_only(self):
        self.assertFault(self.request('GET', '/v2.1/os-services',
                                      token=fakes.USER_TOKEN), 403,
                         'forbidden')
        self.assertFault(self.request(
            'PUT', '/v2.1/os-services/disable',
            {'host': 'host1', 'binary': 'nova-compute'},
            token=fakes.USER_TOKEN), 403, 'forbidden')
        self.assertFalse(self.reloaded(self.host1).disabled)

    def test_disable_enable(self):
        body = {'host': 'host1', 'binary': 'nova-compute'}
        response = self.request('PUT', '/v2.1/os-services/disable', body)
        self.assertEqual({'service': dict(body, status='disabled')},
                         response.json)
        self.assertTrue(self.reloaded(self.host1).disabled)
        response = self.request('PUT', '/v2.1/os-services/disable-log-reason',
                                dict(body, disabled_reason='maintenance'))
        self.assertEqual('maintenance',
                         self.reloaded(self.host1).disabled_reason)
        response = self.request('PUT', '/v2.1/os-services/enable', body)
        self.assertEqual('enabled', response.json['service']['status'])
        reloaded = self.reloaded(self.host1)
        self.assertEqual((False, None), (reloaded.disabled,
                                         reloaded.disabled_reason))

    def test_force_down_from_211_to_252(self):
        body = {'host': 'host1', 'binary': 'nova-compute',
                'forced_down': True}
        self.assertFault(self.request('PUT', '/v2.1/os-services/force-down',
                                      body, version='2.10'), 404,
                         'itemNotFound')
        self.assertFalse(self.reloaded(self.host1).forced_down)
        response = self.request('PUT', '/v2.1/os-services/force-down', body,
                                version='2.11')
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual({'service': body}, response.json)
        self.assertTrue(self.reloaded(self.host1).forced_down)
        self.assertEqual('down',
                         self.services('2.11')['host1/nova-compute']['state'])

    def test_legacy_updates_refuse_bad_bodies_and_unknown_services(self):
        for body, status in (({'host': 'host1'}, 400),
                             ({'host': 'host1', 'binary': 'nova-compute',
                               'forced_down': 'maybe'}, 400),
                             ({'host': 'host1', 'binary': 'bash',
                               'forced_down': True}, 400),
                             ({'host': 'nowhere', 'binary': 'nova-compute',
                               'forced_down': True}, 404)):
            with self.subTest(body=body):
                response = self.request('PUT',
                                        '/v2.1/os-services/force-down',
                                        body, version='2.11')
                self.assertEqual(status, response.status_int)
        self.assertFalse(self.reloaded(self.host1).forced_down)

    def test_legacy_forms_end_at_253(self):
        response = self.request('PUT', '/v2.1/os-services/force-down',
                                {'host': 'host1', 'binary': 'nova-compute',
                                 'forced_down': True}, version='2.53')
        self.assertFault(response, 400, 'badRequest', 'Invalid uuid')
        self.assertFalse(self.reloaded(self.host1).forced_down)

    def test_update_253(self):
        path = '/v2.1/os-services/%s' % self.host1.uuid
        response = self.request('PUT', path, {'forced_down': True},
                                version='2.53')
        self.assertEqual(200, response.status_int, response.text)
        service = response.json['service']
        self.assertEqual((self.host1.uuid, True, 'down'),
                         (service['id'], service['forced_down'],
                          service['state']))
        response = self.request('PUT', path, {
            'status': 'disabled', 'disabled_reason': 'fenced'},
            version='2.53')
        self.assertEqual(('disabled', 'fenced'),
                         (response.json['service']['status'],
                          response.json['service']['disabled_reason']))
        response = self.request('PUT', path, {'status': 'enabled',
                                              'forced_down': False},
                                version='2.53')
        reloaded = self.reloaded(self.host1)
        self.assertEqual((False, None, False),
                         (reloaded.disabled, reloaded.disabled_reason,
                          reloaded.forced_down))

    def test_update_253_refusals_change_nothing(self):
        path = '/v2.1/os-services/%s' % self.host1.uuid
        cases = [
            (path, {}, 400),
            (path, {'status': 'enabled', 'disabled_reason': 'x'}, 400),
            (path, {'disabled_reason': 'x'}, 400),
            (path, {'forced_down': True, 'host': 'host1'}, 400),
            ('/v2.1/os-services/%s' % self.conductor.uuid,
             {'forced_down': True}, 400),
            ('/v2.1/os-services/3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c',
             {'forced_down': True}, 404),
            ('/v2.1/os-services/%d' % self.host1.id,
             {'forced_down': True}, 400),
        ]
        for case_path, body, status in cases:
            with self.subTest(path=case_path, body=body):
                response = self.request('PUT', case_path, body,
                                        version='2.53')
                self.assertEqual(status, response.status_int,
                                 response.text)
        for service in (self.host1, self.conductor):
            reloaded = self.reloaded(service)
            self.assertEqual((False, False), (reloaded.forced_down,
                                              reloaded.disabled))
