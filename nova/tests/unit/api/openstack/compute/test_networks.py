"""GET /os-networks (up to microversion 2.35)."""

from nova import objects
from nova.tests.unit.api.openstack import fakes

USER = 'alice:demo'


class NetworksTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.net = objects.Network(self.ctx, name='public', bridge='br-pub',
                                   cidr='172.24.4.0/24').create()

    def test_index_and_show(self):
        response = self.request('GET', '/v2.1/os-networks', token=USER)
        self.assertEqual(200, response.status_int, response.text)
        self.assertIn({'id': self.net.uuid, 'label': 'public',
                       'cidr': '172.24.4.0/24'},
                      response.json['networks'])
        response = self.request('GET', '/v2.1/os-networks/%s'
                                % self.net.uuid)
        self.assertEqual({'id': self.net.uuid, 'label': 'public',
                          'cidr': '172.24.4.0/24', 'bridge': 'br-pub'},
                         response.json['network'])

    def test_unknown_or_invalid_id_is_404(self):
        for network_id in ('3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c', 'public'):
            with self.subTest(network_id=network_id):
                self.assertFault(self.request(
                    'GET', '/v2.1/os-networks/%s' % network_id), 404,
                    'itemNotFound')

    def test_removed_from_236(self):
        self.assertEqual(200, self.request('GET', '/v2.1/os-networks',
                                           version='2.35').status_int)
        self.assertFault(self.request('GET', '/v2.1/os-networks',
                                      version='2.36'), 404, 'itemNotFound')
