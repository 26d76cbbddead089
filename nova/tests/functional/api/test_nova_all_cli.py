"""The embedded default as an operator meets it: ``nova-all`` started with
nothing but a state directory, driven by the ``nova`` CLI over HTTP."""

import io
import os
import re

from nova.cli import shell
from nova.testing import procs
from nova.tests import base

WAIT = 60


def wait_until(predicate, timeout=WAIT):
    # A whole nova-all process starts and builds here: a longer bound
    # than the suite's default, and a slower poll.
    return base.wait_until(predicate, timeout=timeout, interval=0.1)


class TestEmbeddedDefaultCLI(base.TestCase):

    # More of [DEFAULT] (subclasses), and the API workers it makes.
    default_options = ''
    api_workers = 1

    def setUp(self):
        super().setUp()
        self.state = os.path.join(self.tmp, 'state-all')
        conf = os.path.join(self.tmp, 'nova.conf')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n%s[api]\nlisten_port = 0\n'
                    % (self.state, self.default_options))
        self.log_path = os.path.join(self.tmp, 'nova-all.log')
        self.popen = self.start_nova_process('nova.cmd.all', conf,
                                             self.log_path)
        found = wait_until(lambda: re.search(r'listening on (http://\S+)',
                                             self.log()))
        self.assertTrue(found, self.log())
        self.endpoint = found.group(1)

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def nova(self, *argv, expect=0):
        out, err = io.StringIO(), io.StringIO()
        code = shell.main(list(argv), stdout=out, stderr=err,
                          environ={'NOVA_ENDPOINT': self.endpoint})
        self.assertEqual(expect, code, '%s%s\n%s' % (
            out.getvalue(), err.getvalue(), self.log()[-3000:]))
        return out.getvalue()

    def api_worker_pids(self):
        return sorted(pid for pid in procs.children(self.popen.pid)
                      if b'nova.cmd.api_worker' in procs.cmdline(pid))

    def test_the_api_runs_in_worker_processes(self):
        self.assertTrue(wait_until(
            lambda: len(self.api_worker_pids()) == self.api_workers),
            self.api_worker_pids())
        self.assertIn('ID', self.nova('list'))

    def row(self, name):
        for line in self.nova('list').splitlines():
            cells = [c.strip() for c in line.split('|')[1:-1]]
            if len(cells) == 6 and cells[1] == name:
                return cells
        return None

    def test_boot_stop_start_delete(self):
        self.nova('boot', '--image', 'tiny', '--flavor', 'm1.tiny', '--poll',
                  '--poll-interval', '0.1', 'vm1')
        server_id, name, status, task, power, networks = self.row('vm1')
        self.assertEqual(('ACTIVE', '-', 'Running'), (status, task, power))
        self.assertTrue(networks.startswith('public='), networks)

        self.nova('stop', 'vm1')
        self.assertTrue(wait_until(
            lambda: self.row('vm1')[2:5] == ['SHUTOFF', '-', 'Shutdown']),
            self.row('vm1'))
        self.nova('start', 'vm1')
        self.assertTrue(wait_until(
            lambda: self.row('vm1')[2:5] == ['ACTIVE', '-', 'Running']),
            self.row('vm1'))

        services = self.nova('service-list')
        self.assertEqual(2, services.count('| nova-compute '))
        self.assertIn('| %s |' % server_id, self.nova('list'))
        self.nova('delete', 'vm1')
        self.assertTrue(wait_until(lambda: self.row('vm1') is None))
