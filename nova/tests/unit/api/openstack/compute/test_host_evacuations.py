"""``/os-host-evacuations`` against the real compute API and database
(the conductor's cast is recorded; ``nova/tests/unit/conductor/
test_host_evacuation.py`` runs the run itself)."""

import datetime

from nova.objects import base as obj_base
from nova.objects import host_evacuation as run_obj
from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/os-host-evacuations'


class HostEvacuationsTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.set_down(self.host1)
        self.on_host1 = sorted((self.make_instance(host='host1')
                                for _ in range(2)), key=lambda i: i.uuid)
        self.make_instance(host='host2')

    def create(self, body, version=None, token=fakes.ADMIN_TOKEN):
        return self.request('POST', PATH, body=body, version=version,
                            token=token)

    def assertNothingChanged(self):
        self.assertEqual([], run_obj.HostEvacuation.get_all(self.ctx))
        self.assertEqual([], self.conductor_rpc.casts)
        for instance in self.on_host1:
            fresh = self.reload(instance)
            self.assertEqual(('host1', None), (fresh.host,
                                               fresh.task_state))

    def test_accepted_recorded_and_cast(self):
        response = self.create({'host_evacuation': {'host': 'host1'}})
        self.assertEqual(202, response.status_int, response.text)
        run = response.json['host_evacuation']
        self.assertEqual(('host1', None, run_obj.QUEUED),
                         (run['host'], run['target_host'], run['status']))
        self.assertEqual(
            [{'uuid': i.uuid, 'outcome': 'not-started', 'host': 'host1',
              'targets_tried': [], 'attempts': [], 'message': None}
             for i in self.on_host1], run['instances'])
        ((name, _args, kwargs),) = self.conductor_rpc.casts
        self.assertEqual(('run_host_evacuation', run['id']),
                         (name, kwargs['evacuation_uuid']))
        # Nothing is evacuated by the API itself.
        for instance in self.on_host1:
            self.assertIsNone(self.reload(instance).task_state)

        shown = self.request('GET', '%s/%s' % (PATH, run['id']))
        self.assertEqual(200, shown.status_int)
        self.assertEqual(run['instances'],
                         shown.json['host_evacuation']['instances'])
        listed = self.request('GET', PATH).json['host_evacuations']
        self.assertEqual([run['id']], [r['id'] for r in listed])
        self.assertNotIn('instances', listed[0])

    def test_the_rows_show_what_the_conductor_wrote(self):
        run_id = self.create({'host_evacuation': {'host': 'host1'}}).json[
            'host_evacuation']['id']
        item = run_obj.HostEvacuation.get_by_uuid(
            self.ctx, run_id).instances()[0]
        item.set_attempts([
            run_obj.Attempt('host2', run_obj.FAILED, 'm1', 'no bridge'),
            run_obj.Attempt('host3', run_obj.DONE, 'm2')])
        item.outcome, item.host = run_obj.DONE, 'host3'
        item.save()
        shown = self.request('GET', '%s/%s' % (PATH, run_id)).json[
            'host_evacuation']['instances'][0]
        self.assertEqual(('done', 'host3', ['host2', 'host3']),
                         (shown['outcome'], shown['host'],
                          shown['targets_tried']))
        self.assertEqual({'target': 'host2', 'outcome': 'failed',
                          'migration_uuid': 'm1', 'message': 'no bridge'},
                         shown['attempts'][0])

    def test_a_named_target(self):
        response = self.create({'host_evacuation': {
            'host': 'host1', 'target_host': 'host2'}})
        self.assertEqual(202, response.status_int, response.text)
        self.assertEqual('host2',
                         response.json['host_evacuation']['target_host'])

    def test_bad_bodies_are_400_and_change_nothing(self):
        for body, version in (
                ({}, None),
                ({'host_evacuation': {}}, None),
                ({'host_evacuation': {'host': 'host1', 'force': True}},
                 None),
                ({'host_evacuation': {'host': '../host1'}}, None),
                ({'host_evacuation': {'host': 'host1',
                                      'on_shared_storage': 'yes'}}, '2.1'),
                ({'host_evacuation': {'host': 'host1',
                                      'on_shared_storage': True}}, '2.14')):
            with self.subTest(body=body, version=version):
                self.assertFault(self.create(body, version=version), 400,
                                 'badRequest')
        self.assertNothingChanged()

    def test_on_shared_storage_below_214(self):
        response = self.create({'host_evacuation': {
            'host': 'host1', 'on_shared_storage': True}}, version='2.13')
        self.assertEqual(202, response.status_int, response.text)
        self.assertTrue(response.json['host_evacuation']['on_shared_storage'])

    def test_source_up_is_400_as_for_a_single_evacuate(self):
        self.assertFault(self.create({'host_evacuation': {'host': 'host2'}}),
                         400, 'badRequest', 'still in use')
        self.assertFault(self.create({'host_evacuation': {'host': 'nope'}}),
                         404, 'itemNotFound', 'nope')
        self.assertNothingChanged()

    def test_bad_targets_are_400(self):
        self.make_service('host3', up=False)
        for target, says in (('host1', 'the host being evacuated'),
                             ('nowhere', 'No compute host named nowhere'),
                             ('host3', 'host3')):
            with self.subTest(target=target):
                self.assertFault(self.create({'host_evacuation': {
                    'host': 'host1', 'target_host': target}}), 400,
                    'badRequest', says)
        self.assertNothingChanged()

    def test_one_run_of_a_host_at_a_time(self):
        first = self.create({'host_evacuation': {'host': 'host1'}})
        run_id = first.json['host_evacuation']['id']
        self.assertFault(self.create({'host_evacuation': {'host': 'host1'}}),
                         409, 'conflictingRequest', run_id)
        self.assertEqual(1, len(run_obj.HostEvacuation.get_all(self.ctx)))
        run = run_obj.HostEvacuation.get_by_uuid(self.ctx, run_id)
        self.assertTrue(run.take('conductor1'))
        # Running: still one at a time, however old.
        run.created_at = obj_base.utcnow() - datetime.timedelta(hours=1)
        run.save()
        self.assertFault(self.create({'host_evacuation': {'host': 'host1'}}),
                         409, 'conflictingRequest', run_id)
        self.assertTrue(run.end(run_obj.FINISHED))
        self.assertEqual(202, self.create(
            {'host_evacuation': {'host': 'host1'}}).status_int)

    def test_a_run_no_conductor_took_blocks_the_host_a_while_only(self):
        lost = run_obj.HostEvacuation.create(self.ctx, 'host1',
                                             self.on_host1)
        self.assertFault(self.create({'host_evacuation': {'host': 'host1'}}),
                         409, 'conflictingRequest', lost.uuid)
        lost.created_at = obj_base.utcnow() - datetime.timedelta(hours=1)
        lost.save()
        self.assertEqual(202, self.create(
            {'host_evacuation': {'host': 'host1'}}).status_int)

    def test_admin_only(self):
        self.assertFault(self.create({'host_evacuation': {'host': 'host1'}},
                                     token=fakes.USER_TOKEN), 403,
                         'forbidden')
        self.assertFault(self.request('GET', PATH, token=fakes.USER_TOKEN),
                         403, 'forbidden')
        self.assertNothingChanged()

    def test_unknown_or_malformed_ids_are_404(self):
        for run_id in ('0b0ea6e4-5b43-4b8e-9d4a-3c6f3f0e3f11', 'nope'):
            self.assertFault(self.request('GET', '%s/%s' % (PATH, run_id)),
                             404, 'itemNotFound')

    def test_the_openapi_document_describes_it(self):
        document = self.request('GET', '/v2.1/openapi.json').json
        operation = document['paths']['/os-host-evacuations']['post']
        schema = operation['requestBody']['content']['application/json'][
            'schema']
        self.assertEqual(['host'], schema['properties']['host_evacuation'][
            'required'])
        self.assertIn('get', document['paths'][
            '/os-host-evacuations/{evacuation_id}'])
