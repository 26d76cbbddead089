"""/os-aggregates: list, create, show, update, delete and the actions, by
microversion, as the reference shapes them."""

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/os-aggregates'
CREATED = {'id', 'name', 'availability_zone', 'created_at', 'updated_at',
           'deleted', 'deleted_at'}
SHOWN = CREATED | {'hosts', 'metadata'}


class AggregatesTestCase(fakes.APITestCase):

    def create(self, name='rack1', zone=None, token=fakes.ADMIN_TOKEN,
               version=None):
        body = {'name': name}
        if zone is not None:
            body['availability_zone'] = zone
        return self.request('POST', PATH, {'aggregate': body}, token=token,
                            version=version)

    def make(self, name='rack1', zone=None):
        response = self.create(name, zone)
        self.assertEqual(200, response.status_int, response.text)
        return response.json['aggregate']['id']

    def act(self, aggregate_id, body, **kwargs):
        return self.request('POST', '%s/%s/action' % (PATH, aggregate_id),
                            body, **kwargs)

    def rows(self):
        by_id = sa.select(control_models.Aggregate).order_by(
            control_models.Aggregate.id)
        with db_api.session(read_only=True) as session:
            return (
                [r.name for r in session.scalars(by_id)],
                sorted((r.aggregate_id, r.host) for r in session.scalars(
                    sa.select(control_models.AggregateHost))),
                sorted((r.aggregate_id, r.key, r.value) for r in
                       session.scalars(sa.select(
                           control_models.AggregateMetadata))))


class ShapeTest(AggregatesTestCase):

    def test_create_answers_without_hosts_and_metadata(self):
        response = self.create(zone='az1')
        self.assertEqual(200, response.status_int)
        created = response.json['aggregate']
        self.assertEqual(CREATED, set(created))
        self.assertEqual(('rack1', 'az1', False, None, None),
                         (created['name'], created['availability_zone'],
                          created['deleted'], created['deleted_at'],
                          created['updated_at']))
        self.assertEqual((['rack1'], [], [(1, 'availability_zone', 'az1')]),
                         self.rows())

    def test_uuid_from_241(self):
        created = self.create(version='2.41').json['aggregate']
        self.assertEqual(CREATED | {'uuid'}, set(created))
        for version, keys in (('2.40', SHOWN), ('2.41', SHOWN | {'uuid'})):
            shown = self.request('GET', '%s/%s' % (PATH, created['id']),
                                 version=version).json['aggregate']
            self.assertEqual(keys, set(shown))
            listed = self.request('GET', PATH,
                                  version=version).json['aggregates']
            self.assertEqual([keys], [set(a) for a in listed])

    def test_update_sets_updated_at_and_answers_the_full_view(self):
        aggregate_id = self.make(zone='az1')
        response = self.request('PUT', '%s/%s' % (PATH, aggregate_id),
                                {'aggregate': {'name': 'rack2'}})
        self.assertEqual(200, response.status_int, response.text)
        updated = response.json['aggregate']
        self.assertEqual(SHOWN, set(updated))
        self.assertEqual(('rack2', 'az1'), (updated['name'],
                                            updated['availability_zone']))
        self.assertIsNotNone(updated['updated_at'])

    def test_actions_answer_the_full_view(self):
        aggregate_id = self.make()
        added = self.act(aggregate_id, {'add_host': {'host': 'host1'}})
        self.assertEqual(200, added.status_int, added.text)
        self.assertEqual(['host1'], added.json['aggregate']['hosts'])
        meta = self.act(aggregate_id, {'set_metadata': {'metadata': {
            'ssd': 'true', 'availability_zone': 'az1'}}})
        self.assertEqual(200, meta.status_int, meta.text)
        shown = meta.json['aggregate']
        self.assertEqual(SHOWN, set(shown))
        self.assertEqual('az1', shown['availability_zone'])
        unset = self.act(aggregate_id, {'set_metadata': {'metadata': {
            'ssd': None}}}).json['aggregate']
        self.assertEqual({'availability_zone': 'az1'}, unset['metadata'])
        removed = self.act(aggregate_id, {'remove_host': {'host': 'host1'}})
        self.assertEqual([], removed.json['aggregate']['hosts'])
        deleted = self.request('DELETE', '%s/%s' % (PATH, aggregate_id))
        self.assertEqual((200, b''), (deleted.status_int, deleted.body))
        self.assertEqual(([], [], []), self.rows())


