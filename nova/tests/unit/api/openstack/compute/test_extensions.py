"""/extensions: the legacy table, by alias; 404 for any other."""

from nova.tests.unit.api.openstack import fakes

KEYS = {'alias', 'name', 'description', 'namespace', 'updated', 'links'}


class ExtensionsTest(fakes.APITestCase):

    def test_list_has_what_is_served_and_what_clients_look_for(self):
        response = self.request('GET', '/v2.1/extensions',
                                token=fakes.USER_TOKEN)
        self.assertEqual(200, response.status_int, response.text)
        extensions = response.json['extensions']
        for extension in extensions:
            self.assertEqual(KEYS, set(extension))
        aliases = {e['alias'] for e in extensions}
        self.assertTrue({'os-hypervisors', 'os-keypairs', 'os-services',
                         'os-simple-tenant-usage', 'os-hosts',
                         'os-consoles'} <= aliases, aliases)
        self.assertIn('Hosts', {e['name'] for e in extensions})
        # Nothing this project does not serve and Nova does not list.
        self.assertNotIn('os-volumes', aliases)

    def test_show_by_alias(self):
        response = self.request('GET', '/v2.1/extensions/os-consoles',
                                token=fakes.USER_TOKEN)
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual('os-consoles', response.json['extension']['alias'])
        self.assertFault(self.request('GET', '/v2.1/extensions/os-volumes'),
                         404, 'itemNotFound')
