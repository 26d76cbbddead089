"""POST /flavors, PUT /flavors/{id} (2.55), DELETE /flavors/{id}; the
flavor views' keys per microversion, and who sees a private flavor."""

import sqlalchemy as sa

from nova.api.openstack import common
from nova.db import api as db_api
from nova.db import control_models
from nova.objects import flavor_catalog
from nova.tests.unit.api.openstack import fakes

BASIC = {'id', 'name', 'links'}
DETAIL = BASIC | {'ram', 'vcpus', 'disk', 'OS-FLV-EXT-DATA:ephemeral',
                  'swap', 'rxtx_factor', 'os-flavor-access:is_public',
                  'OS-FLV-DISABLED:disabled'}
OTHER_TOKEN = 'bob:other'
_Flavor = control_models.Flavor


def flavor_rows():
    with db_api.session(read_only=True) as session:
        return [(r.flavorid, r.name, r.is_public) for r in session.scalars(
            sa.select(_Flavor).order_by(_Flavor.id))]


class FlavorManageTestCase(fakes.APITestCase):

    def create(self, token=fakes.ADMIN_TOKEN, version=None, **flavor):
        values = {'name': 'f1', 'ram': 512, 'vcpus': 1, 'disk': 10}
        values.update(flavor)
        return self.request('POST', '/v2.1/flavors', {'flavor': values},
                            token=token, version=version)


class CreateTest(FlavorManageTestCase):

    def test_create_with_every_field(self):
        response = self.create(id=1234, ram='1024', swap=256,
                               rxtx_factor=2, **{
                                   'OS-FLV-EXT-DATA:ephemeral': 5,
                                   'os-flavor-access:is_public': 'False'})
        self.assertEqual(200, response.status_int, response.text)
        flavor = response.json['flavor']
        self.assertEqual(DETAIL, set(flavor))
        self.assertEqual(('1234', 1024, 256, 5, 2.0, False),
                         (flavor['id'], flavor['ram'], flavor['swap'],
                          flavor['OS-FLV-EXT-DATA:ephemeral'],
                          flavor['rxtx_factor'],
                          flavor['os-flavor-access:is_public']))
        self.assertIn(('1234', 'f1', False), flavor_rows())

    def test_no_id_or_null_id_is_a_generated_uuid(self):
        for name, extra in (('absent', {}), ('null', {'id': None})):
            with self.subTest(name=name):
                flavor = self.create(name=name, **extra).json['flavor']
                self.assertTrue(common.uuid_like(flavor['id']))
                self.assertEqual(
                    name, flavor_catalog.get_by_flavor_id(
                        self.ctx, flavor['id']).name)

    def test_defaults(self):
        flavor = self.create(version='2.75').json['flavor']
        self.assertEqual((0, 0, 1.0, True, False),
                         (flavor['swap'], flavor['OS-FLV-EXT-DATA:ephemeral'],
                          flavor['rxtx_factor'],
                          flavor['os-flavor-access:is_public'],
                          flavor['OS-FLV-DISABLED:disabled']))

    def test_duplicate_id_or_name_is_409_and_writes_nothing(self):
        self.assertEqual(200, self.create(id='a').status_int)
        before = flavor_rows()
        for changes in ({'id': 'a', 'name': 'other'}, {'id': 'b'}):
            with self.subTest(changes=changes):
                self.assertFault(self.create(**changes), 409,
                                 'conflictingRequest')
        self.assertEqual(before, flavor_rows())

    def test_bad_input_is_400_and_writes_nothing(self):
        before = flavor_rows()
        for changes in ({'ram': 0}, {'ram': '0'}, {'ram': ''},
                        {'vcpus': -1}, {'disk': 'x'}, {'ram': 2 ** 31},
                        {'ram': str(2 ** 31)}, {'swap': -1},
                        {'rxtx_factor': 0}, {'rxtx_factor': '0'},
                        {'id': ''}, {'id': '..'}, {'id': 'a b'},
                        {'name': ' lead'}, {'name': ''},
                        {'os-flavor-access:is_public': 'maybe'},
                        {'description': 'below 2.55'}, {'unknown': 1}):
            with self.subTest(changes=changes):
                self.assertFault(self.create(**changes), 400, 'badRequest')
        self.assertEqual(before, flavor_rows())

    def test_only_admins_create(self):
        self.assertFault(self.create(token=fakes.USER_TOKEN), 403,
                         'forbidden')
        self.assertEqual([('1', 'm1.tiny', True)], flavor_rows())

    def test_description_from_255(self):
        response = self.create(version='2.55', description='big one')
        self.assertEqual(DETAIL | {'description'},
                         set(response.json['flavor']))
        self.assertEqual('big one', response.json['flavor']['description'])


