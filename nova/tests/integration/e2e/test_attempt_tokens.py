"""The attempt token on real hosts: an evacuation given up on never
spawns, and a dead target's stamp no longer blocks every recovery
(``nova/compute/attempts.py``, ``nova/compute/disk_ownership.py``).

Each case holds an evacuation still at a chosen step on its target: the
target's nova-compute runs once with ``[fault_injection] stall_point``
(``nova/crashpoint.py``) and stops itself there (SIGSTOP, as a hung NFS
write or a host cut off from the control plane would hold it); the test
waits until /proc shows it stopped (``Cluster.wait_for_compute_stall``).
The operator then gives up on that attempt (``nova reset-state
--active``, which clears the token) and evacuates elsewhere.

compute1..3 each have storage of their own; compute4..7 share one
directory (standing in for NFS). compute4..6 take disk leases
(``lock_manager = "lockd"``), compute7 does not.

* **A given-up attempt never spawns** (case 1), at each of
  ``STALL_POINTS``, on private and on shared storage: the source fails
  and is forced down, the evacuation to the second host stalls, the
  operator resets the instance and evacuates it to the third host, where
  it runs. The second host is then continued (SIGCONT): its attempt stops
  at its next token check and undoes only what it made. While it does,
  and until the end, a ``QemuWatch`` samples it every 0.1 s for a QEMU
  process or a running domain of the instance and must see none; the
  third host's QEMU keeps its PID; the instance is ACTIVE there, the
  first migration ``failed`` and the second ``done``; the second host has
  no domain, tap, journal or (private storage) directory of it left; the
  ports are bound to the third host. On shared storage the disks are the
  same files, byte for byte, and the stamp names the third host.
* **A delete while the build spawns**, on real QEMU, at
  ``spawn.after_mkdir`` and ``start.after_define``: the build's
  nova-compute stops itself there, ``DELETE`` answers 204 at once, and
  once the host continues the server is gone with no domain, tap,
  directory or journal left on it and its attempt never landed.
* **A dead target's stamp no longer blocks every recovery** (case 5),
  on the shared storage: the evacuation to compute5 stalls after it
  stamped the directory (``spawn.after_disk_info``); after reset-state,
  an evacuation to compute7 (no disk leases) is refused, the instance
  ERROR with a fault saying ``compute5 may still run the guest`` and how
  to unblock it (``nova service-force-down compute5 nova-compute``).
  compute5 is powered off and forced down; the evacuation to compute7
  then boots the same disk files (same inode, same sha256, a second boot
  banner in the same console.log). compute5 comes back: its restart's
  recovery undoes only its attempt's ``.part-`` files, leaves compute7's
  disks and stamp alone and starts no guest.
* **Leases fence the dead target** (case 5 with disk leases): the same
  stall on compute5, whose peers compute4 and compute6 take leases too:
  after reset-state the evacuation to compute6 is allowed at once, with
  compute5 neither powered off nor forced down (a guest it might start
  would be refused its disks); continued, compute5 stops at its token
  check and compute6 keeps running and holding the lease.

Run with the product's token checks disabled (``attempts.token_check`` a
no-op), the continued attempt goes on. After its claim, on private
storage, it binds the ports to itself. After it made the directory or
defined the domain, it starts a QEMU of the instance: on private storage
the watch sees it for up to 20 s, paused, waiting for a VIF event that
never comes; on shared storage the disk lease refuses it at once (the
watch sees the paused domain when a sample falls in that moment). On
shared storage, continued after it adopted the directory and before it
stamped it, it writes its stamp over the new owner's and, its start
refused, its undo puts back the source's stamp: the directory no longer
names its owner. The other cases pass without the checks: on shared
storage an attempt continued after its claim refuses by itself (the
directory's stamp is the new owner's), and one continued after it
stamped sees the directory adopted since and keeps the new owner's
files; case 5 rests on the stamp, the leases and the restart's recovery.
"""

import os
import time

from nova.testing.cluster import services as cluster_services
from nova.tests import base as test_base
from nova.tests.integration.e2e import base

