"""Unmodified OpenStack clients against the API, authenticated by a real
Keystone.

A Keystone of its own (``nova.testing.keystone``: the ``keystone``
package on SQLite, fernet tokens, ``keystone-manage bootstrap``), the
embedded default (``nova-all``) with ``[api] auth_strategy = keystone``
and its own service user, the compute endpoint in the catalog. Then
python-openstackclient (``openstack``) and openstacksdk, as installed
from PyPI in ``.venv-keystone``, with nothing but the usual ``OS_*``
variables and a password: servers are created with openstacksdk's
compute proxy and with ``openstack server create --wait`` (its image
found through the catalog's image service, the API's ``/image``; its
network through ``os-networks``), everything else with ``openstack``;
and this project's ``nova`` CLI with the same variables. A member of
another project sees none of the admin's servers and is refused evacuate
(403); the database rows say where each server is.
"""

import json
import os
import re
import subprocess
import time
import unittest
import urllib.request

import sqlalchemy as sa

from nova.testing import keystone
from nova.tests import base

_MISSING = keystone.missing_reason()
WAIT = 90

# Runs in .venv-keystone's Python: one server created with openstacksdk,
# waited for, its id printed.
_CREATE = '''
import sys
import openstack
conn = openstack.connect()
server = conn.compute.create_server(
    name=sys.argv[1], imageRef=sys.argv[2], flavorRef='1',
    networks=[{'uuid': sys.argv[3]}])
server = conn.compute.wait_for_server(server, status='ACTIVE', wait=90)
print(server.id)
'''


