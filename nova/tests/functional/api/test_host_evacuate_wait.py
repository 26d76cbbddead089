"""``nova host-evacuate HOST --wait`` over real HTTP against real compute
hosts (``evacuate_harness``: the real compute API, conductor and compute
managers on libvirt's test driver, RPC over ``inproc://``).

Host ``a`` dies with the instances; ``b``, ``c`` and ``d`` are the
targets. A target made to fail lacks the ports' bridge, so its spawn fails
for real and it cleans up after itself; the conductor's run must see that,
retry elsewhere, and the command must say what happened.
"""

import fcntl
import io
import os
import pty
import struct
import termios
import threading
import tty

from nova.cli import shell
from nova import context as nova_context
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.functional.api import test_cli_end_to_end as cli_tests
from nova.tests.functional import evacuate_harness as harness
from nova.tests.unit.cli import test_host_evacuate as unit

POLL = '0.05'


class HostEvacuateWaitTestCase(cli_tests.CLITestCase):

    HOSTS = ('a', 'b', 'c', 'd')

    def setUp(self):
        super().setUp()
        self.flags(host_evacuate_poll_interval=0.05, group='conductor')

    def run_nova(self, *argv, stdout=None):
        out = io.StringIO() if stdout is None else stdout
        err = io.StringIO()
        code = shell.main(['--os-endpoint', self.server.url, '--os-token',
                           cli_tests.ADMIN] + list(argv), stdout=out,
                          stderr=err, environ={})
        if stdout is None:
            print('$ nova %s -> %d\n%s%s' % (' '.join(argv), code,
                                             out.getvalue(), err.getvalue()))
            return code, out.getvalue(), err.getvalue()
        return code, None, err.getvalue()

    def host_evacuate(self, *argv, stdout=None):
        return self.run_nova('host-evacuate', '--wait', '--poll-interval',
                             POLL, *argv, stdout=stdout)

    def boot_on_a(self, count, stopped=()):
        """``count`` instances on ``a``, sorted by uuid (the order
        the run requests them in); those at the ``stopped`` indexes
        are stopped."""
        booted = sorted((self.boot('a') for _ in range(count)),
                        key=lambda i: i.uuid)
        for index in stopped:
            self.api.stop(nova_context.get_admin_context(),
                          self.fresh(booted[index]))
            self.wait_for(lambda: (
                self.fresh(booted[index]).vm_state == 'stopped'
                and self.fresh(booted[index]).task_state is None), 'stop')
        return booted

    def break_targets(self, *names):
        for name in names:
            self.hosts[name].sim.remove_bridge(harness.BRIDGE)

    def evacuations(self, instance):
        return sorted(objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid), key=lambda m: m.id)

    def assertLanded(self, instance, row):
        """Done, on the host the table says, running (or shut off, if it
        was stopped and its evacuation never failed) there, nothing left
        on the hosts it failed on."""
        fresh = self.fresh(instance)
        self.assertEqual(['done', fresh.host], row[:2], row)
        self.assertNotEqual('a', fresh.host)
        self.assertEqual(migration_obj.DONE,
                         self.evacuations(instance)[-1].status)
        self.assertIsNone(fresh.task_state)
        host = self.hosts[fresh.host]
        if fresh.vm_state == 'stopped':
            self.assertFalse(host.running(instance))
            self.assertTrue(host.has_domain(instance))
        else:
            self.assertEqual('active', fresh.vm_state)
            self.assertTrue(host.running(instance))
        for migration in self.evacuations(instance)[:-1]:
            self.assertEqual(migration_obj.FAILED, migration.status)
            self.assertNoTrace(self.hosts[migration.dest_compute], instance)