class UpdateTest(FlavorManageTestCase):

    def update(self, body, version='2.55', token=fakes.ADMIN_TOKEN):
        return self.request('PUT', '/v2.1/flavors/1', body, token=token,
                            version=version)

    def test_update_description(self):
        response = self.update({'flavor': {'description': 'tiny'}})
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual(DETAIL | {'description'},
                         set(response.json['flavor']))
        self.assertEqual('tiny', flavor_catalog.get_by_flavor_id(
            self.ctx, '1').description)
        self.update({'flavor': {'description': None}})
        self.assertIsNone(flavor_catalog.get_by_flavor_id(
            self.ctx, '1').description)

    def test_refused_updates_change_nothing(self):
        self.assertEqual(405, self.update({'flavor': {'description': 'x'}},
                                          version='2.54').status_int)
        self.assertFault(self.update({'flavor': {'name': 'x'}}), 400,
                         'badRequest')
        self.assertFault(self.update({'flavor': {'description': 'x'}},
                                     token=fakes.USER_TOKEN), 403,
                         'forbidden')
        self.assertFault(self.request(
            'PUT', '/v2.1/flavors/99', {'flavor': {'description': 'x'}},
            version='2.55'), 404, 'itemNotFound')
        self.assertIsNone(flavor_catalog.get_by_flavor_id(
            self.ctx, '1').description)


class DeleteTest(FlavorManageTestCase):

    def test_delete_keeps_the_servers_of_the_flavor(self):
        instance = self.make_instance()
        response = self.request('DELETE', '/v2.1/flavors/1')
        self.assertEqual(202, response.status_int, response.text)
        self.assertEqual([], flavor_rows())
        self.assertFault(self.request('GET', '/v2.1/flavors/1'), 404,
                         'itemNotFound')
        # The server still shows the flavor it was built with.
        server = self.request('GET', '/v2.1/servers/%s' % instance.uuid,
                              version='2.47').json['server']
        self.assertEqual(('m1.tiny', 512), (server['flavor']['original_name'],
                                            server['flavor']['ram']))

    def test_delete_takes_the_specs_and_grants_along(self):
        self.create(id='p', **{'os-flavor-access:is_public': False})
        self.request('POST', '/v2.1/flavors/p/os-extra_specs',
                     {'extra_specs': {'a': '1'}})
        self.request('POST', '/v2.1/flavors/p/action',
                     {'addTenantAccess': {'tenant': 'demo'}})
        self.request('DELETE', '/v2.1/flavors/p')
        # The same id again starts with nothing.
        self.create(id='p', **{'os-flavor-access:is_public': False})
        self.assertEqual({}, flavor_catalog.get_by_flavor_id(
            self.ctx, 'p').extra_specs)
        self.assertEqual([], self.request(
            'GET', '/v2.1/flavors/p/os-flavor-access').json['flavor_access'])

    def test_refused_deletes_keep_the_flavor(self):
        self.assertFault(self.request('DELETE', '/v2.1/flavors/1',
                                      token=fakes.USER_TOKEN), 403,
                         'forbidden')
        self.assertFault(self.request('DELETE', '/v2.1/flavors/99'), 404,
                         'itemNotFound')
        self.assertEqual([('1', 'm1.tiny', True)], flavor_rows())