class RefusalTest(AggregatesTestCase):
    """Bad requests answer as the reference does and change nothing."""

    def setUp(self):
        super().setUp()
        self.zone1 = self.make('rack1', zone='az1')
        self.zone2 = self.make('rack2', zone='az2')
        self.act(self.zone1, {'add_host': {'host': 'host1'}})
        self.before = self.rows()

    def tearDown(self):
        self.assertEqual(self.before, self.rows())
        super().tearDown()

    def test_users_may_do_nothing(self):
        aggregate = '%s/%s' % (PATH, self.zone1)
        for method, path, body in (
                ('GET', PATH, None), ('GET', aggregate, None),
                ('POST', PATH, {'aggregate': {'name': 'x'}}),
                ('PUT', aggregate, {'aggregate': {'name': 'x'}}),
                ('DELETE', aggregate, None),
                ('POST', aggregate + '/action',
                 {'add_host': {'host': 'host2'}}),
                ('POST', aggregate + '/action',
                 {'remove_host': {'host': 'host1'}}),
                ('POST', aggregate + '/action',
                 {'set_metadata': {'metadata': {'k': 'v'}}})):
            with self.subTest(method=method, path=path, body=body):
                self.assertFault(self.request(method, path, body,
                                              token=fakes.USER_TOKEN),
                                 403, 'forbidden')

    def test_names_are_checked_and_unique(self):
        for name in ('', 'a' * 256, ' padded'):
            self.assertFault(self.create(name), 400, 'badRequest')
        self.assertFault(self.create('rack1'), 409, 'conflictingRequest')
        self.assertFault(
            self.request('PUT', '%s/%s' % (PATH, self.zone2),
                         {'aggregate': {'name': 'rack1'}}),
            409, 'conflictingRequest')
        self.assertFault(self.request('PUT', '%s/%s' % (PATH, self.zone2),
                                      {'aggregate': {}}), 400, 'badRequest')

    def test_unknown_aggregates_and_hosts_are_404(self):
        for method, path, body in (
                ('GET', PATH + '/-1', None), ('DELETE', PATH + '/-1', None),
                ('PUT', PATH + '/99', {'aggregate': {'name': 'x'}}),
                ('POST', PATH + '/99/action',
                 {'add_host': {'host': 'host1'}}),
                # No row can have these (the fuzz found a 500 there).
                ('GET', PATH + '/9223372036854775808', None),
                ('PUT', PATH + '/2147483648', {'aggregate': {'name': 'x'}}),
                ('DELETE', PATH + '/0', None),
                ('GET', PATH + '/-1', None),
                ('POST', '%s/%s/action' % (PATH, self.zone2),
                 {'add_host': {'host': 'nowhere'}}),
                ('POST', '%s/%s/action' % (PATH, self.zone1),
                 {'remove_host': {'host': 'host2'}})):
            with self.subTest(method=method, path=path, body=body):
                self.assertFault(self.request(method, path, body), 404,
                                 'itemNotFound')
        self.assertFault(self.request('GET', PATH + '/abc'), 400,
                         'badRequest')

    def test_a_host_is_added_once_and_to_one_zone(self):
        self.assertFault(self.act(self.zone1, {'add_host': {'host': 'host1'}}),
                         409, 'conflictingRequest')
        self.assertFault(self.act(self.zone2, {'add_host': {'host': 'host1'}}),
                         409, 'conflictingRequest', contains='az1')

    def test_zone_changes_its_hosts_contradict_are_400(self):
        plain = self.make('plain')
        self.act(plain, {'add_host': {'host': 'host1'}})
        self.before = self.rows()
        self.assertFault(self.act(plain, {'set_metadata': {'metadata': {
            'availability_zone': 'az2'}}}), 400, 'badRequest')
        self.assertFault(
            self.request('PUT', '%s/%s' % (PATH, plain),
                         {'aggregate': {'availability_zone': 'az2'}}),
            400, 'badRequest')
        self.assertFault(self.create('x', zone='internal'), 400,
                         'badRequest')

    def test_an_aggregate_with_hosts_is_not_deleted(self):
        self.assertFault(self.request('DELETE', '%s/%s' % (PATH, self.zone1)),
                         400, 'badRequest')

    def test_one_action_a_request(self):
        self.assertFault(self.act(self.zone2, {
            'add_host': {'host': 'host2'},
            'remove_host': {'host': 'host1'}}), 400, 'badRequest')
        self.assertFault(self.act(self.zone2, {'add_host': {}}), 400,
                         'badRequest')
