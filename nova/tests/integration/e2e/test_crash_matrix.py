"""kill -9 at named points of a build, an evacuation and a returning
source, on real QEMU: a restart leaves nothing partial and loses nothing.

Each case runs the operation on a host whose nova-compute was restarted
with ``[fault_injection] crash_point`` (``nova/crashpoint.py``): it kills
itself with SIGKILL there, as a power cut of the service alone would (its
libvirtd and guests keep running). The harness reaps it and records how
it ended; the test then starts it again normally and checks what the
restart left (``nova/compute/recovery.py``, ``host_init.py``,
``evacuation.py``):

* no orphan domain (``virsh list --all``) and no tap (``ip -n``) of the
  operation's attempt;
* no partial disk: none under its final name at the crash, no
  ``*.part-*`` file anywhere after the restart;
* every disk that existed before (another guest's on the same host, the
  instance's own on its source, the image cache) byte for byte as it was;
* the instance ACTIVE where the operation finished, or ERROR on its host
  with a fault saying the operation was interrupted;
* the retry of the operation works;
* the instance's ports bound to the host the instance is on.

The points: ``spawn.writing_root_disk`` and ``start.waiting_for_vif_events``
during a build, ``evacuate.before_instance_moves`` then
``evacuate.after_instance_moves`` during an evacuation (the second one
is the retry of the first, and lands), and ``source.during_cleanup`` in
the ``init_host`` of the evacuation's returning source. Storage is not
shared: each host has its own disks.
"""

import os
import signal

from nova.tests.integration.e2e import base

A, B = 'compute1', 'compute2'
HASHED = ('disk', 'disk.info')
PART = r'\.part-'