class ViewsTest(FlavorManageTestCase):

    def test_keys_per_microversion(self):
        for version, basic, detail in (
                ('2.1', BASIC, DETAIL),
                ('2.55', BASIC | {'description'}, DETAIL | {'description'}),
                ('2.61', BASIC | {'description'},
                 DETAIL | {'description', 'extra_specs'})):
            with self.subTest(version=version):
                (listed,) = self.request('GET', '/v2.1/flavors',
                                         version=version).json['flavors']
                self.assertEqual(basic, set(listed))
                (detailed,) = self.request(
                    'GET', '/v2.1/flavors/detail',
                    version=version).json['flavors']
                self.assertEqual(detail, set(detailed))
                shown = self.request('GET', '/v2.1/flavors/1',
                                     version=version).json['flavor']
                self.assertEqual(detail, set(shown))

    def test_extra_specs_inline_from_261(self):
        self.request('POST', '/v2.1/flavors/1/os-extra_specs',
                     {'extra_specs': {'hw:cpu_policy': 'shared'}})
        shown = self.request('GET', '/v2.1/flavors/1', version='2.61',
                             token=fakes.USER_TOKEN).json['flavor']
        self.assertEqual({'hw:cpu_policy': 'shared'}, shown['extra_specs'])


class VisibilityTest(FlavorManageTestCase):

    def setUp(self):
        super().setUp()
        self.create(id='private', name='private',
                    **{'os-flavor-access:is_public': False})

    def ids(self, token=fakes.ADMIN_TOKEN, query=''):
        return [f['id'] for f in self.request(
            'GET', '/v2.1/flavors/detail' + query,
            token=token).json['flavors']]

    def test_private_flavor_is_hidden_from_other_projects(self):
        self.assertEqual(['1'], self.ids(token=fakes.USER_TOKEN))
        self.assertFault(self.request('GET', '/v2.1/flavors/private',
                                      token=fakes.USER_TOKEN), 404,
                         'itemNotFound')
        self.assertFault(self.request(
            'GET', '/v2.1/flavors/private/os-extra_specs',
            token=fakes.USER_TOKEN), 404, 'itemNotFound')
        # A user's is_public filter does not widen what they see.
        self.assertEqual(['1'], self.ids(token=fakes.USER_TOKEN,
                                         query='?is_public=none'))

    def test_granted_project_sees_it_and_others_still_do_not(self):
        self.request('POST', '/v2.1/flavors/private/action',
                     {'addTenantAccess': {'tenant': 'demo'}})
        self.assertEqual(['1', 'private'], self.ids(token=fakes.USER_TOKEN))
        self.assertEqual(200, self.request(
            'GET', '/v2.1/flavors/private',
            token=fakes.USER_TOKEN).status_int)
        self.assertEqual(['1'], self.ids(token=OTHER_TOKEN))

    def test_admin_is_public_filter(self):
        # By default: the public ones (and those granted to the admin's
        # own project).
        self.assertEqual(['1'], self.ids())
        for text in ('f', 'false', 'no', '0'):
            self.assertEqual(['private'],
                             self.ids(query='?is_public=' + text))
        for text in ('t', 'true', 'yes', '1'):
            self.assertEqual(['1'], self.ids(query='?is_public=' + text))
        self.assertEqual(['1', 'private'], self.ids(query='?is_public=none'))
        self.assertFault(self.request('GET', '/v2.1/flavors?is_public=x'),
                         400, 'badRequest')

    def test_a_project_cannot_boot_a_private_flavor_it_was_not_granted(self):
        body = {'server': {'name': 'vm', 'imageRef': fakes.IMAGE.id,
                           'flavorRef': 'private'}}
        self.assertFault(self.request('POST', '/v2.1/servers', body,
                                      token=fakes.USER_TOKEN), 400,
                         'badRequest')
        self.request('POST', '/v2.1/flavors/private/action',
                     {'addTenantAccess': {'tenant': 'demo'}})
        response = self.request('POST', '/v2.1/servers', body,
                                token=fakes.USER_TOKEN)
        self.assertEqual(202, response.status_int, response.text)
