"""/flavors/{id}/os-extra_specs: list, set, show, update, unset; the
checks of known namespaces from 2.86."""

from nova.objects import flavor_catalog
from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/flavors/1/os-extra_specs'
SPECS = {'hw:numa_nodes': '1', 'hw:cpu_policy': 'shared'}


def stored(ctx):
    return flavor_catalog.get_by_flavor_id(ctx, '1').extra_specs


class ExtraSpecsTest(fakes.APITestCase):

    def set_specs(self, specs, version=None, token=fakes.ADMIN_TOKEN):
        return self.request('POST', PATH, {'extra_specs': specs},
                            version=version, token=token)

    def test_set_get_update_show_unset(self):
        response = self.set_specs(SPECS)
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual({'extra_specs': SPECS}, response.json)
        self.assertEqual({'extra_specs': SPECS}, self.request(
            'GET', PATH, token=fakes.USER_TOKEN).json)
        response = self.request('PUT', PATH + '/hw:numa_nodes',
                                {'hw:numa_nodes': '2'})
        self.assertEqual({'hw:numa_nodes': '2'}, response.json)
        self.assertEqual({'hw:numa_nodes': '2'}, self.request(
            'GET', PATH + '/hw:numa_nodes', token=fakes.USER_TOKEN).json)
        response = self.request('DELETE', PATH + '/hw:numa_nodes')
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual({'hw:cpu_policy': 'shared'}, stored(self.ctx))

    def test_numbers_are_stored_as_text(self):
        self.set_specs({'a': 1, 'b': 2.5})
        self.assertEqual({'a': '1', 'b': '2.5'}, stored(self.ctx))

    def test_missing_keys_are_404(self):
        self.assertFault(self.request('GET', PATH + '/nope'), 404,
                         'itemNotFound')
        self.assertFault(self.request('DELETE', PATH + '/nope'), 404,
                         'itemNotFound')
        self.assertFault(self.request(
            'GET', '/v2.1/flavors/99/os-extra_specs'), 404, 'itemNotFound')

    def test_refused_writes_change_nothing(self):
        self.set_specs(SPECS)
        for method, path, body in (
                ('PUT', PATH + '/hw:numa_nodes', {'hw:cpu_policy': 'x'}),
                ('PUT', PATH + '/hw:numa_nodes',
                 {'hw:numa_nodes': '1', 'hw:cpu_policy': 'x'}),
                ('POST', PATH, {'extra_specs': {'bad/key': 'x'}}),
                ('POST', PATH, {'extra_specs': {'k': 'v' * 256}}),
                ('POST', PATH, {'extra_specs': {'k': 10 ** 300}}),
                ('POST', PATH, {'extra_specs': {'k': True}}),
                ('POST', PATH, {'specs': {}})):
            with self.subTest(method=method, body=body):
                self.assertFault(self.request(method, path, body), 400,
                                 'badRequest')
        for method, path, body in (
                ('POST', PATH, {'extra_specs': {'a': 'b'}}),
                ('PUT', PATH + '/hw:numa_nodes', {'hw:numa_nodes': '3'}),
                ('DELETE', PATH + '/hw:numa_nodes', None)):
            with self.subTest(method=method, user=True):
                self.assertFault(self.request(method, path, body,
                                              token=fakes.USER_TOKEN),
                                 403, 'forbidden')
        self.assertEqual(SPECS, stored(self.ctx))

    def test_known_namespaces_are_checked_from_286(self):
        for specs in ({'hw:cpu_policy': 'fast'}, {'hw:numa_nodes': '0'},
                      {'hw:no_such_key': '1'}, {'trait:HW_CPU_X86_AVX': 'x'},
                      {'resources:VCPU': '-1'}):
            with self.subTest(specs=specs):
                self.assertFault(self.set_specs(specs, version='2.86'), 400,
                                 'badRequest')
                # Below 2.86 they are stored as given.
                self.assertEqual(200, self.set_specs(
                    specs, version='2.85').status_int)
        flavor_catalog.create(self.ctx, '2', 'm1.two', 512, 1, 1)
        good = {'hw:cpu_policy': 'dedicated', 'hw:numa_nodes': '2',
                'hw:cpu_thread_policy': 'isolate', 'foo:bar': 'baz',
                'no_namespace': 'x', 'resources1:VCPU': '2',
                'trait:HW_CPU_X86_AVX': 'required', 'hw:mem_page_size': '2MB'}
        response = self.request('POST', '/v2.1/flavors/2/os-extra_specs',
                                {'extra_specs': good}, version='2.86')
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual(good, flavor_catalog.get_by_flavor_id(
            self.ctx, '2').extra_specs)
        self.assertFault(self.request(
            'PUT', '/v2.1/flavors/2/os-extra_specs/hw:cpu_policy',
            {'hw:cpu_policy': 'fast'}, version='2.86'), 400, 'badRequest')
        self.assertEqual('dedicated', flavor_catalog.get_by_flavor_id(
            self.ctx, '2').extra_specs['hw:cpu_policy'])

    def test_a_server_keeps_the_specs_it_was_built_with(self):
        self.set_specs(SPECS)
        self.flavor = flavor_catalog.get_by_flavor_id(self.ctx, '1')
        instance = self.make_instance()
        self.request('DELETE', PATH + '/hw:numa_nodes')
        server = self.request('GET', '/v2.1/servers/%s' % instance.uuid,
                              version='2.47').json['server']
        self.assertEqual(SPECS, server['flavor']['extra_specs'])
