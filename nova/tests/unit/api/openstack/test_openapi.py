"""The OpenAPI document: made from the router, served without a token."""

from nova.api.openstack import api_version as av
from nova.api.openstack.compute.schemas import servers as server_schemas
from nova.api.openstack import openapi
from nova.tests.unit.api.openstack import fakes


class OpenAPITest(fakes.APITestCase):

    def document(self, version=None):
        response = self.request('GET', '/v2.1/openapi.json', token=None,
                                version=version)
        self.assertEqual(200, response.status_int, response.text)
        return response.json

    def test_served_at_the_newest_microversion_without_a_token(self):
        document = self.document()
        self.assertEqual(openapi.OPENAPI, document['openapi'])
        self.assertEqual(str(av.MAX_VERSION), document['info']['version'])
        self.assertEqual([{'url': '/v2.1'}], document['servers'])

    def test_every_route_of_the_microversion_and_only_those(self):
        for version in ('2.1', '2.11', '2.53'):
            with self.subTest(version=version):
                document = self.document(version)
                served = {(r.template, r.method.lower())
                          for r in self.app.router.routes
                          if r.serves(av.v(version))}
                self.assertEqual(served, {
                    (path, method)
                    for path, operations in document['paths'].items()
                    for method in operations})
        self.assertIn('/os-services/force-down',
                      self.document('2.11')['paths'])
        self.assertNotIn('/os-services/force-down',
                         self.document('2.53')['paths'])

    def test_bodies_are_the_schemas_the_handlers_validate_with(self):
        for version, schema in (('2.1', server_schemas.create),
                                ('2.19', server_schemas.create_v219),
                                ('2.53', server_schemas.create_v237)):
            with self.subTest(version=version):
                create = self.document(version)['paths']['/servers']['post']
                self.assertEqual(
                    schema,
                    create['requestBody']['content']['application/json'][
                        'schema'])
        action = self.document('2.29')['paths'][
            '/servers/{server_id}/action']['post']
        body = action['requestBody']['content']['application/json'][
            'schema']
        self.assertIn('force', body['properties']['evacuate']['properties'])
        self.assertEqual(1, body['maxProperties'])

    def test_evacuate_body_has_no_force_from_268(self):
        for version, has_force in (('2.67', True), ('2.68', False),
                                   ('2.95', False)):
            with self.subTest(version=version):
                action = self.document(version)['paths'][
                    '/servers/{server_id}/action']['post']
                evacuate = action['requestBody']['content'][
                    'application/json']['schema']['properties']['evacuate']
                self.assertEqual(has_force,
                                 'force' in evacuate['properties'])
                self.assertFalse(evacuate['additionalProperties'])

    def test_parameters_name_the_path_and_the_microversion(self):
        show = self.document('2.10')['paths']['/servers/{server_id}']['get']
        self.assertEqual(
            [{'name': 'server_id', 'in': 'path', 'required': True,
              'schema': {'type': 'string', 'minLength': 1}},
             {'name': 'OpenStack-API-Version', 'in': 'header',
              'required': True,
              'schema': {'type': 'string', 'enum': ['compute 2.10']}}],
            show['parameters'])
        self.assertNotIn('requestBody', show)

    def test_a_bad_microversion_is_refused(self):
        response = self.request('GET', '/v2.1/openapi.json', token=None,
                                version='2.999')
        self.assertFault(response, 406, 'computeFault')
