"""os-flavor-access: list, addTenantAccess, removeTenantAccess."""

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova.objects import flavor_catalog
from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/flavors/%s/os-flavor-access'
_Project = control_models.FlavorProject


def grants():
    with db_api.session(read_only=True) as session:
        return [(r.flavor_id, r.project_id) for r in session.scalars(
            sa.select(_Project).order_by(_Project.id))]


class FlavorAccessTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        flavor_catalog.create(self.ctx, 'p', 'private', 512, 1, 1,
                              is_public=False)

    def act(self, name, tenant, flavor_id='p', token=fakes.ADMIN_TOKEN):
        return self.request('POST', '/v2.1/flavors/%s/action' % flavor_id,
                            {name: {'tenant': tenant}}, token=token)

    def test_add_list_remove(self):
        self.assertEqual({'flavor_access': []},
                         self.request('GET', PATH % 'p').json)
        response = self.act('addTenantAccess', 'demo')
        self.assertEqual(200, response.status_int, response.text)
        self.act('addTenantAccess', 'other')
        expected = [{'flavor_id': 'p', 'tenant_id': 'demo'},
                    {'flavor_id': 'p', 'tenant_id': 'other'}]
        self.assertEqual(expected, self.request(
            'GET', PATH % 'p').json['flavor_access'])
        response = self.act('removeTenantAccess', 'demo')
        self.assertEqual({'flavor_access': expected[1:]}, response.json)

    def test_conflicts_and_absences_change_nothing(self):
        self.act('addTenantAccess', 'demo')
        before = grants()
        self.assertFault(self.act('addTenantAccess', 'demo'), 409,
                         'conflictingRequest')
        self.assertFault(self.act('removeTenantAccess', 'nobody'), 404,
                         'itemNotFound')
        # A public flavor is everyone's: no list, no grants.
        self.assertFault(self.act('addTenantAccess', 'demo', '1'), 409,
                         'conflictingRequest')
        self.assertFault(self.request('GET', PATH % '1'), 404,
                         'itemNotFound')
        self.assertFault(self.act('addTenantAccess', 'demo', '99'), 404,
                         'itemNotFound')
        self.assertEqual(before, grants())

    def test_bad_bodies_are_400(self):
        for body in ({'addTenantAccess': {}},
                     {'addTenantAccess': {'tenant': ''}},
                     {'addTenantAccess': {'tenant': 'a', 'x': 1}},
                     {'grant': {'tenant': 'a'}},
                     {'addTenantAccess': {'tenant': 'a'},
                      'removeTenantAccess': {'tenant': 'a'}}):
            with self.subTest(body=body):
                self.assertFault(self.request(
                    'POST', '/v2.1/flavors/p/action', body), 400,
                    'badRequest')
        self.assertEqual([], grants())

    def test_only_admins(self):
        self.act('addTenantAccess', 'demo')
        for response in (
                self.act('addTenantAccess', 'x', token=fakes.USER_TOKEN),
                self.act('removeTenantAccess', 'demo',
                         token=fakes.USER_TOKEN),
                self.request('GET', PATH % 'p', token=fakes.USER_TOKEN)):
            self.assertFault(response, 403, 'forbidden')
        self.assertEqual(['demo'], [p for _f, p in grants()])
