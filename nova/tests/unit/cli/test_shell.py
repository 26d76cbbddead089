"""The ``nova`` command line: argument parsing, and every command against
the real API application on a real socket (casts recorded, see fakes)."""

import io

from nova.api import wsgi as api_wsgi
from nova.cli import shell
from nova.model import network as network_model
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.tests import base
from nova.tests.unit.api.openstack import fakes

PORT = 'a3b0c6a2-1f0e-4b8e-9c11-5d2f7e8a9b01'


class ParserTest(base.TestCase):

    def parse(self, argv, environ=None):
        return shell.build_parser(environ or {}).parse_args(argv)

    def test_defaults_and_environment(self):
        args = self.parse(['list'])
        # Nothing given: resolved later (nova/cli/keystone_auth.py).
        self.assertEqual((None, None, 'latest'),
                         (args.os_endpoint, args.os_token,
                          args.os_compute_api_version))
        args = self.parse(['list'], {'NOVA_ENDPOINT': 'http://n:1',
                                     'OS_TOKEN': 't',
                                     'OS_COMPUTE_API_VERSION': '2.11'})
        self.assertEqual(('http://n:1', 't', '2.11'),
                         (args.os_endpoint, args.os_token,
                          args.os_compute_api_version))
        args = self.parse(['--os-endpoint', 'http://x:2', 'list'],
                          {'OS_COMPUTE_API': 'http://o:1',
                           'NOVA_ENDPOINT': 'http://n:1'})
        self.assertEqual('http://x:2', args.os_endpoint)
        self.assertEqual('http://o:1', self.parse(
            ['list'], {'OS_COMPUTE_API': 'http://o:1',
                       'NOVA_ENDPOINT': 'http://n:1'}).os_endpoint)

    def test_boot(self):
        args = self.parse(['boot', '--image', 'cirros', '--flavor', '1',
                           '--nic', 'net-id=x', '--poll', 'vm1'])
        self.assertEqual(('cirros', '1', ['net-id=x'], True, 'vm1'),
                         (args.image, args.flavor, args.nic, args.poll,
                          args.name))
        self.assertRaises(SystemExit, self.parse, ['boot', 'vm1'])

    def test_evacuate_and_host_evacuate(self):
        args = self.parse(['evacuate', '--on-shared-storage', 'vm1'])
        self.assertEqual(('vm1', None, True, False),
                         (args.server, args.host, args.on_shared_storage,
                          args.force))
        args = self.parse(['evacuate', '--force', 'vm1', 'host2'])
        self.assertEqual(('host2', True), (args.host, args.force))
        args = self.parse(['host-evacuate', '--target_host', 'h2', 'h1'])
        self.assertEqual(('h1', 'h2'), (args.host, args.target_host))
        self.assertEqual((False, None, None, 60.0),
                         (args.wait, args.poll_interval, args.wait_timeout,
                          args.timeout))
        # The conductor runs it: no concurrency to choose, no forcing.
        for option in ('--max-concurrent', '--force'):
            with self.subTest(option=option):
                self.assertRaises(SystemExit, self.parse, [
                    'host-evacuate', option, '1', 'h1'])
        args = self.parse(['host-evacuation-show', 'run-1'])
        self.assertEqual('run-1', args.evacuation_id)

    def test_host_evacuate_wait_options(self):
        # The command's --timeout is not the HTTP one before the command.
        args = self.parse(['--timeout', '30', 'host-evacuate', '--wait',
                           '--poll-interval', '0.5', '--timeout', '600',
                           'h1'])
        self.assertEqual((True, 0.5, 600.0, 30.0, 'h1'),
                         (args.wait, args.poll_interval, args.wait_timeout,
                          args.timeout, args.host))

    def test_many_servers_and_flags(self):
        args = self.parse(['reboot', '--hard', 'a', 'b'])
        self.assertEqual((['a', 'b'], True), (args.server, args.hard))
        args = self.parse(['reset-state', '--active', 'a'])
        self.assertTrue(args.active)
        args = self.parse(['service-force-down', '--unset', 'h', 'nova-x'])
        self.assertEqual(('h', 'nova-x', True),
                         (args.host, args.binary, args.unset))
        args = self.parse(['instance-action', 'vm', 'req-1'])
        self.assertEqual(('vm', 'req-1'), (args.server, args.request_id))

    def test_usage_errors_exit_2(self):
        for argv in ([], ['frobnicate'], ['show'], ['evacuate']):
            with self.subTest(argv=argv):
                with self.assertRaises(SystemExit) as caught:
                    with self.quiet():
                        self.parse(argv)
                self.assertEqual(2, caught.exception.code)

    def quiet(self):
        import contextlib
        return contextlib.redirect_stderr(io.StringIO())