P1, P2, P3 = 'compute1', 'compute2', 'compute3'
S1, S2, S3, S_NO_LEASES = 'compute4', 'compute5', 'compute6', 'compute7'
HASHED = ('disk', 'disk.info')
PART = r'\.part-'

# Where case 1 holds the given-up attempt: between its claim and its
# guest's vCPUs starting. More can be added (``nova/conf/storage.py``).
STALL_POINTS = ('evacuate.after_claim', 'spawn.after_mkdir',
                'start.after_define')
STAMPED = 'spawn.after_disk_info'


def _slug(point):
    return point.replace('.', '_')


def _per_stall_point(cls):
    """One test per point of ``STALL_POINTS`` and storage."""
    for point in STALL_POINTS:
        for storage, hosts in (('private', (P1, P2, P3)),
                               ('shared', (S1, S2, S3))):
            def test(self, point=point, hosts=hosts,
                     shared=storage == 'shared'):
                self._given_up_attempt(point, *hosts, shared=shared)
            name = 'test_given_up_attempt_%s_%s' % (storage, _slug(point))
            test.__name__ = test.__qualname__ = name
            test.__doc__ = ('An evacuation given up on at %s (%s storage) '
                            'never spawns once continued.' % (point,
                                                              storage))
            setattr(cls, name, test)
    return cls


