"""The real cluster behind a real Keystone, driven by unmodified clients.

The cluster's own Keystone (``ClusterSpec(keystone=True)``,
``tools/cluster up N --keystone``): nova-api validates tokens with
keystonemiddleware, the compute endpoint is in the catalog, and
``cluster.json`` names the clients' ``clouds.yaml``. A guest boots on real
QEMU with ``vif_plugging_is_fatal``, so the network agent's
``network-vif-plugged`` events, posted to the API with a Keystone token,
must get through: it is created with ``openstack server create --host
compute1 --wait`` (2.74; the image found through the catalog's image
service, nova-api's ``/image``). Then python-openstackclient, with nothing
but ``OS_CLOUD`` and that ``clouds.yaml``: the admin lists the server and
the services, a member of another project sees nothing and is refused
evacuate, the admin evacuates the server off its dead host to a named
one, where it runs on (or stays stopped at microversion 2.95), and
deletes it: nothing of it is left on either host.
"""

import json
import os
import subprocess
import unittest

from nova.testing import keystone
from nova.tests.integration.e2e import base

_MISSING = keystone.missing_reason()
A, B = 'compute1', 'compute2'


@unittest.skipIf(_MISSING, 'Keystone unavailable: %s' % _MISSING)
class TestKeystoneCluster(base.ClusterTestCase):

    keystone = True

    def openstack(self, *args, cloud='cluster-admin', expect=0):
        env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'),
               'HOME': self.tmp, 'OS_CLOUD': cloud,
               'OS_CLIENT_CONFIG_FILE': self.record.clouds_yaml}
        argv = [keystone.venv_bin('openstack'), *args]
        listing = bool({'list', 'show'} & set(args[:3]))
        if listing:
            argv += ['-f', 'json']
        done = subprocess.run(argv, env=env, capture_output=True,
                              text=True, timeout=300)
        print('$ openstack %s (%s) -> %d\n%s%s' % (
            ' '.join(args), cloud, done.returncode, done.stdout[-1500:],
            done.stderr[-1500:]))
        if expect is not None:
            self.assertEqual(expect, done.returncode, done.stderr)
        return json.loads(done.stdout) if listing and expect == 0 else done

    def test_clients_against_the_cluster(self):
        self.assertTrue(os.path.exists(self.record.clouds_yaml))
        self.assertTrue(self.record.keystone_url)
        created = self.openstack(
            'server', 'create', '--image', self.spec.image_name,
            '--flavor', self.spec.flavor_id, '--nic',
            'net-id=%s' % self.record.network_id, '--host', A, '--wait',
            '-f', 'json', 'behind-keystone')
        uuid = json.loads(created.stdout)['id']
        self.wait_for_server(uuid, status='ACTIVE', host=A)
        self.assert_running_on(A, uuid)

        self.assertEqual([uuid], [s['ID'] for s in self.openstack(
            'server', 'list')])
        services = self.openstack('compute', 'service', 'list')
        self.assertEqual({(A, 'up'), (B, 'up')}, {
            (s['Host'], s['State']) for s in services
            if s['Binary'] == 'nova-compute'})
        self.assertEqual([], self.openstack('server', 'list',
                                            cloud='cluster-demo'))
        refused = self.openstack('server', 'evacuate', uuid,
                                 cloud='cluster-demo', expect=None)
        self.assertNotEqual(0, refused.returncode)

        self.fail_host(A, force_down=True)
        self.openstack('server', 'evacuate', '--host', B, uuid)
        server = self.wait_for_server(uuid, host=B, timeout=120)
        self.assertIn(server['status'], ('ACTIVE', 'SHUTOFF'))
        self.assertEqual('done', self.wait_for_migration(
            uuid, 'done')['status'])

        self.openstack('server', 'delete', '--wait', uuid)
        self.wait_for_gone(uuid)
        self.assert_nothing_of(B, uuid)
        self.revive_host(A)
