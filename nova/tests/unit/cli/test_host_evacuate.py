"""``nova host-evacuate --wait`` and ``nova.cli.host_evacuate`` against the
real API application on a real socket.

The conductor is scripted (no compute host runs in a unit test): it takes
each evacuation the API hands it, claims a target (the named one, or its
own choice), and ends it there at once through the evacuation state
machine, ``done`` or, for a target in ``broken``, ``failed`` with a fault,
as a target would; or leaves it in flight for an instance in ``hold``.
Everything the workflow reads (migrations, servers, faults, actions,
services) is the real API's answer. ``nova/tests/functional/api/
test_host_evacuate_wait.py`` runs the same against real compute hosts.
"""

import io

from nova.api import wsgi as api_wsgi
from nova.cli import client as client_mod
from nova.cli import host_evacuate
from nova.cli import host_evacuate_view
from nova.cli import shell
from nova.compute import evacuation_states
from nova.compute import states
from nova.model import task_states
from nova.model import vm_states
from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests import base
from nova.tests.unit.api.openstack import fakes


def rows_of(out):
    """{uuid: [outcome, host, status, attempts, message]} of a
    host-evacuate table, each cell's lines joined with spaces."""
    found = {}
    current = None
    for line in out.splitlines():
        cells = [c.strip() for c in line.split('|')[1:-1]]
        if len(cells) != 6 or cells[0] == 'Server UUID':
            continue
        if cells[0]:
            current = found[cells[0]] = cells[1:]
        elif current is not None:
            for index, cell in enumerate(cells[1:]):
                if cell:
                    current[index] = ('%s %s' % (current[index], cell)
                                      ).strip()
    return found


class ScriptedConductor:
    """Ends each evacuation at once, as its target would."""

    def __init__(self, ctx, choose):
        self.ctx = ctx
        self.choose = choose        # (instance) -> host or None
        self.broken = {}            # host -> the error its spawn raises
        self.hold = set()           # instance uuids left in flight
        self.handed = []            # (instance uuid, target named)

    def evacuate_instance(self, ctxt, instance, migration, host=None,
                          on_shared_storage=None):
        # A cast: whatever happens here, the API's caller never hears of.
        self.handed.append((instance.uuid, host))
        instance = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        target = host or self.choose(instance)
        if target is None:
            error = exception.NoValidHost(reason='no host has room')
            try:
                with objects.InstanceActionEvent.record(
                        ctxt, instance.uuid, 'conductor_rebuild_server',
                        'conductor'):
                    raise error
            except exception.NoValidHost:
                evacuation_states.end_evacuation(
                    ctxt, instance, migration, error, 'conductor',
                    evacuation_states.CONDUCTOR,
                    task_states_expected=(task_states.REBUILDING,))
            return
        migration.dest_compute = migration.dest_node = target
        migration.save()
        if instance.uuid in self.hold:
            return
        evacuation_states.advance(migration, migration_obj.PRE_MIGRATING,
                                  evacuation_states.TARGET)
        if target in self.broken:
            evacuation_states.end_evacuation(
                ctxt, instance, migration, self.broken[target], target,
                evacuation_states.TARGET, vm_state=vm_states.ERROR)
            return
        before = instance.vm_state
        instance.host = instance.node = target
        instance.vm_state = states.get('evacuate').vm_state_after(True,
                                                                  before)
        instance.task_state = None
        instance.save(expected_task_state=[task_states.REBUILDING],
                      and_migration=evacuation_states.step_for_final_save(
                          migration))