@_per_stall_point
class TestAttemptTokens(base.ClusterTestCase):

    cluster_hosts = 7
    shared_groups = ((S1, S2, S3, S_NO_LEASES),)
    hosts_without_leases = (S_NO_LEASES,)

    # -- helpers -----------------------------------------------------------

    def qemu_of(self, host, uuid):
        return self.cluster.host(host).hypervisor.qemu_pid(
            'instance-' + uuid)

    def instance_row(self, uuid):
        (row,) = self.db_rows(
            'SELECT host, vm_state, task_state, attempt_id FROM instances '
            'WHERE uuid = :uuid', uuid=uuid)
        return row

    def attempts(self, uuid):
        return self.db_rows(
            'SELECT uuid, host, operation, status FROM instance_attempts '
            'WHERE instance_uuid = :uuid ORDER BY id', uuid=uuid)

    def evacuations(self, uuid):
        """The server's evacuate actions, oldest first."""
        actions = self.api.get('/servers/%s/os-instance-actions'
                               % uuid)['instanceActions']
        return sorted((a for a in actions if a['action'] == 'evacuate'),
                      key=lambda a: a['start_time'])

    def wait_for_attempt_end(self, uuid, request_id, host, timeout=90):
        """Until ``host``'s event of action ``request_id`` has a result
        (its handler returned: the attempt undid what it made, or kept
        it); the event."""
        deadline = time.monotonic() + timeout
        while True:
            detail = self.api.get('/servers/%s/os-instance-actions/%s'
                                  % (uuid, request_id),
                                  microversion='2.62')['instanceAction']
            mine = [e for e in detail.get('events', [])
                    if e.get('host') == host]
            if mine and all(e.get('result') for e in mine):
                print('events of %s on %s: %s' % (request_id, host, mine))
                return mine[-1]
            if time.monotonic() > deadline:
                self.fail('the attempt of %s on %s did not end: %s'
                          % (request_id, host, detail))
            time.sleep(base.POLL)

    def stall_evacuation(self, uuid, source, target, point):
        """Run ``target``'s nova-compute with ``point`` as its stall
        point, fail ``source`` (forced down), evacuate to ``target`` and
        wait until it stopped itself there; the attempt (its row) that
        holds the token."""
        self.cluster.restart_compute(target, stall_point=point)
        print('%s: nova-compute restarted with stall point %s'
              % (target, point))
        self.fail_host(source, force_down=True)
        self.nova('evacuate', uuid, target)
        self.cluster.wait_for_compute_stall(target)
        print('%s: nova-compute stopped itself at %s' % (target, point))
        row = self.instance_row(uuid)
        (attempt,) = [a for a in self.attempts(uuid)
                      if a['uuid'] == row['attempt_id']]
        self.assertEqual((target, 'evacuation', 'claimed'), (
            attempt['host'], attempt['operation'], attempt['status']))
        self.assertEqual('pre-migrating', self.migrations(uuid)[-1]['status'])
        self.observe('%s stopped at %s' % (target, point), uuid,
                     [source, target])
        return attempt

    def give_up(self, uuid):
        """The operator gives up on the evacuation in progress."""
        self.nova('reset-state', '--active', uuid)
        row = self.instance_row(uuid)
        self.assertEqual((None, 'active', None), (
            row['attempt_id'], row['vm_state'], row['task_state']))
        self.assertEqual('failed', self.migrations(uuid)[-1]['status'])

    def restore(self, *hosts):
        """Undo what a test did to ``hosts`` (also when it failed): a
        stalled nova-compute continued, a failed host revived."""
        for host in hosts:
            entry = self.host_entry(host)
            if entry.state == 'partitioned':
                self.cluster.heal(host)
            if entry.state == 'failed':
                self.revive_host(host)
            elif self.compute_services()[host].get('forced_down'):
                self.force_down(host, False)

    def delete(self, uuid):
        try:
            self.server(uuid)
        except cluster_services.ApiError:
            return
        self.nova('delete', uuid, check=False)
        self.wait_for_gone(uuid)

    def shared_disks(self, host, uuid):
        directory = self.instance_dir(host, uuid)
        disk = os.path.join(directory, 'disk')
        return (base.sha256_files(directory, HASHED),
                os.stat(disk).st_ino)

    # -- case 1 ------------------------------------------------------------

    def _given_up_attempt(self, point, a, b, c, shared):
        (uuid,) = self.boot_on(a, ['given-up-%s' % _slug(point)])
        self.addCleanup(self.delete, uuid)
        self.addCleanup(self.restore, a, b)
        self.wait_for_banners(a, uuid, 1)
        if shared:
            self.watch_disks()
            disks = self.shared_disks(a, uuid)
        stalled = self.stall_evacuation(uuid, a, b, point)

        self.give_up(uuid)
        self.nova('evacuate', uuid, c)
        self.wait_for_server(uuid, status='ACTIVE', host=c)
        self.wait_for_migration(uuid, 'done')
        # Shared storage: the same console.log, a second boot.
        self.wait_for_banners(c, uuid, 2 if shared else 1)
        qemu_c = self.qemu_of(c, uuid)
        self.assertIsNotNone(qemu_c)
        self.observe('running on %s' % c, uuid, [b, c])

        watch = self.watch_qemu(b, uuid)
        self.heal_host(b)
        first, second = self.evacuations(uuid)
        event = self.wait_for_attempt_end(uuid, first['request_id'], b)
        print('%s: its attempt ended: %s' % (b, event))
        self.assertEqual({}, self.journals_of(b, uuid))
        self.observe('%s continued, its attempt ended' % b, uuid, [b, c])

        # The new owner, untouched.
        self.assert_running_on(c, uuid)
        self.assertEqual(qemu_c, self.qemu_of(c, uuid))
        server = self.server(uuid)
        self.assertEqual((c, 'ACTIVE', None), (
            server['OS-EXT-SRV-ATTR:host'], server['status'],
            server.get('OS-EXT-STS:task_state')))
        self.assertEqual(
            [(b, 'failed'), (c, 'done')],
            [(m['dest_compute'], m['status'])
             for m in self.migrations(uuid)])
        self.assertIsNone(self.instance_row(uuid)['attempt_id'])
        # The given-up attempt never landed.
        self.assertNotEqual('landed', [
            r for r in self.attempts(uuid)
            if r['uuid'] == stalled['uuid']][0]['status'])
        self.assert_ports_bound_to(uuid, c)
        # Nothing of it on the host that was continued.
        self.assert_nothing_of(b, uuid, keep_files=shared)
        if shared:
            self.assertEqual(c, self.stamp_of(c, uuid)['host'])
            self.assertEqual(disks, self.shared_disks(c, uuid))
            self.assertEqual([], self.storage_files(b, PART))
        self.assertEqual(2 if shared else 1, self.console_banners(c, uuid))
        self.stop_qemu_watch(watch)

        self.restore(a, b)
        self.wait_for_migration(uuid, 'completed')
        self.assert_running_on(c, uuid)
        self.assertEqual(qemu_c, self.qemu_of(c, uuid))

    # -- a delete while the build spawns (real QEMU) ------------------------

    def _delete_while_spawning(self, point):
        """``DELETE`` while the build's nova-compute is stopped at
        ``point``: 204 at once; once the host continues, the build undoes
        its attempt exactly once and nothing of the server is left."""
        host = P3
        self.addCleanup(self.restore, host)
        self.cluster.restart_compute(host, stall_point=point)
        (uuid,) = self.boot_on(host, ['deleted-at-%s' % _slug(point)],
                               wait=False)
        self.cluster.wait_for_compute_stall(host)
        self.observe('%s stopped at %s' % (host, point), uuid, [host])
        (attempt,) = self.attempts(uuid)
        self.assertEqual((host, 'claimed'),
                         (attempt['host'], attempt['status']))

        self.assertIsNone(self.api.request('DELETE', '/servers/%s' % uuid))
        self.heal_host(host)
        self.wait_for_gone(uuid)

        def host_is_clean():
            view = self.view(host, uuid)
            return (view.domain_of(uuid) is None and not view.taps
                    and view.instance_files is None
                    and not self.journals_of(host, uuid))
        test_base.wait_until(host_is_clean, timeout=base.NOVA_TIMEOUT)
        self.observe('%s continued, the server deleted' % host, uuid,
                     [host])
        self.assert_nothing_of(host, uuid)
        self.assertEqual([], self.db_rows(
            'SELECT uuid FROM instances WHERE uuid = :uuid AND NOT deleted',
            uuid=uuid))
        self.assertNotEqual('landed', self.attempts(uuid)[0]['status'])

    def test_delete_while_spawning_after_mkdir(self):
        self._delete_while_spawning('spawn.after_mkdir')

    def test_delete_while_spawning_after_define(self):
        self._delete_while_spawning('start.after_define')

    # -- case 5 ------------------------------------------------------------

    def test_dead_targets_stamp_unblocked_by_force_down(self):
        a, b, c = S1, S2, S_NO_LEASES
        (uuid,) = self.boot_on(a, ['dead-target-stamp'])
        self.addCleanup(self.delete, uuid)
        self.addCleanup(self.restore, a, b)
        self.wait_for_banners(a, uuid, 1)
        self.watch_disks()
        disks = self.shared_disks(a, uuid)
        stalled = self.stall_evacuation(uuid, a, b, STAMPED)
        self.assertEqual((b, stalled['uuid']), (
            self.stamp_of(b, uuid)['host'],
            self.stamp_of(b, uuid)['attempt']))
        self.assertTrue(self.journals_of(b, uuid))

        self.give_up(uuid)
        self.nova('evacuate', uuid, c)
        server = self.wait_for_server(uuid, status='ERROR')
        self.assertEqual(a, server['OS-EXT-SRV-ATTR:host'])
        self.wait_for_migration(uuid, 'failed')
        message = (server.get('fault') or {}).get('message', '')
        print('fault of %s: %s' % (uuid, message))
        shown = self.nova('show', uuid)
        for said in (message, shown):
            self.assertIn('%s may still run the guest' % b, said)
            self.assertIn('nova service-force-down %s nova-compute' % b,
                          said)
        self.observe('evacuation to %s refused' % c, uuid, [b, c])
        self.assert_nothing_of(c, uuid, keep_files=True)
        self.assertEqual(disks, self.shared_disks(c, uuid))
        self.assertEqual(stalled['uuid'], self.stamp_of(c, uuid)['attempt'])

        # compute5 is powered off (fenced) and forced down.
        self.cluster.fail(b)
        self.nova('service-force-down', b, 'nova-compute')
        self.wait_for_compute_state(b, 'down')
        self.nova('evacuate', uuid, c)
        self.wait_for_server(uuid, status='ACTIVE', host=c)
        self.wait_for_migration(uuid, 'done')
        self.wait_for_banners(c, uuid, 2)
        self.assert_running_on(c, uuid)
        qemu_c = self.qemu_of(c, uuid)
        self.assertEqual([os.path.join(self.host_entry(c).instances_path,
                                       uuid, 'disk')],
                         self.domain_disks(c, uuid))
        self.assertEqual(disks, self.shared_disks(c, uuid))
        stamp = self.stamp_of(c, uuid)
        self.assertEqual(c, stamp['host'])
        self.assertTrue(self.journals_of(b, uuid))

        # compute5 comes back: its recovery undoes only its own attempt.
        watch = self.watch_qemu(b, uuid)
        offset = os.path.getsize(self.host_entry(b).log_file)
        self.revive_host(b)
        line = self.wait_for_log(b, 'attempt %s was cut short by a restart'
                                 % stalled['uuid'], offset)
        # Only its own .part- files: the directory is compute7's now.
        self.assertIn('on %s claimed the instance since' % c, line)
        self.assertEqual({}, self.journals_of(b, uuid))
        self.observe('%s revived' % b, uuid, [b, c])
        self.assert_nothing_of(b, uuid, keep_files=True)
        self.assertEqual([], self.storage_files(b, PART))
        self.assertEqual(stamp, self.stamp_of(c, uuid))
        self.assertEqual(disks, self.shared_disks(c, uuid))
        self.assert_running_on(c, uuid)
        self.assertEqual(qemu_c, self.qemu_of(c, uuid))
        self.assertEqual(2, self.console_banners(c, uuid))
        self.assert_ports_bound_to(uuid, c)
        self.assertEqual('failed', [r for r in self.attempts(uuid)
                                    if r['uuid'] == stalled['uuid']][0][
                                        'status'])
        self.stop_qemu_watch(watch)

        self.restore(a, b)
        self.wait_for_migration(uuid, 'completed')
        self.assertEqual(stamp, self.stamp_of(c, uuid))
        self.assertEqual(qemu_c, self.qemu_of(c, uuid))

    def test_dead_targets_stamp_with_disk_leases(self):
        a, b, c = S1, S2, S3
        (uuid,) = self.boot_on(a, ['dead-target-leases'])
        self.addCleanup(self.delete, uuid)
        self.addCleanup(self.restore, a, b)
        self.wait_for_banners(a, uuid, 1)
        self.watch_disks()
        disks = self.shared_disks(a, uuid)
        stalled = self.stall_evacuation(uuid, a, b, STAMPED)
        self.assertEqual(stalled['uuid'], self.stamp_of(b, uuid)['attempt'])
        disk = os.path.join(self.instance_dir(c, uuid), 'disk')

        # compute5 is neither powered off nor forced down: the leases
        # would refuse a guest it started its disks.
        self.give_up(uuid)
        self.assertFalse(self.compute_services()[b].get('forced_down'))
        self.nova('evacuate', uuid, c)
        self.wait_for_server(uuid, status='ACTIVE', host=c)
        self.wait_for_migration(uuid, 'done')
        self.wait_for_banners(c, uuid, 2)
        qemu_c = self.qemu_of(c, uuid)
        self.assertEqual([c], self.lease_holders(disk))
        self.assertEqual(disks, self.shared_disks(c, uuid))
        stamp = self.stamp_of(c, uuid)
        self.assertEqual(c, stamp['host'])

        watch = self.watch_qemu(b, uuid)
        self.heal_host(b)
        first, _second = self.evacuations(uuid)
        self.wait_for_attempt_end(uuid, first['request_id'], b)
        self.assertEqual({}, self.journals_of(b, uuid))
        self.observe('%s continued' % b, uuid, [b, c])
        self.assert_nothing_of(b, uuid, keep_files=True)
        self.assertEqual([], self.storage_files(b, PART))
        self.assertEqual(stamp, self.stamp_of(c, uuid))
        self.assertEqual(disks, self.shared_disks(c, uuid))
        self.assert_running_on(c, uuid)
        self.assertEqual(qemu_c, self.qemu_of(c, uuid))
        self.assertEqual([c], self.lease_holders(disk))
        self.assert_ports_bound_to(uuid, c)
        self.stop_qemu_watch(watch)

        self.restore(a, b)
        self.wait_for_migration(uuid, 'completed')
        self.assertEqual(qemu_c, self.qemu_of(c, uuid))
