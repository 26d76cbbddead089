"""``nova host-evacuate`` and ``nova.cli.host_evacuate`` against the real
API application on a real socket, with the real conductor running each
run (its target choice and claims included).

The compute hosts are ``ScriptedCompute`` (no compute host runs in a unit
test): each target ends an evacuation at once through the evacuation
state machine, ``done`` or, for a target in ``broken``, ``failed`` with a
fault; an instance in ``hold`` stays in flight until released.
``nova/tests/functional/api/test_host_evacuate_wait.py`` runs the same
against real compute hosts.
"""

import io

from nova.api import wsgi as api_wsgi
from nova.cli import client as client_mod
from nova.cli import host_evacuate
from nova.cli import host_evacuate_view
from nova.cli import shell
from nova.conductor import manager as conductor_manager
from nova import exception
from nova.model import vm_states
from nova import objects
from nova.objects import host_evacuation as run_obj
from nova.objects import migration as migration_obj
from nova.tests.fixtures import scripted_compute
from nova.tests.unit.api.openstack import fakes
from nova.tests.unit.conductor import test_host_evacuation as engine_tests


def rows_of(out):
    """{uuid: [outcome, host, attempts, message]} of a host-evacuate
    table, each cell's lines joined with spaces."""
    found = {}
    current = None
    for line in out.splitlines():
        cells = [c.strip() for c in line.split('|')[1:-1]]
        if len(cells) != 5 or cells[0] == 'Server UUID':
            continue
        if cells[0]:
            current = found[cells[0]] = cells[1:]
        elif current is not None:
            for index, cell in enumerate(cells[1:]):
                if cell:
                    current[index] = ('%s %s' % (current[index], cell)
                                      ).strip()
    return found


class HostEvacuateTestCase(fakes.APITestCase):

    TARGETS = ('host2', 'host3')

    def setUp(self):
        super().setUp()
        self.flags(host='conductor1')
        self.flags(host_evacuate_poll_interval=0.01, group='conductor')
        self.make_service('host3')
        self.set_down(self.host1)
        self.compute = scripted_compute.ScriptedCompute()
        self.conductor = conductor_manager.ConductorManager(self.compute)
        self.addCleanup(self.conductor.cleanup_host)
        # The API's cast reaches this conductor at once.
        self.compute_api.conductor_api = self.conductor
        self.server = api_wsgi.serve(self.app, '127.0.0.1', 0)
        self.addCleanup(self.server.stop)

    def client(self):
        api = client_mod.Client(self.server.url, fakes.ADMIN_TOKEN)
        api.negotiate('latest')
        return api

    def nova(self, *argv, stdout=None):
        out = io.StringIO() if stdout is None else stdout
        err = io.StringIO()
        code = shell.main(['--os-endpoint', self.server.url, '--os-token',
                           fakes.ADMIN_TOKEN] + list(argv), stdout=out,
                          stderr=err, environ={})
        if stdout is None:
            return code, out.getvalue(), err.getvalue()
        return code, stdout.getvalue(), err.getvalue()

    def wait(self, *argv, stdout=None):
        return self.nova('host-evacuate', '--wait', '--poll-interval',
                         '0.01', *argv, stdout=stdout)

    def boot_on_source(self, count, **fields):
        return sorted((self.make_instance(name='vm%d' % n, **fields)
                       for n in range(count)), key=lambda i: i.uuid)

    def migrations(self, instance):
        return sorted(objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid), key=lambda m: m.id)

    def runs(self):
        return run_obj.HostEvacuation.get_all(self.ctx)

    def wait_for_runs_to_end(self):
        engine_tests.wait_for(lambda: all(r.ended for r in self.runs()),
                              'every run to end')