class HostEvacuateTestCase(fakes.APITestCase):

    TARGETS = ('host2', 'host3')

    def setUp(self):
        super().setUp()
        self.services = {'host1': self.host1, 'host2': self.host2}
        for name in self.TARGETS:
            if name not in self.services:
                self.services[name] = self.make_service(name)
        self.set_down(self.host1)
        self.conductor = ScriptedConductor(self.ctx, self.spread)
        self.compute_api.conductor_api = self.conductor
        self.server = api_wsgi.serve(self.app, '127.0.0.1', 0)
        self.addCleanup(self.server.stop)

    def spread(self, instance):
        """The conductor's choice: the target holding fewest instances."""
        return min(self.TARGETS, key=lambda h: (
            len(objects.Instance.get_by_host(self.ctx, h)), h))

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
        return code, out.getvalue(), err.getvalue()

    def wait(self, *argv, stdout=None):
        return self.nova('host-evacuate', '--wait', '--poll-interval',
                         '0.01', *argv, stdout=stdout)

    def boot_on_source(self, count, **fields):
        return [self.make_instance(name='vm%d' % n, **fields)
                for n in range(count)]

    @staticmethod
    def rows(out):
        """{uuid: [outcome, host, status, attempts, message]} of the
        table, each cell's lines joined with spaces."""
        return rows_of(out)

    def migrations(self, instance):
        return sorted(objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid), key=lambda m: m.id)


