"""The REST API and the ``nova`` CLI over real HTTP, end to end.

The API application is served on 127.0.0.1 (port 0) by the real threaded
server, over the compute API, conductor and compute hosts of
``evacuate_harness`` (real ComputeManager and LibvirtDriver on libvirt's
test driver, RPC over ``inproc://``, SQLite). Every step is a ``nova``
command or an HTTP request, and every test reads back the rows, the
domains and the files.
"""

import http.client
import io
import json
import os
import threading

from nova.api import wsgi as api_wsgi
from nova.cli import shell
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.functional import evacuate_harness as harness

ADMIN = 'admin:admin'
MISSING = '3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c'


class CLITestCase(harness.EvacuateTestCase):

    def setUp(self):
        super().setUp()
        self.network = objects.Network(self.ctx, name='public',
                                       bridge=harness.BRIDGE).create()
        self.server = api_wsgi.serve(
            api_wsgi.make_app(self.api, image_store=self.images),
            '127.0.0.1', 0)
        self.addCleanup(self.server.stop)

    def nova(self, *argv, token=ADMIN, version=None, expect=0):
        out, err = io.StringIO(), io.StringIO()
        prefix = ['--os-endpoint', self.server.url, '--os-token', token]
        if version:
            prefix += ['--os-compute-api-version', version]
        code = shell.main(prefix + list(argv), stdout=out, stderr=err,
                          environ={})
        self.assertEqual(expect, code, 'nova %s: %s%s'
                         % (' '.join(argv), out.getvalue(), err.getvalue()))
        return out.getvalue() + err.getvalue()

    def http(self, method, path, body=None, token=ADMIN, version=None):
        conn = http.client.HTTPConnection('127.0.0.1', self.server.port,
                                          timeout=30)
        headers = {'X-Auth-Token': token, 'Content-Type': 'application/json'}
        if version:
            headers['OpenStack-API-Version'] = 'compute %s' % version
        conn.request(method, '/v2.1' + path,
                     body=None if body is None else json.dumps(body),
                     headers=headers)
        response = conn.getresponse()
        raw = response.read()
        conn.close()
        return response.status, json.loads(raw) if raw else None

    def boot_via_cli(self, name='vm1'):
        self.nova('boot', '--image', self.image.id, '--flavor', '1', '--nic',
                  'net-id=%s' % self.network.uuid, '--poll',
                  '--poll-interval', '0.05', name)
        (instance,) = [i for i in objects.Instance.get_all(self.ctx)
                       if i.display_name == name]
        return instance

    def list_row(self, instance):
        for line in self.nova('list', '--all-tenants').splitlines():
            if instance.uuid in line:
                return [c.strip() for c in line.split('|')[1:-1]]
        self.fail('%s not listed' % instance.uuid)

    def host_of(self, instance):
        return self.hosts[self.fresh(instance).host]


