"""A real Masakari runs against this project, unmodified.

masakari-api and masakari-engine 22.0.0 (``.venv-masakari``,
``nova.testing.masakari``) behind a real Keystone, with RabbitMQ between
them and their own database, beside nova-all on the embedded default
(two compute hosts on libvirt's test driver) behind the same Keystone,
found through the catalog. An operator's first steps: a failover segment,
then the compute hosts in it, which Masakari accepts only after asking
this project's Compute API (python-novaclient, microversion 2.53) that
each runs a nova-compute; a name that runs none is refused. Both services
stop by the records taken when they started.
"""

import unittest
import urllib.error

from nova.tests.integration import masakari_stack

HOSTS = ('compute1', 'compute2')


def setUpModule():
    masakari_stack.start_shared()


def tearDownModule():
    masakari_stack.stop_shared()


@unittest.skipIf(masakari_stack.MISSING, masakari_stack.MISSING)
class TestMasakari(masakari_stack.MasakariStackTestCase):

    def test_segment_takes_only_hosts_that_run_nova_compute(self):
        segment = self.masakari.create_segment('region-a', 'auto')
        self.assertEqual(('auto', 'COMPUTE'), (
            segment['recovery_method'], segment['service_type']))
        for host in HOSTS:
            added = self.masakari.add_host(segment['uuid'], host)
            self.assertEqual((host, False, False), (
                added['name'], added['reserved'], added['on_maintenance']))
        listed = self.masakari.request(
            'GET', '/segments/%s/hosts' % segment['uuid'])['hosts']
        self.assertEqual(sorted(HOSTS), sorted(h['name'] for h in listed))
        with self.assertRaises(urllib.error.HTTPError) as refused:
            self.masakari.add_host(segment['uuid'], 'no-such-host')
        self.assertEqual(400, refused.exception.code)
        self.assertEqual({'masakari-api': True, 'masakari-engine': True},
                         self.masakari.alive())

        # Stopped by the records taken at start; twice is harmless.
        records = dict(self.masakari.records)
        self.masakari.stop()
        self.assertEqual({}, {name: r for name, r in records.items()
                              if r.alive()})
        self.masakari.stop()