class TestWait(HostEvacuateTestCase):

    def test_all_succeed(self):
        booted = self.boot_on_source(3)
        code, out, err = self.wait('host1')
        self.assertEqual(0, code, out + err)
        self.assertNotIn('\r', out)
        self.assertEqual(host_evacuate_view.TABLE_COLUMNS,
                         [c.strip() for c in out.splitlines()[1].split('|')[
                             1:-1]])
        rows = rows_of(out)
        self.assertEqual({i.uuid for i in booted}, set(rows))
        for instance in booted:
            row = self.reload(instance)
            self.assertIn(row.host, self.TARGETS)
            self.assertEqual(['done', row.host, '%s done' % row.host, ''],
                             rows[instance.uuid])
            (migration,) = self.migrations(instance)
            self.assertEqual(migration_obj.DONE, migration.status)
        (run,) = self.runs()
        self.assertIn('host-evacuate host1: 3 instances: 3 done, 0 failed, '
                      '0 refused; 0 retried;', out)
        self.assertIn('run %s' % run.uuid, out)

    def test_one_target_fails_retried_on_the_other(self):
        self.compute.broken['host2'] = (
            exception.VirtualInterfacePlugException(
                reason='bridge br-test missing'))
        booted = self.boot_on_source(3)
        code, out, err = self.wait('host1')
        self.assertEqual(0, code, out + err)
        rows = rows_of(out)
        retried = [i for i in booted
                   if rows[i.uuid][2] == 'host2 failed, host3 done']
        self.assertTrue(retried, out)
        for instance in booted:
            row = self.reload(instance)
            self.assertEqual(('host3', vm_states.ACTIVE, None),
                             (row.host, row.vm_state, row.task_state))
            self.assertEqual('done', rows[instance.uuid][0])
        for instance in retried:
            self.assertIn('host2: ', rows[instance.uuid][3])
            self.assertIn('br-test missing', rows[instance.uuid][3])
            first, second = self.migrations(instance)
            self.assertEqual((migration_obj.FAILED, 'host2'),
                             (first.status, first.dest_compute))
            self.assertEqual((migration_obj.DONE, 'host3'),
                             (second.status, second.dest_compute))

    def test_every_target_fails_exits_1(self):
        self.flags(host_evacuate_workers=1, group='conductor')
        for host in self.TARGETS:
            self.compute.broken[host] = exception.NovaException(
                'no bridge on %s' % host)
        booted = self.boot_on_source(2)
        code, out, err = self.wait('host1')
        self.assertEqual(1, code, out + err)
        rows = rows_of(out)
        first, second = booted
        self.assertEqual(['failed', 'host1', 'host2 failed, host3 failed'],
                         rows[first.uuid][:3])
        self.assertIn('no bridge on host3', rows[first.uuid][3])
        # The second goes to host2 again (it failed once only), then to
        # host3: both have now failed twice in a row.
        self.assertEqual(['failed', 'host1', 'host2 failed, host3 failed'],
                         rows[second.uuid][:3])
        self.assertIn('skipped targets: host2 (failed 2 times in a row), '
                      'host3 (failed 2 times in a row)', out)

    def test_python_api_report(self):
        self.compute.broken['host2'] = exception.NovaException(
            'spawn failed')
        booted = self.boot_on_source(2)
        report = host_evacuate.evacuate_host(self.client(), 'host1',
                                             poll_interval=0.01)
        self.assertTrue(report.succeeded, report)
        self.assertEqual('finished', report.status)
        self.assertEqual({i.uuid for i in booted},
                         {i.uuid for i in report.instances})
        for item in report.instances:
            self.assertEqual((host_evacuate.DONE, 'host3'),
                             (item.outcome, item.host))
            self.assertEqual([m.uuid for m in self.migrations(item)],
                             [a.migration_uuid for a in item.attempts])
            if item.retried:
                self.assertEqual(('host2', host_evacuate.FAILED),
                                 (item.attempts[0].target,
                                  item.attempts[0].outcome))
                self.assertIn('spawn failed', item.message)

    def test_timeout_stops_waiting_not_the_run(self):
        self.flags(host_evacuate_workers=1, group='conductor')
        held, later = self.boot_on_source(2)
        self.compute.hold.add(held.uuid)
        client = self.client()
        run = host_evacuate.start(client, 'host1')
        engine_tests.wait_for(lambda: self.compute.rebuilds, 'the request')
        engine_tests.wait_for(
            lambda: host_evacuate.show(client, run['id']).count(
                host_evacuate.IN_PROGRESS) == 1, 'in progress')
        # A clock past the timeout at once: no test waits for a time.
        ticks = iter(range(0, 1000, 100))
        report = host_evacuate.follow(client, run['id'], lambda r: r.ended,
                                      timeout=50, clock=lambda: next(ticks),
                                      sleep=lambda seconds: None)
        self.assertTrue(report.timed_out)
        self.assertFalse(report.succeeded)
        by_uuid = {i.uuid: i.outcome for i in report.instances}
        self.assertEqual({held.uuid: 'in-progress',
                          later.uuid: 'not-started'}, by_uuid)
        self.assertIn('timed out (the run goes on: host-evacuation-show %s)'
                      % run['id'], host_evacuate_view.render_report(report))
        # It does go on.
        self.compute.release(held.uuid)
        self.wait_for_runs_to_end()
        code, out, _err = self.nova('host-evacuation-show', run['id'])
        self.assertEqual(0, code, out)
        self.assertEqual({'done'}, {r[0] for r in rows_of(out).values()})

    def test_empty_host(self):
        code, out, err = self.wait('host1')
        self.assertEqual(0, code, out + err)
        self.assertIn('host-evacuate host1: 0 instances', out)