class TestLifecycleOverHTTP(CLITestCase):

    def test_boot_list_stop_start_reboot_suspend_resume_delete(self):
        instance = self.boot_via_cli('vm1')
        host = self.host_of(instance)
        self.assertTrue(host.running(instance))
        port = self.fresh(instance).network_info[0].id
        self.assertEqual([instance.uuid, 'vm1', 'ACTIVE', '-', 'Running',
                          'public='], self.list_row(instance))

        self.assertIn('Request to stop server vm1 has been accepted.',
                      self.nova('stop', 'vm1'))
        self.wait_for(lambda: self.fresh(instance).vm_state == 'stopped'
                      and self.fresh(instance).task_state is None, 'stop')
        self.assertEqual(['SHUTOFF', '-', 'Shutdown'],
                         self.list_row(instance)[2:5])
        self.assertFalse(host.running(instance))
        # The disks survive a stop (what Nova bug 1660647 expects).
        self.assertTrue(os.path.exists(os.path.join(
            host.instance_dir(instance), 'disk')))

        self.nova('start', 'vm1')
        self.wait_for(lambda: self.fresh(instance).vm_state == 'active'
                      and self.fresh(instance).task_state is None, 'start')
        self.assertTrue(host.running(instance))

        self.nova('reboot', '--hard', 'vm1')
        self.wait_for(lambda: self.fresh(instance).task_state is None,
                      'reboot')
        self.assertEqual(['ACTIVE', '-', 'Running'],
                         self.list_row(instance)[2:5])

        self.nova('suspend', 'vm1')
        self.wait_for(lambda: self.fresh(instance).vm_state == 'suspended',
                      'suspend')
        self.assertEqual(['SUSPENDED', '-'], self.list_row(instance)[2:4])
        self.nova('resume', 'vm1')
        self.wait_for(lambda: self.fresh(instance).vm_state == 'active'
                      and self.fresh(instance).task_state is None, 'resume')

        actions = self.nova('instance-action-list', 'vm1')
        for action in ('create', 'stop', 'start', 'reboot', 'suspend',
                       'resume'):
            self.assertIn('| %s ' % action, actions)

        self.nova('delete', 'vm1')
        self.wait_for(lambda: self.fresh(instance).deleted, 'delete')
        self.assertFalse(host.has_domain(instance))
        self.assertFalse(os.path.exists(host.instance_dir(instance)))
        self.assertNotIn(port, host.sim.plugged_vifs())
        self.assertIn("No server with a name or ID of 'vm1' exists.",
                      self.nova('show', 'vm1', expect=1))

    def test_invalid_state_is_409_and_changes_nothing(self):
        instance = self.boot_via_cli('vm1')
        before = self.fresh(instance)
        output = self.nova('resume', 'vm1', expect=1)
        self.assertIn('(HTTP 409)', output)
        after = self.fresh(instance)
        self.assertEqual((before.vm_state, before.task_state,
                          before.updated_at),
                         (after.vm_state, after.task_state,
                          after.updated_at))

    def test_malformed_requests_change_nothing(self):
        instance = self.boot_via_cli('vm1')
        before = self.fresh(instance)
        for path, body in (
                ('/servers/%s/action' % instance.uuid, {'os-stop': 1}),
                ('/servers/%s/action' % instance.uuid, {'bogus': None}),
                ('/servers/../servers/%s/action' % instance.uuid,
                 {'os-stop': None}),
                ('/servers/%2e%2e/action', {'os-stop': None}),
                ('/servers/%s%%2F..%%2F/action' % instance.uuid,
                 {'os-stop': None})):
            with self.subTest(path=path, body=body):
                status, fault = self.http('POST', path, body)
                self.assertIn(status, (400, 404))
                self.assertIn(list(fault)[0], ('badRequest', 'itemNotFound'))
        after = self.fresh(instance)
        self.assertEqual((before.vm_state, before.task_state,
                          before.updated_at),
                         (after.vm_state, after.task_state,
                          after.updated_at))
        self.assertTrue(self.host_of(instance).running(instance))