class TestHostEvacuateWait(HostEvacuateWaitTestCase):

    def test_all_succeed(self):
        booted = self.boot_on_a(4, stopped=(1,))
        self.kill('a')
        code, out, _err = self.host_evacuate('a')
        self.assertEqual(0, code)
        self.assertNotIn('\r', out)
        rows = unit.rows_of(out)
        self.assertEqual({i.uuid for i in booted}, set(rows))
        for instance in booted:
            row = rows[instance.uuid]
            self.assertLanded(instance, row)
            self.assertEqual('%s done' % row[1], row[2])
        self.assertEqual('stopped', self.fresh(booted[1]).vm_state)
        self.assertIn('a: 4 instances: 4 done, 0 failed, 0 refused; 0 '
                      'retried;', out)

    def test_one_target_fails_and_its_instances_are_retried(self):
        booted = self.boot_on_a(6, stopped=(5,))
        self.kill('a')
        self.break_targets('b')
        code, out, _err = self.host_evacuate('a')
        self.assertEqual(0, code)
        rows = unit.rows_of(out)
        retried = [i for i in booted
                   if rows[i.uuid][2].startswith('b failed, ')]
        self.assertTrue(retried, out)
        for instance in booted:
            row = rows[instance.uuid]
            self.assertLanded(instance, row)
            self.assertIn(row[1], ('c', 'd'))
        for instance in retried:
            row = rows[instance.uuid]
            self.assertEqual('b failed, %s done' % row[1], row[2])
            self.assertIn('b: ', row[3])
            self.assertIn(harness.BRIDGE, row[3])
        # Stopped before, stopped after, retried or not.
        self.assertEqual('stopped', self.fresh(booted[5]).vm_state)
        self.assertIn('%d retried' % len(retried), out)

    def test_target_failing_twice_in_a_row_is_skipped(self):
        booted = self.boot_on_a(4, stopped=(0,))
        self.kill('a')
        self.break_targets('b')
        self.flags(host_evacuate_workers=1, group='conductor')
        code, out, _err = self.host_evacuate('a')
        self.assertEqual(0, code)
        rows = unit.rows_of(out)
        # One at a time. The conductor sends the first to b (the hosts
        # have the same room; then the name decides); it fails, and the
        # retry, leaving b out, goes to c. The conductor sends the second
        # to b again (its failed claim gave the room back, c holds one
        # more), the retry goes to d; b has failed twice in a row and is
        # left out of every later choice.
        self.assertEqual(['b failed, c done', 'b failed, d done', 'c done',
                          'd done'], [rows[i.uuid][2] for i in booted])
        for instance in booted:
            self.assertLanded(instance, rows[instance.uuid])
        self.assertIn('skipped targets: b (failed 2 times in a row)', out)
        # The first was stopped: its failed attempt left it in ERROR, and
        # the retry brings it back stopped, as it was.
        self.assertEqual('stopped', self.fresh(booted[0]).vm_state)

    def test_every_target_fails(self):
        booted = self.boot_on_a(3)
        self.kill('a')
        self.break_targets('b', 'c', 'd')
        self.flags(host_evacuate_workers=1, group='conductor')
        code, out, _err = self.host_evacuate('a')
        self.assertEqual(1, code)
        rows = unit.rows_of(out)
        first, second, third = booted
        self.assertEqual('b failed, c failed', rows[first.uuid][2])
        self.assertEqual('b failed, c failed', rows[second.uuid][2])
        self.assertEqual('d failed', rows[third.uuid][2])
        for instance in booted:
            row = rows[instance.uuid]
            self.assertEqual(['failed', 'a'], row[:2], row)
            self.assertIn(harness.BRIDGE, row[3])
            fresh = self.fresh(instance)
            self.assertEqual(('a', 'error', None), (
                fresh.host, fresh.vm_state, fresh.task_state))
            for migration in self.evacuations(instance):
                self.assertEqual(migration_obj.FAILED, migration.status)
                self.assertNoTrace(self.hosts[migration.dest_compute],
                                   instance)
        self.assertIn('not retried: no target left: d failed for it; b '
                      'skipped (failed 2 times in a row); c skipped (failed '
                      '2 times in a row)', rows[third.uuid][3])
        self.assertIn('a: 3 instances: 0 done, 3 failed, 0 refused; 2 '
                      'retried; skipped targets: b (failed 2 times in a '
                      'row), c (failed 2 times in a row);', out)

    def test_bad_arguments_change_nothing(self):
        booted = self.boot_on_a(1)
        self.kill('a')
        for argv in (['--poll-interval', '-1', 'a'],
                     ['--timeout', '0', 'a']):
            with self.subTest(argv=argv):
                with self.assertRaises(SystemExit) as caught:
                    self.host_evacuate(*argv)
                self.assertEqual(2, caught.exception.code)
        code, _out, err = self.host_evacuate('nowhere')
        self.assertEqual(2, code)
        self.assertIn('ERROR (UsageError): No compute host named nowhere',
                      err)
        fresh = self.fresh(booted[0])
        self.assertEqual(('a', 'active', None),
                         (fresh.host, fresh.vm_state, fresh.task_state))
        self.assertEqual([], self.evacuations(booted[0]))


class TestProgressOnATerminal(HostEvacuateWaitTestCase):

    def test_progress_line_on_a_pseudo_terminal(self):
        booted = self.boot_on_a(3)
        self.kill('a')
        self.break_targets('b')
        master, slave = pty.openpty()
        tty.setraw(slave)      # no \n -> \r\n: the bytes as written
        fcntl.ioctl(slave, termios.TIOCSWINSZ,
                    struct.pack('HHHH', 50, 200, 0, 0))
        chunks = []

        def read():
            while True:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    return
                if not data:
                    return
                chunks.append(data)

        reader = threading.Thread(target=read)
        reader.start()
        terminal = open(slave, 'w', encoding='utf-8', closefd=True)
        try:
            self.assertTrue(terminal.isatty())
            code, _none, _err = self.host_evacuate('a', stdout=terminal)
            terminal.flush()
        finally:
            terminal.close()
            reader.join(10)
            os.close(master)
        text = b''.join(chunks).decode('utf-8')
        print(text)
        self.assertEqual(0, code)
        progress, _newline, table = text.partition('\n')
        updates = progress.split('\r')
        self.assertEqual('', updates[0])
        self.assertRegex(updates[1], r'^a: \d/3 ended, ETA ', updates)
        self.assertRegex(updates[-1].rstrip(),
                         r'^a: 3/3 ended, ETA \d+:\d\d \| 3 done, 0 failed, '
                         r'0 in progress, 0 waiting, \d retried$')
        self.assertNotIn('\r', table)
        rows = unit.rows_of(table)
        for instance in booted:
            self.assertLanded(instance, rows[instance.uuid])