class TestWithoutWait(HostEvacuateTestCase):

    def test_one_row_per_server_as_novaclient(self):
        ok = self.make_instance(name='a')
        suspended = self.make_instance(name='b',
                                       vm_state=vm_states.SUSPENDED)
        code, out, _err = self.nova('host-evacuate', 'host1')
        self.assertEqual(1, code, out)
        lines = out.splitlines()
        self.assertTrue(lines[1].startswith(
            '| Server UUID                          | Evacuate Accepted | '
            'Error Message '), lines[1])
        rows = {line.split('|')[1].strip(): line.split('|')[2].strip()
                for line in lines[3:-1]}
        self.assertEqual({ok.uuid: 'True', suspended.uuid: 'False'}, rows)
        self.assertIn('Error while evacuating instance', out)
        self.wait_for_runs_to_end()
        self.assertEqual('host2', self.reload(ok).host)
        self.assertEqual('host1', self.reload(suspended).host)

    def test_all_accepted_exits_0(self):
        self.boot_on_source(2)
        code, out, err = self.nova('host-evacuate', '--target-host',
                                   'host3', 'host1')
        self.assertEqual(0, code, out + err)
        self.wait_for_runs_to_end()
        (run,) = self.runs()
        self.assertEqual('host3', run.target_host)


class FakeTerminal(io.StringIO):
    """What the CLI writes to a terminal (``isatty``); the functional
    tests use a real pseudo-terminal."""

    def isatty(self):
        return True


class TestProgressLine(HostEvacuateTestCase):

    def test_progress_line_on_a_terminal_only(self):
        self.boot_on_source(2)
        code, out, err = self.wait('host1', stdout=FakeTerminal())
        self.assertEqual(0, code, err)
        before, _newline, after = out.partition('\n')
        updates = before.split('\r')[1:]
        self.assertTrue(updates[0].startswith('host1: '), before)
        self.assertRegex(updates[-1], r'^host1: 2/2 ended, ETA \d+:\d\d \| '
                                      r'2 done, 0 failed, 0 in progress, 0 '
                                      r'waiting *$')
        self.assertTrue(after.startswith('+-'), after)
        self.assertNotIn('\r', after)

    def test_progress_text_and_eta(self):
        progress = host_evacuate.Progress(
            host='h', total=10, done=3, failed=1, refused=0, in_progress=4,
            waiting=2, retried=1, elapsed=40.0)
        self.assertEqual(60.0, progress.eta)
        self.assertEqual('h: 4/10 ended, ETA 1:00 | 3 done, 1 failed, 4 in '
                         'progress, 2 waiting, 1 retried',
                         host_evacuate_view.progress_text(progress))
        self.assertIsNone(host_evacuate.Progress(
            'h', 1, 0, 0, 0, 1, 0, 0, 5.0).eta)
        self.assertEqual('?', host_evacuate_view.format_duration(None))
        self.assertEqual('1:01:05', host_evacuate_view.format_duration(3665))


class TestUsage(HostEvacuateTestCase):

    def assertNothingChanged(self, booted):
        self.assertEqual([], self.runs())
        for instance in booted:
            fresh = self.reload(instance)
            self.assertEqual(('host1', None), (fresh.host,
                                               fresh.task_state))
            self.assertEqual([], self.migrations(instance))

    def test_unknown_host_is_a_usage_error(self):
        booted = self.boot_on_source(1)
        code, _out, err = self.wait('nowhere')
        self.assertEqual(2, code)
        self.assertIn('ERROR (UsageError): No compute host named nowhere',
                      err)
        self.assertNothingChanged(booted)

    def test_wait_options_without_wait(self):
        booted = self.boot_on_source(1)
        code, _out, err = self.nova('host-evacuate', '--poll-interval', '1',
                                    'host1')
        self.assertEqual(2, code)
        self.assertIn('--poll-interval only with --wait', err)
        self.assertNothingChanged(booted)

    def test_source_up_or_bad_target_changes_nothing(self):
        booted = self.boot_on_source(1)
        code, _out, err = self.wait('host2')
        self.assertEqual(1, code)
        self.assertIn('still in use', err)
        for target in ('host1', 'nowhere'):
            code, _out, err = self.wait('--target-host', target, 'host1')
            self.assertEqual(1, code, err)
            self.assertIn('BadRequest', err)
        self.assertNothingChanged(booted)

    def test_on_shared_storage_needs_an_old_microversion(self):
        booted = self.boot_on_source(1)
        code, _out, err = self.wait('--on-shared-storage', 'host1')
        self.assertEqual(1, code)
        self.assertIn('only supported below microversion 2.14', err)
        self.assertNothingChanged(booted)
        code, out, err = self.nova('--os-compute-api-version', '2.13',
                                   'host-evacuate', '--wait',
                                   '--poll-interval', '0.01',
                                   '--on-shared-storage', 'host1')
        self.assertEqual(0, code, out + err)
        (run,) = self.runs()
        self.assertTrue(run.on_shared_storage)
        self.assertEqual(run_obj.FINISHED, run.status)