class ShellTestCase(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.server = api_wsgi.serve(self.app, '127.0.0.1', 0)
        self.addCleanup(self.server.stop)

    def nova(self, *argv, token=fakes.ADMIN_TOKEN, version=None):
        out, err = io.StringIO(), io.StringIO()
        prefix = ['--os-endpoint', self.server.url, '--os-token', token]
        if version:
            prefix += ['--os-compute-api-version', version]
        code = shell.main(prefix + list(argv), stdout=out, stderr=err,
                          environ={})
        return code, out.getvalue(), err.getvalue()


class ServerCommandsTest(ShellTestCase):

    def test_list(self):
        network = network_model.Network(id='n1', label='public',
                                        bridge='br0')
        stopped = self.make_instance(
            name='test-boot', vm_state=vm_states.STOPPED, power_state=4,
            network_info=network_model.NetworkInfo([network_model.VIF(
                id=PORT, address='fa:16:3e:00:00:01', network=network,
                ips=('172.24.4.8', '2001:db8::9'))]))
        error = self.make_instance(name='broken', vm_state=vm_states.ERROR,
                                   power_state=0,
                                   task_state=task_states.REBUILDING)
        code, out, _err = self.nova('list', token=fakes.USER_TOKEN)
        self.assertEqual(0, code)
        lines = out.splitlines()
        self.assertEqual('| ID                                   | Name      |'
                         ' Status  | Task State | Power State |'
                         ' Networks                       |', lines[1])
        self.assertEqual('| %s | broken    | REBUILD | rebuilding |'
                         ' NOSTATE     |                                |'
                         % error.uuid, lines[3])
        self.assertEqual('| %s | test-boot | SHUTOFF | -          |'
                         ' Shutdown    | public=172.24.4.8, 2001:db8::9 |'
                         % stopped.uuid, lines[4])

    def test_show_by_name_and_id(self):
        instance = self.make_instance(name='web')
        for ref in ('web', instance.uuid):
            code, out, _err = self.nova('show', ref)
            self.assertEqual(0, code)
            self.assertIn('| id ', out)
            self.assertIn(instance.uuid, out)
            self.assertIn('| OS-EXT-SRV-ATTR:host ', out)

    def test_show_unknown_and_ambiguous(self):
        self.make_instance(name='twin')
        self.make_instance(name='twin')
        code, out, err = self.nova('show', 'nope')
        self.assertEqual((1, ''), (code, out))
        self.assertEqual("ERROR (CommandError): No server with a name or ID "
                         "of 'nope' exists.\n", err)
        code, _out, err = self.nova('show', 'twin')
        self.assertIn('Multiple server matches', err)

    def test_stop_start_messages_and_state(self):
        instance = self.make_instance(name='web')
        code, out, _err = self.nova('stop', 'web')
        self.assertEqual((0, 'Request to stop server web has been '
                             'accepted.\n'), (code, out))
        self.assertEqual(task_states.POWERING_OFF,
                         self.reload(instance).task_state)
        code, out, err = self.nova('start', 'web')
        self.assertEqual(1, code)
        self.assertIn('(HTTP 409)', out)
        self.assertEqual('ERROR (CommandError): Unable to start the '
                         'specified server(s).\n', err)

    def test_pause_unpause(self):
        a = self.make_instance(name='a')
        self.assertEqual((0, 'Request to pause server a has been '
                             'accepted.\n', ''), self.nova('pause', 'a'))
        self.assertEqual(task_states.PAUSING, self.reload(a).task_state)
        b = self.make_instance(name='b', vm_state=vm_states.PAUSED)
        self.assertEqual(0, self.nova('unpause', 'b')[0])
        self.assertEqual(task_states.UNPAUSING, self.reload(b).task_state)
        code, out, _err = self.nova('unpause', 'a')
        self.assertEqual(1, code)
        self.assertIn('(HTTP 409)', out)

    def test_reboot_suspend_resume_delete(self):
        a = self.make_instance(name='a')
        self.assertEqual(0, self.nova('reboot', '--hard', 'a')[0])
        self.assertEqual(task_states.REBOOTING_HARD,
                         self.reload(a).task_state)
        b = self.make_instance(name='b')
        self.assertEqual(0, self.nova('suspend', 'b')[0])
        self.assertEqual(task_states.SUSPENDING, self.reload(b).task_state)
        c = self.make_instance(name='c', vm_state=vm_states.SUSPENDED)
        self.assertEqual(0, self.nova('resume', 'c')[0])
        self.assertEqual(task_states.RESUMING, self.reload(c).task_state)
        d = self.make_instance(name='d')
        code, out, _err = self.nova('delete', 'd')
        self.assertEqual('Request to delete server d has been accepted.\n',
                         out)
        self.assertEqual(task_states.DELETING, self.reload(d).task_state)

    def test_reset_state(self):
        instance = self.make_instance(name='vm',
                                      task_state=task_states.REBUILDING)
        code, out, _err = self.nova('reset-state', '--active', 'vm')
        self.assertEqual((0, 'Reset state for server vm succeeded; new '
                             'state is active\n'), (code, out))
        self.assertIsNone(self.reload(instance).task_state)
        code, out, err = self.nova('reset-state', 'vm',
                                   token=fakes.USER_TOKEN)
        self.assertEqual(1, code)
        self.assertIn('(HTTP 403)', out)
        self.assertEqual(vm_states.ACTIVE, self.reload(instance).vm_state)

    def test_boot(self):
        code, out, err = self.nova('boot', '--image', 'cirros', '--flavor',
                                   'm1.tiny', 'new', token=fakes.USER_TOKEN)
        self.assertEqual(0, code, err)
        (instance,) = objects.Instance.get_all(self.ctx)
        self.assertEqual(('new', fakes.IMAGE.id, '1'),
                         (instance.display_name, instance.image_ref,
                          instance.flavor.flavorid))
        self.assertIn('| status ', out)
        self.assertIn('BUILD', out)

    def test_boot_unknown_image_or_bad_nic(self):
        for argv in (['--image', 'nope', '--flavor', '1'],
                     ['--image', 'cirros', '--flavor', 'huge'],
                     ['--image', 'cirros', '--flavor', '1', '--nic',
                      'port-id=%s' % PORT]):
            with self.subTest(argv=argv):
                code, _out, err = self.nova('boot', *(argv + ['x']))
                self.assertEqual(1, code)
                self.assertTrue(err.startswith('ERROR ('), err)
        self.assertEqual([], objects.Instance.get_all(self.ctx))

    def test_unsupported_version_is_reported(self):
        code, _out, err = self.nova('list', version='2.999')
        self.assertEqual(1, code)
        self.assertIn('ERROR (NotAcceptable): Version 2.999 is not '
                      'supported', err)


class EvacuateCommandsTest(ShellTestCase):

    def setUp(self):
        super().setUp()
        self.set_down(self.host1)

    def conductor_kwargs(self):
        return [kwargs for name, _a, kwargs in self.conductor_rpc.casts
                if name == 'evacuate_instance']

    def test_evacuate_below_214_states_shared_storage(self):
        instance = self.make_instance(name='vm')
        code, out, err = self.nova('evacuate', '--on-shared-storage', 'vm',
                                   'host2', version='2.13')
        self.assertEqual((0, 'Request to evacuate server vm has been '
                             'accepted.\n'), (code, out), err)
        (kwargs,) = self.conductor_kwargs()
        self.assertEqual(('host2', True), (kwargs['host'],
                                           kwargs['on_shared_storage']))
        self.assertEqual(task_states.REBUILDING,
                         self.reload(instance).task_state)

    def test_on_shared_storage_refused_from_214(self):
        instance = self.make_instance(name='vm')
        code, _out, err = self.nova('evacuate', '--on-shared-storage', 'vm')
        self.assertEqual(1, code)
        self.assertIn('only supported below microversion 2.14', err)
        self.assertIsNone(self.reload(instance).task_state)
        self.assertEqual([], self.conductor_kwargs())

    def test_evacuate_latest_with_force(self):
        self.make_instance(name='vm')
        code, _out, err = self.nova('evacuate', '--force', 'vm', 'host2')
        self.assertEqual(0, code, err)
        (kwargs,) = self.conductor_kwargs()
        self.assertEqual((None, 'host2'), (kwargs['on_shared_storage'],
                                           kwargs['host']))


class AdminCommandsTest(ShellTestCase):

    def test_service_list(self):
        code, out, _err = self.nova('service-list')
        self.assertEqual(0, code)
        lines = out.splitlines()
        self.assertEqual(['Id', 'Binary', 'Host', 'Zone', 'Status', 'State',
                          'Updated_at', 'Disabled Reason', 'Forced down'],
                         [c.strip() for c in lines[1].split('|')[1:-1]])
        self.assertIn(self.host1.uuid, out)
        code, out, _err = self.nova('service-list', '--host', 'host2',
                                    version='2.10')
        self.assertNotIn('Forced down', out)
        self.assertNotIn('host1', out)
        self.assertNotIn('Disk Leases', out)

    def test_service_list_shows_the_disk_lease_warning(self):
        for service, leases in ((self.host1, 'lockd'), (self.host2, 'none')):
            row = objects.Service.get_by_id(self.ctx, service.id)
            row.storage_identity = 'shared'
            row.disk_leases = leases
            row.save()
        code, out, _err = self.nova('service-list', '--host', 'host2')
        self.assertEqual(0, code)
        lines = out.splitlines()
        self.assertEqual('Disk Leases', lines[1].split('|')[-2].strip())
        self.assertIn('none: shares storage with host1 without disk leases; '
                      'fence it before evacuating', lines[3])
        # A service that is not a compute one has no leases to show.
        self.make_service('ctl', binary='nova-conductor')
        code, out, _err = self.nova('service-list')
        (conductor,) = [line for line in out.splitlines()
                        if 'nova-conductor' in line]
        self.assertEqual('-', conductor.split('|')[-2].strip())

    def test_service_force_down_both_forms(self):
        for version in ('2.11', '2.53'):
            with self.subTest(version=version):
                code, out, err = self.nova('service-force-down', 'host1',
                                           'nova-compute', version=version)
                self.assertEqual(0, code, err)
                self.assertIn('| host1 | nova-compute | True        |', out)
                self.assertTrue(objects.Service.get_by_id(
                    self.ctx, self.host1.id).forced_down)
                self.assertEqual(0, self.nova('service-force-down',
                                              '--unset', 'host1',
                                              'nova-compute',
                                              version=version)[0])
                self.assertFalse(objects.Service.get_by_id(
                    self.ctx, self.host1.id).forced_down)

    def test_service_force_down_refusals(self):
        code, _out, err = self.nova('service-force-down', 'host1',
                                    'nova-compute', version='2.10')
        self.assertEqual(1, code)
        self.assertIn('needs microversion 2.11', err)
        code, _out, err = self.nova('service-force-down', 'nowhere',
                                    'nova-compute')
        self.assertEqual(1, code)
        self.assertIn('No service nova-compute on host nowhere', err)

    def test_migration_list(self):
        self.set_down(self.host1)
        instance = self.make_instance(name='vm')
        self.assertEqual(0, self.nova('evacuate', 'vm', 'host2')[0])
        code, out, _err = self.nova('migration-list')
        self.assertEqual(0, code)
        header = [c.strip() for c in out.splitlines()[1].split('|')[1:-1]]
        self.assertEqual('Type', header[-1])
        row = [c.strip() for c in out.splitlines()[3].split('|')[1:-1]]
        self.assertEqual(('host1', 'host2', 'accepted', instance.uuid,
                          'evacuation'),
                         (row[3], row[4], row[6], row[7], row[-1]))

    def test_instance_actions(self):
        instance = self.make_instance(name='vm')
        self.nova('stop', 'vm')
        code, out, _err = self.nova('instance-action-list', 'vm')
        self.assertEqual(0, code)
        (action,) = objects.InstanceAction.get_by_instance_uuid(
            self.ctx, instance.uuid)
        self.assertIn('| stop   | %s |' % action.request_id, out)
        code, out, err = self.nova('instance-action', instance.uuid,
                                   action.request_id)
        self.assertEqual(0, code, err)
        self.assertIn('| action        | stop', out)
        code, _out, err = self.nova('instance-action', 'vm', '../x')
        self.assertEqual(1, code)
        self.assertRegex(err, r'^ERROR \((NotFound|BadRequest)\)')