class TestEvacuateOverHTTP(CLITestCase):

    def test_evacuate_via_cli(self):
        instance = self.boot_via_cli('vm1')
        source = self.fresh(instance).host
        self.assertIn('(HTTP 400)', self.nova('evacuate', 'vm1', expect=1))
        self.kill(source)
        services = self.nova('service-list', '--host', source)
        self.assertIn('| down ', services)

        self.assertIn('Request to evacuate server vm1 has been accepted.',
                      self.nova('evacuate', 'vm1'))
        (migration,) = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)
        migration = self.wait_for_evacuation(migration)
        self.assertEqual(migration_obj.DONE, migration.status)
        row = self.fresh(instance)
        self.assertNotEqual(source, row.host)
        self.assertTrue(self.hosts[row.host].running(instance))
        self.assertEqual(['ACTIVE', '-', 'Running'],
                         self.list_row(instance)[2:5])
        listed = self.nova('migration-list', '--host', source)
        self.assertIn('| done ', listed)
        self.assertIn('| evacuation |', listed)
        self.assertIn('| evacuate ', self.nova('instance-action-list',
                                               'vm1'))

    def test_evacuation_leftovers_over_http_failure_then_retry(self):
        instance = self.boot_via_cli('vm1')
        source = self.fresh(instance).host
        target = sorted(set(self.hosts) - {source})[0]
        self.kill(source)
        # The target lacks the port's bridge: its spawn fails for real.
        self.hosts[target].sim.remove_bridge(harness.BRIDGE)

        self.assertIn('Request to evacuate server vm1 has been accepted.',
                      self.nova('evacuate', 'vm1', target))
        (migration,) = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)
        migration = self.wait_for_evacuation(migration)
        self.assertEqual(migration_obj.FAILED, migration.status)
        self.assertNoTrace(self.hosts[target], instance)
        self.assertEqual(['ERROR', '-'], self.list_row(instance)[2:4])
        status, body = self.http('GET', '/servers/%s' % instance.uuid)
        self.assertEqual(200, status)
        server = body['server']
        self.assertEqual((source, 'error'),
                         (server['OS-EXT-SRV-ATTR:host'],
                          server['OS-EXT-STS:vm_state']))
        self.assertIn(harness.BRIDGE, server['fault']['message'])

        # Fixed; the same evacuation again works, no reset-state.
        self.hosts[target].sim.add_bridge(harness.BRIDGE)
        self.nova('evacuate', 'vm1', target)
        migrations = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)
        retry = [m for m in migrations if m.uuid != migration.uuid][0]
        self.assertEqual(migration_obj.DONE,
                         self.wait_for_evacuation(retry).status)
        self.assertEqual(target, self.fresh(instance).host)
        self.assertEqual(['ACTIVE', '-', 'Running'],
                         self.list_row(instance)[2:5])

    def test_force_down_then_evacuate_to_a_named_host_at_213(self):
        instance = self.boot_via_cli('vm1')
        source = self.fresh(instance).host
        target = sorted(set(self.hosts) - {source})[0]
        self.nova('service-force-down', source, 'nova-compute')
        self.assertIn('Request to evacuate',
                      self.nova('evacuate', 'vm1', target, version='2.13'))
        (migration,) = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)
        self.assertEqual(migration_obj.DONE,
                         self.wait_for_evacuation(migration).status)
        self.assertEqual(target, self.fresh(instance).host)

    def test_host_evacuate(self):
        booted = [self.boot_via_cli('vm%d' % n) for n in range(3)]
        source = self.fresh(booted[0]).host
        on_source = [i for i in booted if self.fresh(i).host == source]
        self.kill(source)
        output = self.nova('host-evacuate', source)
        for instance in on_source:
            self.assertIn('| %s | True ' % instance.uuid, output)
            (migration,) = objects.Migration.get_by_filters(
                self.ctx, instance_uuid=instance.uuid)
            self.assertEqual(migration_obj.DONE,
                             self.wait_for_evacuation(migration).status)
            self.assertNotEqual(source, self.fresh(instance).host)
        moved = {i.uuid for i in on_source}
        for instance in [i for i in booted if i.uuid not in moved]:
            self.assertNotIn(instance.uuid, output)
            self.assertEqual([], objects.Migration.get_by_filters(
                self.ctx, instance_uuid=instance.uuid))

    def test_concurrent_evacuations_one_wins(self):
        instance = self.boot_via_cli('vm1')
        self.kill(self.fresh(instance).host)
        statuses = []
        start = threading.Barrier(2, timeout=10)

        def request():
            start.wait()
            statuses.append(self.http(
                'POST', '/servers/%s/action' % instance.uuid,
                {'evacuate': {}}, version='2.14')[0])

        threads = [threading.Thread(target=request) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        self.assertEqual([200, 409], sorted(statuses))
        (migration,) = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)
        self.assertEqual(migration_obj.DONE,
                         self.wait_for_evacuation(migration).status)

    def test_external_event_for_a_server(self):
        instance = self.boot_via_cli('vm1')
        port = self.fresh(instance).network_info[0].id
        status, body = self.http('POST', '/os-server-external-events', {
            'events': [{'name': 'network-vif-plugged', 'tag': port,
                        'server_uuid': instance.uuid},
                       {'name': 'network-vif-plugged', 'tag': port,
                        'server_uuid': MISSING}]})
        self.assertEqual(207, status)
        self.assertEqual([200, 404], [e['code'] for e in body['events']])


class TestFailedBootOverHTTP(CLITestCase):

    def test_boot_poll_reports_the_fault(self):
        # No host offers this bridge: plugging the port fails for real.
        broken = objects.Network(self.ctx, name='nowhere',
                                 bridge='br-none').create()
        output = self.nova('boot', '--image', self.image.id, '--flavor', '1',
                           '--nic', 'net-id=%s' % broken.uuid, '--poll',
                           '--poll-interval', '0.05', 'doomed', expect=1)
        self.assertIn('ERROR (CommandError): Error building server', output)
        (instance,) = objects.Instance.get_all(self.ctx)
        self.assertEqual('error', self.fresh(instance).vm_state)
        self.assertEqual('ERROR', self.list_row(instance)[2])
        shown = self.nova('show', 'doomed')
        self.assertIn('| fault ', shown)
        self.assertIn('br-none', shown)