@unittest.skipIf(_MISSING, 'Keystone unavailable: %s' % _MISSING)
class TestOpenStackClients(base.TestCase):

    def setUp(self):
        super().setUp()
        self.keystone = keystone.KeystoneServer(
            os.path.join(self.tmp, 'keystone')).start()
        self.addCleanup(self.keystone.stop)
        self.keystone.add_user('nova', 'nova-pass', project='service',
                               role='admin')
        self.keystone.add_user('demo', 'demo-pass', project='demo',
                               role='member')
        state = os.path.join(self.tmp, 'state-all')
        self.database = os.path.join(state, 'nova.sqlite')
        conf = os.path.join(self.tmp, 'nova.conf')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n'
                    '[api]\nlisten_port = 0\nauth_strategy = keystone\n'
                    '[keystone_authtoken]\nwww_authenticate_uri = %s\n'
                    'auth_url = %s\nauth_type = password\nusername = nova\n'
                    'password = nova-pass\nproject_name = service\n'
                    'user_domain_name = Default\n'
                    'project_domain_name = Default\n'
                    % (state, self.keystone.url, self.keystone.url))
        self.log_path = os.path.join(self.tmp, 'nova-all.log')
        self.start_nova_process('nova.cmd.all', conf, self.log_path)
        found = self._wait(lambda: re.search(r'listening on (http://\S+)',
                                             self._log()))
        self.assertTrue(found, self._log())
        self.keystone.add_endpoint('compute', 'nova',
                                   found.group(1) + '/v2.1')
        self.keystone.add_endpoint('image', 'images', found.group(1) +
                                   '/image')

    def _log(self):
        with open(self.log_path) as f:
            return f.read()

    @staticmethod
    def _wait(predicate, timeout=WAIT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.5)
        return None

    def _rows(self, sql, **params):
        engine = sa.create_engine('sqlite:///' + self.database)
        try:
            with engine.connect() as conn:
                return [dict(r._mapping)
                        for r in conn.execute(sa.text(sql), params)]
        finally:
            engine.dispose()

    def _run(self, argv, user='admin', expect=0):
        password = {'admin': keystone.ADMIN_PASSWORD,
                    'demo': 'demo-pass'}[user]
        env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'),
               'HOME': self.tmp}
        env.update(self.keystone.client_environ(user, password, user))
        done = subprocess.run(argv, env=env, capture_output=True,
                              text=True, timeout=300)
        if expect is not None:
            self.assertEqual(expect, done.returncode, '%s\n%s\n%s\n%s' % (
                argv, done.stdout, done.stderr, self._log()[-3000:]))
        return done

    def openstack(self, *args, user='admin', expect=0):
        """``openstack ARGS``; its JSON output when it has some."""
        argv = [keystone.venv_bin('openstack'), *args]
        json_out = bool({'list', 'show'} & set(args[:3]))
        if json_out:
            argv += ['-f', 'json']
        done = self._run(argv, user, expect)
        return json.loads(done.stdout) if json_out and expect == 0 \
            else done

    def create(self, name, user):
        image_id = self._image_id()
        (network,) = self._rows("SELECT uuid FROM networks "
                                "WHERE name = 'public'")
        done = self._run([keystone.venv_bin('python'), '-c', _CREATE, name,
                          image_id, network['uuid']], user)
        return done.stdout.strip().splitlines()[-1]

    def _image_id(self):
        # The image proxy API (before 2.36), with a Keystone token.
        token = self.keystone.token()
        (endpoint,) = re.findall(r'listening on (http://\S+)', self._log())
        request = urllib.request.Request(endpoint + '/v2.1/images',
                                         headers={'X-Auth-Token': token})
        with urllib.request.urlopen(request, timeout=30) as resp:
            images = json.loads(resp.read())['images']
        return next(i['id'] for i in images if i['name'] == 'tiny')

    def host_of(self, uuid):
        (row,) = self._rows('SELECT host FROM instances WHERE uuid = :u',
                            u=uuid)
        return row['host']

    def wait_status(self, uuid, statuses, host=None):
        def reached():
            server = self.openstack('server', 'show', uuid)
            if server['status'] in statuses and (
                    host is None or self.host_of(uuid) == host):
                return server
            return None
        server = self._wait(reached)
        self.assertIsNotNone(server, '%s never %s on %s: %s' % (
            uuid, statuses, host, self.openstack('server', 'show', uuid)))
        return server

    def test_clients_end_to_end(self):
        mine = self.create('vm-admin', 'admin')
        theirs = self.create('vm-demo', 'demo')

        # Each sees its own; only the admin sees all.
        self.assertEqual(['vm-admin'], [
            s['Name'] for s in self.openstack('server', 'list')])
        self.assertEqual(['vm-demo'], [
            s['Name'] for s in self.openstack('server', 'list',
                                              user='demo')])
        self.assertEqual({'vm-admin', 'vm-demo'}, {
            s['Name'] for s in self.openstack('server', 'list',
                                              '--all-projects')})
        refused = self.openstack('server', 'list', '--all-projects',
                                 user='demo', expect=None)
        self.assertNotEqual(0, refused.returncode)
        self.assertIn('403', refused.stderr)
        # The member's own server: evacuate is for administrators.
        refused = self.openstack('server', 'evacuate', theirs, user='demo',
                                 expect=None)
        self.assertNotEqual(0, refused.returncode)
        self.assertIn('403', refused.stderr)
        self.assertEqual([], self._rows('SELECT id FROM migrations'))

        # openstack server create, the image found through the catalog's
        # image service (this API's /image), the network through
        # os-networks (no Network service in the catalog).
        (network,) = self._rows("SELECT uuid FROM networks "
                                "WHERE name = 'public'")
        created = self.openstack(
            'server', 'create', '--image', 'tiny', '--flavor', 'm1.tiny',
            '--nic', 'net-id=%s' % network['uuid'], '--wait', '-f', 'json',
            'vm-cli', user='demo')
        cli_server = json.loads(created.stdout)
        self.assertEqual('ACTIVE', cli_server['status'])
        self.assertEqual('vm-cli', cli_server['name'])
        self.assertTrue(self.host_of(cli_server['id']))
        self.openstack('server', 'delete', '--wait', cli_server['id'],
                       user='demo')

        # Stop and start.
        self.openstack('server', 'stop', mine)
        self.wait_status(mine, ('SHUTOFF',))
        self.openstack('server', 'start', mine)
        self.wait_status(mine, ('ACTIVE',))

        # Evacuate the demo's server to a named host, then the admin's
        # with no host named, each from its host forced down.
        hosts = {'compute1', 'compute2'}
        source = self.host_of(theirs)
        (target,) = hosts - {source}
        self.openstack('compute', 'service', 'set', '--down', source,
                       'nova-compute')
        self.openstack('server', 'evacuate', '--host', target, theirs)
        self.wait_status(theirs, ('ACTIVE', 'SHUTOFF'), host=target)
        self.openstack('compute', 'service', 'set', '--up', source,
                       'nova-compute')
        source = self.host_of(mine)
        (target,) = hosts - {source}
        self.openstack('compute', 'service', 'set', '--down', source,
                       'nova-compute')
        self.openstack('server', 'evacuate', mine)
        self.wait_status(mine, ('ACTIVE', 'SHUTOFF'), host=target)

        migrations = self.openstack('server', 'migration', 'list')
        self.assertEqual(
            [('done', 'evacuation')] * 2,
            [(m['Status'], m['Type']) for m in migrations], migrations)
        self.assertEqual({mine, theirs},
                         {m['Server UUID'] for m in migrations})
        actions = [e['Action'] for e in self.openstack(
            'server', 'event', 'list', mine)]
        self.assertEqual(['create', 'evacuate', 'start', 'stop'],
                         sorted(actions))

        for uuid in (mine, theirs):
            self.openstack('server', 'delete', '--wait', uuid)
        self.assertEqual([], self.openstack('server', 'list',
                                            '--all-projects'))
        self.assertEqual([], self._rows(
            'SELECT uuid FROM instances WHERE deleted = 0'))