class TestWait(HostEvacuateTestCase):

    def test_all_succeed(self):
        booted = self.boot_on_source(3)
        code, out, err = self.wait('host1')
        self.assertEqual(0, code, out + err)
        self.assertNotIn('\r', out)
        self.assertEqual(host_evacuate_view.TABLE_COLUMNS,
                         [c.strip() for c in out.splitlines()[1].split('|')[
                             1:-1]])
        rows = self.rows(out)
        self.assertEqual({i.uuid for i in booted}, set(rows))
        for instance in booted:
            row = self.reload(instance)
            self.assertIn(row.host, self.TARGETS)
            self.assertEqual(['done', row.host, 'ACTIVE',
                              '%s done' % row.host, ''], rows[instance.uuid])
            (migration,) = self.migrations(instance)
            self.assertEqual(migration_obj.DONE, migration.status)
        # The conductor chose every target.
        self.assertEqual([None] * 3, [t for _u, t in self.conductor.handed])
        self.assertIn('host-evacuate host1: 3 instances: 3 done, 0 failed, '
                      '0 refused; 0 retried;', out)

    def test_one_target_fails_retried_on_the_other(self):
        self.conductor.broken['host2'] = (
            exception.VirtualInterfacePlugException(
                reason='bridge br-test missing'))
        booted = self.boot_on_source(3)
        code, out, err = self.wait('host1')
        self.assertEqual(0, code, out + err)
        rows = self.rows(out)
        retried = [i for i in booted
                   if rows[i.uuid][3] == 'host2 failed, host3 done']
        self.assertTrue(retried, out)
        for instance in booted:
            row = self.reload(instance)
            self.assertEqual(('host3', vm_states.ACTIVE, None),
                             (row.host, row.vm_state, row.task_state))
            self.assertEqual('done', rows[instance.uuid][0])
        for instance in retried:
            self.assertIn('host2: ', rows[instance.uuid][4])
            self.assertIn('br-test missing', out)
            first, second = self.migrations(instance)
            self.assertEqual((migration_obj.FAILED, 'host2'),
                             (first.status, first.dest_compute))
            self.assertEqual((migration_obj.DONE, 'host3'),
                             (second.status, second.dest_compute))
        # The retry named its target.
        self.assertIn('host3', [t for _u, t in self.conductor.handed])

    def test_python_api_report(self):
        self.conductor.broken['host2'] = exception.NovaException(
            'spawn failed')
        booted = self.boot_on_source(2)
        report = host_evacuate.evacuate_host(self.client(), 'host1',
                                             poll_interval=0.01)
        self.assertTrue(report.succeeded)
        self.assertEqual({i.uuid for i in booted},
                         {i.uuid for i in report.instances})
        for item in report.instances:
            self.assertEqual((host_evacuate.DONE, 'host3', 'ACTIVE'),
                             (item.outcome, item.host, item.status))
            self.assertEqual([m.id for m in self.migrations(item)],
                             item.migrations)
            self.assertEqual(item.attempts[-1].target, 'host3')
            if item.retried:
                first = item.attempts[0]
                self.assertEqual(('host2', host_evacuate.FAILED,
                                  host_evacuate.BY_CONDUCTOR),
                                 (first.target, first.outcome,
                                  first.chosen_by))
                self.assertEqual(host_evacuate.BY_CLIENT,
                                 item.attempts[1].chosen_by)
                self.assertIn('spawn failed', item.message)
                self.assertIsNotNone(first.request_id)

    def test_every_target_fails(self):
        for host in self.TARGETS:
            self.conductor.broken[host] = exception.NovaException(
                'no bridge on %s' % host)
        booted = self.boot_on_source(3)
        code, out, err = self.wait('host1', '--max-concurrent', '1')
        self.assertEqual(1, code, out + err)
        rows = self.rows(out)
        first, second, third = sorted(booted, key=lambda i: i.uuid)
        # Both targets fail for the first instance, and again for the
        # second: both are skipped, the third is left where it is.
        for instance in (first, second):
            self.assertEqual('failed', rows[instance.uuid][0])
            self.assertEqual(2, len(self.migrations(instance)))
        self.assertEqual(['failed', 'host1', 'ACTIVE', '-',
                          'not evacuated: no target left: host2 skipped '
                          '(failed 2 times in a row); host3 skipped '
                          '(failed 2 times in a row)'], rows[third.uuid])
        self.assertEqual([], self.migrations(third))
        self.assertIn('no bridge on host2', out)
        self.assertIn('no bridge on host3', out)
        for instance in booted:
            self.assertEqual('host1', self.reload(instance).host)
        self.assertIn('skipped targets: host2 (failed 2 times in a row), '
                      'host3 (failed 2 times in a row)', out)

    def test_refused_and_no_valid_host_are_not_retried(self):
        busy = self.make_instance(name='busy',
                                  task_state=task_states.DELETING)
        unplaced = self.make_instance(name='unplaced')
        self.conductor.choose = lambda instance: None
        code, out, err = self.wait('host1')
        self.assertEqual(1, code, out + err)
        rows = self.rows(out)
        self.assertEqual(['refused', 'host1', 'ACTIVE', 'request refused'],
                         rows[busy.uuid][:4])
        self.assertIn('(HTTP 409)', rows[busy.uuid][4])
        self.assertEqual(['failed', 'host1', 'ACTIVE', '(no target) failed',
                          'NoValidHost: No valid host was found. no host '
                          'has room not retried: the conductor found no '
                          'target for it'], rows[unplaced.uuid])
        self.assertEqual(1, len(self.migrations(unplaced)))
        self.assertEqual(task_states.DELETING, self.reload(busy).task_state)

    def test_target_failing_twice_in_a_row_is_skipped(self):
        self.TARGETS = ('host2', 'host3', 'host4')
        self.services['host4'] = self.make_service('host4')
        self.conductor.broken['host2'] = exception.NovaException('broken')
        # The conductor prefers host2 (a failed target has room again).
        self.conductor.choose = lambda instance: 'host2'
        booted = sorted(self.boot_on_source(4), key=lambda i: i.uuid)
        code, out, err = self.wait('host1', '--max-concurrent', '1')
        self.assertEqual(0, code, out + err)
        rows = self.rows(out)
        attempts = [rows[i.uuid][3] for i in booted]
        # One at a time: the first two fail on host2 and are retried on
        # the least loaded other target; from then on host2 is skipped and
        # the targets are chosen here.
        self.assertEqual(['host2 failed, host3 done',
                          'host2 failed, host4 done',
                          'host3 done', 'host4 done'], attempts)
        self.assertEqual([(booted[0].uuid, None), (booted[0].uuid, 'host3'),
                          (booted[1].uuid, None), (booted[1].uuid, 'host4'),
                          (booted[2].uuid, 'host3'),
                          (booted[3].uuid, 'host4')], self.conductor.handed)
        self.assertIn('skipped targets: host2 (failed 2 times in a row)',
                      out)

    def test_named_target_first_then_another(self):
        self.conductor.broken['host2'] = exception.NovaException('broken')
        (instance,) = self.boot_on_source(1)
        code, out, err = self.wait('--target-host', 'host2', 'host1')
        self.assertEqual(0, code, out + err)
        self.assertEqual('host2 failed, host3 done',
                         self.rows(out)[instance.uuid][3])
        self.assertEqual([(instance.uuid, 'host2'), (instance.uuid, 'host3')],
                         self.conductor.handed)

    def test_disabled_and_down_hosts_are_never_retry_targets(self):
        self.TARGETS = ('host2', 'host3', 'host4')
        self.services['host4'] = self.make_service('host4')
        self.services['host3'].disabled = True
        self.services['host3'].save()
        self.set_down(self.services['host4'])
        self.conductor.broken['host2'] = exception.NovaException('broken')
        self.conductor.choose = lambda instance: 'host2'
        (instance,) = self.boot_on_source(1)
        code, out, _err = self.wait('host1')
        self.assertEqual(1, code)
        self.assertEqual(['failed', 'host1', 'ERROR', 'host2 failed',
                          'host2: broken not retried: no target left: host2 '
                          'failed for it; host3 disabled; host4 down'],
                         self.rows(out)[instance.uuid])

    def test_timeout_reports_in_progress_and_not_started(self):
        booted = sorted(self.boot_on_source(3), key=lambda i: i.uuid)
        self.conductor.hold.add(booted[0].uuid)
        code, out, err = self.wait('host1', '--max-concurrent', '1',
                                   '--timeout', '0.2')
        self.assertEqual(1, code, out + err)
        rows = self.rows(out)
        self.assertEqual('in-progress', rows[booted[0].uuid][0])
        self.assertIn('in progress', rows[booted[0].uuid][3])
        self.assertIn('still accepted on host2 when the --timeout of 0.2 '
                      's was reached', out)
        for instance in booted[1:]:
            self.assertEqual(['not-started', 'host1', 'ACTIVE', '-'],
                             rows[instance.uuid][:4])
            self.assertEqual([], self.migrations(instance))
        self.assertIn('1 in-progress, 2 not-started', out)
        self.assertIn('timed out', out)

    def test_api_not_answering_now_and_then(self):
        # The conductor prefers host2, which fails: the retries and the
        # skip must come out as without the lost answers.
        self.TARGETS = ('host2', 'host3', 'host4')
        self.services['host4'] = self.make_service('host4')
        self.conductor.broken['host2'] = exception.NovaException('broken')
        self.conductor.choose = lambda instance: 'host2'
        booted = sorted(self.boot_on_source(4), key=lambda i: i.uuid)
        api = FlakyClient(self.client())
        report = host_evacuate.evacuate_host(api, 'host1', max_concurrent=1,
                                             poll_interval=0.01)
        self.assertGreater(api.lost, 5)
        self.assertEqual(['host2 failed, host3 done',
                          'host2 failed, host4 done', 'host3 done',
                          'host4 done'],
                         [i.attempts_text() for i in report.instances])
        self.assertTrue(report.succeeded)
        self.assertEqual({'host2': 'failed 2 times in a row'},
                         report.skipped_targets)
        for instance in booted:
            self.assertEqual(migration_obj.DONE,
                             self.migrations(instance)[-1].status)

    def test_empty_host(self):
        code, out, err = self.wait('host1')
        self.assertEqual(0, code, err)
        self.assertIn('host-evacuate host1: 0 instances', out)


