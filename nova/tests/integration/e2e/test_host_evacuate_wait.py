"""``nova host-evacuate HOST --wait`` on a real cluster, a target failing
for real.

Twenty guests (four of them stopped) run on compute1; compute1 dies and
is fenced (forced down); compute2 has lost its bridge, so every spawn
there fails and compute2 cleans up. ``nova host-evacuate compute1 --wait``
starts the run the conductor makes: it places the first attempts, sees the
failures, retries those instances on the other targets, skips compute2
once it failed twice in a row; the command exits 0: every instance is
ACTIVE (or SHUTOFF, if it was stopped and never failed) on a working
target, its guest running (or defined, shut off) there, and compute2
holds nothing of any of them. The table shows the retries and why.

Then, with a smaller host (compute4, three guests) and the bridge of every
other host that is up removed: exit 1, every instance still on compute4
in ERROR, and the table says for each why (each target's fault, or no
target left). (The tests are numbered to run in this order, so that the
first has three targets; each works out its targets from the services
that are up, and so passes alone too.)

Guests are the 1 MiB boot-sector image under TCG, flavor m1.nano (64 MiB
each): 23 guests need about 1.5 GiB at most.
"""

import os
import subprocess
import sys

from nova.tests.integration.e2e import base
from nova.tests.unit.cli import test_host_evacuate as unit

COUNT = 20
STOPPED = (3, 8, 13, 18)
# Seconds the command may wait for every evacuation (it reports any still
# running then and exits 1); the process gets a little longer.
WAIT_TIMEOUT = 300


class TestHostEvacuateWait(base.ClusterTestCase):

    cluster_hosts = 4

    def host_evacuate(self, source):
        argv = [os.path.join(os.path.dirname(sys.executable), 'nova'),
                '--os-endpoint', self.record.api_url, '--os-token',
                self.record.api_token, 'host-evacuate', source, '--wait',
                '--poll-interval', '1',
                '--timeout', str(WAIT_TIMEOUT)]
        result = subprocess.run(argv, capture_output=True, text=True,
                                timeout=WAIT_TIMEOUT + 60)
        print('$ nova host-evacuate %s --wait ... -> %d\n%s%s'
              % (source, result.returncode, result.stdout, result.stderr))
        # Not a terminal: no progress line.
        self.assertNotIn('\r', result.stdout)
        return result.returncode, result.stdout

    def up_targets(self, source):
        return sorted(h for h, s in self.compute_services().items()
                      if h != source and s['state'] == 'up'
                      and s['status'] == 'enabled')

    def delete_all(self, uuids):
        self.nova('delete', *uuids)
        for uuid in uuids:
            self.wait_for_gone(uuid)

    def test_1_one_target_fails_instances_retried(self):
        source = 'compute1'
        targets = self.up_targets(source)
        broken, working = targets[0], targets[1:]
        self.assertTrue(working, targets)
        names = ['hew%02d' % i for i in range(COUNT)]
        uuids = self.boot_on(source, names)
        stopped = {uuids[i] for i in STOPPED}
        for uuid in stopped:
            self.nova('stop', uuid)
        for uuid in stopped:
            self.wait_for_server(uuid, status='SHUTOFF')
        self.fail_host(source, force_down=True)
        self.remove_bridge(broken)
        try:
            code, out = self.host_evacuate(source)
        finally:
            self.restore_bridge(broken)
        self.assertEqual(0, code)
        rows = unit.rows_of(out)
        self.assertEqual(set(uuids), set(rows))
        retried = [u for u in uuids if ' failed, ' in rows[u][2]]
        print('placement: %s; retried: %d' % (
            {u: rows[u][1] for u in uuids}, len(retried)))
        self.assertTrue(retried, 'no instance was retried')
        for uuid in uuids:
            outcome, host, attempts, message = rows[uuid]
            self.assertEqual('done', outcome, rows[uuid])
            self.assertIn(host, working)
            server = self.server(uuid)
            status = server['status']
            self.assertEqual((host, status, None), (
                server['OS-EXT-SRV-ATTR:host'], server['status'],
                server['OS-EXT-STS:task_state']))
            if uuid in retried:
                self.assertEqual('%s failed, %s done' % (broken, host),
                                 attempts)
                self.assertIn('%s: ' % broken, message)
                self.assertIn(self.spec.bridge, message)
            else:
                self.assertEqual('%s done' % host, attempts)
            if uuid in stopped:
                # Stopped before, stopped after, even when a first attempt
                # failed and left it in ERROR meanwhile.
                self.assertEqual('SHUTOFF', status)
                self.assertEqual('shut off',
                                 self.view(host, uuid).domain_of(uuid))
            else:
                self.assertEqual('ACTIVE', status)
                self.assert_running_on(host, uuid)
            migrations = self.migrations(uuid)
            self.assertEqual(['failed'] * (len(migrations) - 1) + ['done'],
                             [m['status'] for m in migrations])
            self.assert_nothing_of_on_busy_host(broken, uuid)
        self.assertIn('skipped targets: %s (failed' % broken, out)
        self.assertIn('%s: %d instances: %d done, 0 failed, 0 refused; %d '
                      'retried' % (source, COUNT, COUNT, len(retried)), out)
        self.delete_all(uuids)

    def test_2_every_target_fails(self):
        source = 'compute4'
        uuids = self.boot_on(source, ['hew-all%d' % i for i in range(3)])
        self.fail_host(source, force_down=True)
        targets = self.up_targets(source)
        for host in targets:
            self.remove_bridge(host)
        try:
            code, out = self.host_evacuate(source)
        finally:
            for host in targets:
                self.restore_bridge(host)
        self.assertEqual(1, code)
        rows = unit.rows_of(out)
        self.assertEqual(set(uuids), set(rows))
        for uuid in uuids:
            outcome, host, attempts, message = rows[uuid]
            self.assertEqual(['failed', source], [outcome, host],
                             rows[uuid])
            server = self.server(uuid)
            self.assertEqual((source, 'ERROR', None), (
                server['OS-EXT-SRV-ATTR:host'], server['status'],
                server['OS-EXT-STS:task_state']))
            tried = [a.split()[0] for a in attempts.split(', ')]
            self.assertTrue(set(tried) <= set(targets), attempts)
            # Each failed target's fault, and why it went no further.
            for target in tried:
                self.assertIn('%s: ' % target, message)
            self.assertIn(self.spec.bridge, message)
            if len(tried) < 2:
                self.assertIn('not retried: no target left', message)
            self.assertEqual(['failed'] * len(tried),
                             [m['status'] for m in self.migrations(uuid)])
            for target in targets:
                self.assert_nothing_of_on_busy_host(target, uuid)
        self.assertIn('%s: 3 instances: 0 done, 3 failed' % source, out)
        self.delete_all(uuids)