class TestCrashMatrix(base.ClusterTestCase):

    cluster_hosts = 2
    bystander = None

    # -- helpers ----------------------------------------------------------

    def _bystander_on_b(self):
        """A guest running on B through every case: its disks and the
        image cache must stay byte for byte, and it must keep running,
        whatever a crash and restart of B's nova-compute do."""
        cls = type(self)
        if cls.bystander is None:
            (cls.bystander,) = self.boot_on(B, ['bystander'])
            self.wait_for_banners(B, cls.bystander, 1)
        self.assert_running_on(B, cls.bystander)
        return cls.bystander

    def _disks(self, host):
        """sha256 of every disk on the host's storage (instance disks,
        disk.info, the image cache); no console.log, no stamp."""
        return {path: digest for path, digest in base.sha256_files(
            self.host_entry(host).storage_dir).items()
            if os.path.basename(path).startswith('disk') or
            path.startswith('_base/')}

    def _restart_with(self, host, point):
        self.assertIsNone(self.cluster.restart_compute(host,
                                                       crash_point=point))
        print('%s: nova-compute restarted with crash point %s'
              % (host, point))

    def _assert_killed_at(self, host, point, died=None):
        died = died or self.cluster.wait_for_compute_exit(host)
        print('%s: nova-compute ended: %s' % (host, died))
        self.assertEqual(-signal.SIGKILL, died['returncode'], died)
        self.assertEqual(('crash point', point),
                         (died['cause'], died['crash_point']), died)
        self.assertNotIn('nova-compute', self.host_entry(host).processes)

    def _restart_normally(self, host):
        self.assertIsNone(self.cluster.restart_compute(host))
        self.assertEqual({}, self.host_entry(host).compute_overrides)

    def _assert_no_partial_files(self, host):
        self.assertEqual([], self.storage_files(host, PART))

    def _assert_interrupted(self, uuid, host, action):
        server = self.wait_for_server(uuid, status='ERROR')
        self.assertEqual(host, server['OS-EXT-SRV-ATTR:host'])
        fault = server.get('fault') or {}
        print('fault: %s' % fault)
        self.assertIn('interrupted', fault.get('message', ''), fault)
        self.assertIn(action, fault.get('message', ''), fault)
        return server

    def _assert_same(self, before, after):
        changed = {path: (digest, after.get(path))
                   for path, digest in before.items()
                   if after.get(path) != digest}
        self.assertEqual({}, changed, 'disks changed or gone')

    # -- builds -----------------------------------------------------------

    def _crash_build(self, point, name, at_crash):
        bystander = self._bystander_on_b()
        before = self._disks(B)
        self._restart_with(B, point)
        (uuid,) = self.boot_on(B, [name], wait=False)
        self._assert_killed_at(B, point)
        at_crash(self.observe('B killed at %s' % point, uuid, [B])[B], uuid)

        self._restart_normally(B)
        self._assert_interrupted(uuid, B, 'build')
        self.observe('B restarted', uuid, [B])
        self.assert_nothing_of_on_busy_host(B, uuid)
        self._assert_no_partial_files(B)
        self._assert_same(before, self._disks(B))
        self.assert_running_on(B, bystander)
        self.assertEqual(1, self.console_banners(B, bystander))
        self.assert_ports_bound_to(uuid, B)

        # The retry: the ERROR instance goes, a new boot on B works.
        self.nova('delete', uuid)
        self.wait_for_gone(uuid)
        self.assertEqual([], self.ports_of(uuid))
        (again,) = self.boot_on(B, [name + '-retry'])
        self.wait_for_banners(B, again, 1)
        self.observe('retried on B', again, [B])
        self.assert_running_on(B, again)
        self.assert_ports_bound_to(again, B)
        self._assert_no_partial_files(B)
        self._assert_same(before, self._disks(B))
        self.nova('delete', again)
        self.wait_for_gone(again)

    def test_build_killed_writing_root_disk(self):
        def at_crash(view, uuid):
            # Written complete under its .part- name, never as "disk".
            files = view.instance_files or {}
            self.assertNotIn('disk', files, view.text())
            self.assertEqual(1, len([n for n in files
                                     if n.startswith('disk.part-')]),
                             view.text())
            self.assertIsNone(view.domain_of(uuid), view.text())
        self._crash_build('spawn.writing_root_disk', 'killed-root-disk',
                          at_crash)

    def test_build_killed_waiting_for_vif_events(self):
        def at_crash(view, uuid):
            # The guest was started paused, its tap plugged.
            self.assertEqual('paused', view.domain_of(uuid), view.text())
            self.assertEqual(2, len(view.taps), view.text())
        self._crash_build('start.waiting_for_vif_events',
                          'killed-vif-events', at_crash)

    # -- an evacuation and its returning source ---------------------------

    def test_evacuation_and_source_cleanup_killed(self):
        bystander = self._bystander_on_b()
        (uuid,) = self.boot_on(A, ['killed-evacuation'])
        self.wait_for_banners(A, uuid, 1)
        self.observe('booted on A', uuid, [A, B])
        source_copy = self.instance_dir(A, uuid)
        a_before = self._disks(A)
        self.assertEqual(set(HASHED), set(base.sha256_files(source_copy,
                                                            HASHED)))
        self.fail_host(A, force_down=True)
        b_before = self._disks(B)

        # 1. B is killed once the guest runs there, before the instance
        # row moves: the evacuation did not happen.
        point = 'evacuate.before_instance_moves'
        self._restart_with(B, point)
        self.nova('evacuate', uuid, B)
        self._assert_killed_at(B, point)
        crashed = self.observe('B killed at %s' % point, uuid, [A, B])[B]
        self.assertEqual('running', crashed.domain_of(uuid), crashed.text())
        self.assertIsNotNone(crashed.instance_files, crashed.text())
        self._restart_normally(B)
        self._assert_interrupted(uuid, A, 'evacuate')
        self.assertEqual('failed', self.wait_for_migration(
            uuid, 'failed')['status'])
        self.observe('B restarted', uuid, [A, B])
        self.assert_nothing_of_on_busy_host(B, uuid)
        self._assert_no_partial_files(B)
        self._assert_same(b_before, self._disks(B))
        self._assert_same(a_before, self._disks(A))
        self.assert_running_on(B, bystander)
        self.assert_ports_bound_to(uuid, A)

        # 2. The retry, killed once the row moved to B but before the
        # migration is done: it landed, the restart only finishes it.
        point = 'evacuate.after_instance_moves'
        self._restart_with(B, point)
        self.nova('evacuate', uuid, B)
        self._assert_killed_at(B, point)
        self.observe('B killed at %s' % point, uuid, [A, B])
        self._restart_normally(B)
        self.wait_for_server(uuid, status='ACTIVE', host=B)
        self.wait_for_migration(uuid, 'done')
        self.wait_for_banners(B, uuid, 1)
        self.observe('B restarted', uuid, [A, B])
        self.assert_running_on(B, uuid)
        self._assert_no_partial_files(B)
        self._assert_same(b_before, self._disks(B))
        self.assert_running_on(B, bystander)
        self.assert_ports_bound_to(uuid, B)

        # 3. A comes back and is killed while it cleans up after the
        # evacuation: its guest destroyed, its copy not yet moved aside.
        point = 'source.during_cleanup'
        died = self.revive_host(A, crash_point=point)
        self.assertIsNotNone(died, 'A came up past its crash point')
        self._assert_killed_at(A, point, died)
        crashed = self.observe('A killed at %s' % point, uuid, [A, B])[A]
        self.assertIsNone(crashed.domain_of(uuid), crashed.text())
        self.assertEqual('done', self.migrations(uuid)[-1]['status'])
        self._assert_same(a_before, self._disks(A))
        self._restart_normally(A)
        self.wait_for_migration(uuid, 'completed')
        self.observe('A restarted', uuid, [A, B])
        self.assert_nothing_of(A, uuid)
        self._assert_no_partial_files(A)
        # A's copy was moved aside whole, never deleted.
        (quarantined,) = self.quarantined(A, uuid)
        self.assertEqual(
            {name: a_before['%s/%s' % (uuid, name)] for name in HASHED},
            base.sha256_files(quarantined, HASHED))
        # The guest on B was not touched: running, not rebooted.
        self.assert_running_on(B, uuid)
        self.assertEqual(1, self.console_banners(B, uuid))
        server = self.wait_for_server(uuid, status='ACTIVE', host=B)
        self.assertEqual(B, server['OS-EXT-SRV-ATTR:host'])
        self.assert_ports_bound_to(uuid, B)
        self.nova('delete', uuid)
        self.wait_for_gone(uuid)