class FlakyClient:
    """The real client, except that once the run has begun every third
    request gets no answer (``ConnectionRefused``), and the first
    evacuate request is taken by the API but its answer lost."""

    def __init__(self, client):
        self.client = client
        self.version = client.version
        self.posted = 0
        self.calls = 0
        self.lost = 0

    def _lose(self):
        self.lost += 1
        raise client_mod.ConnectionRefused('no answer (test)')

    def request(self, method, path, body=None, query=None, version=None):
        answer = self.client.request(method, path, body=body, query=query,
                                     version=version)
        if method == 'POST':
            self.posted += 1
            if self.posted == 1:
                self._lose()
        return answer

    def get(self, path, query=None, version=None):
        if self.posted:
            self.calls += 1
            if self.calls % 3 == 0:
                self._lose()
        return self.client.get(path, query=query, version=version)


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
        self.assertTrue(before.startswith('\rhost1: 0/2 ended, ETA ?'),
                        before)
        updates = before.split('\r')[1:]
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
        self.assertEqual([], self.conductor.handed)
        for instance in booted:
            self.assertEqual((None, 'host1'), (
                self.reload(instance).task_state,
                self.reload(instance).host))
            self.assertEqual([], self.migrations(instance))

    def test_bad_numbers_are_usage_errors(self):
        booted = self.boot_on_source(1)
        for argv in (['--max-concurrent', '0'], ['--max-concurrent', '-2'],
                     ['--max-concurrent', 'x'], ['--poll-interval', '0'],
                     ['--timeout', '-1']):
            with self.subTest(argv=argv):
                with self.assertRaises(SystemExit) as caught:
                    self.nova('host-evacuate', '--wait', *argv, 'host1')
                self.assertEqual(2, caught.exception.code)
        self.assertNothingChanged(booted)

    def test_unknown_hosts_and_options_without_wait(self):
        booted = self.boot_on_source(1)
        for argv, says in (
                (['--wait', 'nowhere'], 'No compute host named nowhere'),
                (['--wait', '--target-host', 'nowhere', 'host1'],
                 'No compute host named nowhere'),
                (['--wait', '--target-host', 'host1', 'host1'],
                 'is the host being evacuated'),
                (['--wait', '--force', 'host1'],
                 'force needs a named target host'),
                (['--max-concurrent', '2', 'host1'],
                 '--max-concurrent only with --wait')):
            with self.subTest(argv=argv):
                code, out, err = self.nova('host-evacuate', *argv)
                self.assertEqual(2, code, out + err)
                self.assertIn('ERROR (UsageError): ', err)
                self.assertIn(says, err)
        self.assertNothingChanged(booted)

    def test_source_up_or_target_down_changes_nothing(self):
        booted = self.boot_on_source(1)
        self.set_down(self.host2)
        code, _out, err = self.wait('--target-host', 'host2', 'host1')
        self.assertEqual(1, code)
        self.assertIn('The target host host2 is not usable', err)
        self.host1.heartbeat()
        code, _out, err = self.wait('host1')
        self.assertEqual(1, code)
        self.assertIn('The nova-compute service of host1 is up', err)
        self.assertNothingChanged(booted)

    def test_python_api_refuses_bad_arguments(self):
        api = self.client()
        for kwargs in ({'max_concurrent': 0}, {'max_concurrent': -1},
                       {'max_concurrent': 1.5}, {'poll_interval': 0},
                       {'timeout': 0}):
            with self.subTest(kwargs=kwargs):
                self.assertRaises(client_mod.UsageError,
                                  host_evacuate.HostEvacuation, api,
                                  'host1', **kwargs)


class TestTargetHealth(base.TestCase):

    def test_twice_in_a_row(self):
        health = host_evacuate.TargetHealth()
        self.assertFalse(health.record('b', False))
        self.assertFalse(health.record('b', True))
        self.assertFalse(health.record('b', False))
        self.assertEqual({}, health.skipped)
        self.assertTrue(health.record('b', False))
        self.assertFalse(health.record('b', False))
        self.assertEqual({'b': 'failed 2 times in a row'}, health.skipped)
        self.assertFalse(health.record(None, False))
