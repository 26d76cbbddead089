"""Running external programs: the output, or the reason they failed."""

from oslo_concurrency import processutils

from nova import command
from nova.tests import base


class TestExecute(base.TestCase):

    def test_output_of_a_command_that_succeeds(self):
        out, err = command.execute('sh', '-c', 'echo out; echo err >&2')
        self.assertEqual(('out\n', 'err\n'), (out, err))

    def test_a_failing_command_says_its_exit_code_and_output(self):
        with self.assertRaises(processutils.ProcessExecutionError) as ctx:
            command.execute('sh', '-c', 'echo partial; echo why >&2; exit 3')
        self.assertEqual(3, ctx.exception.exit_code)
        self.assertEqual('partial\n', ctx.exception.stdout)
        self.assertEqual('why\n', ctx.exception.stderr)
        self.assertIn('exit 3', ctx.exception.cmd)

    def test_a_program_that_is_not_there_is_oserror(self):
        self.assertRaises(OSError, command.execute,
                          '/nonexistent/program')

    def test_the_child_gets_sigpipe_back_and_no_input(self):
        # Python ignores SIGPIPE; a child must not inherit that (a
        # pipeline's writer would never stop), and it reads no stdin.
        out, _err = command.execute(
            'sh', '-c', 'grep SigIgn /proc/self/status; cat')
        ignored = int(out.split()[1], 16)
        self.assertEqual(0, ignored & (1 << (13 - 1)))   # SIGPIPE is 13
        self.assertEqual(1, len(out.splitlines()))
