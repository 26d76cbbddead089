"""A healed host stops every stale guest, even while one instance is busy
on its new host (issue 19, case 4; doc/source/cleanup.rst, "The orphan
reaper").

compute1 and compute2 have storage of their own. Two guests run on
compute1; compute1 is partitioned (``tools/cluster partition``: its
nova-compute stopped, its QEMU processes running on) and forced down, and
both instances are evacuated to compute2: each instance now runs twice,
with the same MAC and ports. A user then stops one of them on compute2.

That stop is real, not a task state written into the database: the
cluster's guests ignore an ACPI shutdown request, so with
``shutdown_timeout`` at ``STOP_WAIT`` s the stop stays ``powering-off``
on compute2 that long before it powers the guest off. It is what the
issue is about (a user's operation on the new host, which never touches
compute1's copy), and it shows that compute2's own operation goes on
undisturbed.

compute1 is then healed (SIGCONT: the same process goes on, no
``init_host``): its reaper (``reap_orphans_interval`` is 5 s; the run
overdue since the partition starts at once) must stop both stale QEMU
processes while the stop on compute2 is still in progress. Before, it
kept both running until no instance evacuated from compute1 was busy.
The test waits for a condition (both stale guests gone from compute1's
libvirt, or the stop over), never for a fixed time.
"""

import time

from nova.tests.integration.e2e import base

A, B = 'compute1', 'compute2'
# How long the stop on compute2 stays in progress: far longer than a
# healed host's reaper takes to stop its stale guests (about 2 s here),
# short enough for a test. A delete waits that long too: it asks a
# running guest to shut down first.
STOP_WAIT = 30


class TestHealedHostFencing(base.ClusterTestCase):

    cluster_hosts = 2
    reap_orphans_interval = 5
    shutdown_timeout = STOP_WAIT

    def qemu_of(self, host, uuid):
        return self.cluster.host(host).hypervisor.qemu_pid(
            'instance-' + uuid)

    def stale_on(self, host, uuids):
        """The instances of ``uuids`` that still have a domain (defined
        or running) or a QEMU process on ``host``."""
        domains = self.domains(host) or {}
        return [uuid for uuid in uuids
                if 'instance-' + uuid in domains
                or self.qemu_of(host, uuid) is not None]

    def task_of(self, uuid):
        return self.server(uuid).get('OS-EXT-STS:task_state')

    def test_a_busy_instance_does_not_keep_stale_guests_running(self):
        uuids = self.boot_on(A, ['stale-busy', 'stale-idle'])
        busy, idle = uuids
        for uuid in uuids:
            self.wait_for_banners(A, uuid, 1)
        stale_qemu = {uuid: self.qemu_of(A, uuid) for uuid in uuids}

        self.partition_host(A, force_down=True)
        try:
            for uuid in uuids:
                self.nova('evacuate', uuid, B)
            for uuid in uuids:
                self.wait_for_server(uuid, status='ACTIVE', host=B)
                self.wait_for_migration(uuid, 'done')
                self.wait_for_banners(B, uuid, 1)
            new_qemu = {uuid: self.qemu_of(B, uuid) for uuid in uuids}
            for uuid in uuids:
                self.observe('evacuated while compute1 runs on', uuid,
                             [A, B])
                # Two guests of one instance: compute1's untouched.
                self.assertEqual('running',
                                 self.view(A, uuid).domain_of(uuid))
                self.assertEqual(stale_qemu[uuid], self.qemu_of(A, uuid))
                self.assert_running_on(B, uuid)

            # The user's stop on compute2: in progress for STOP_WAIT s.
            self.nova('stop', busy)
            self.assertEqual('powering-off', self.task_of(busy))

            began = time.monotonic()
            self.heal_host(A)
            deadline = began + STOP_WAIT + 30
            while True:
                # The stale guests first, then the task: a task still in
                # progress now was in progress when they went.
                left = self.stale_on(A, uuids)
                task = self.task_of(busy)
                if not left or task != 'powering-off':
                    break
                if time.monotonic() > deadline:
                    break
                time.sleep(base.POLL)
            took = time.monotonic() - began
            print('after the heal, in %.1f s: stale guests on %s: %s; '
                  'task of %s: %s' % (took, A, left, busy, task))
            self.assertEqual([], left, 'compute1 still runs stale guests '
                             'while the stop on compute2 is in progress')
            self.assertEqual('powering-off', task)
            # compute2's guests run on, the same QEMU processes: the busy
            # one too, its stop still waiting for the guest to shut down.
            for uuid in uuids:
                self.assert_running_on(B, uuid)
                self.assertEqual(new_qemu[uuid], self.qemu_of(B, uuid))
        finally:
            self.force_down(A, False)

        for uuid in uuids:
            self.wait_for_migration(uuid, 'completed')
            self.observe('after the heal', uuid, [A, B])
            self.assert_nothing_of_on_busy_host(A, uuid)
            # Private storage, stamped by compute1: its copy is kept
            # aside, not deleted.
            self.assertEqual(1, len(self.quarantined(A, uuid)))
        self.assertEqual(set(), set(
            stale_qemu.values()) & set(self.cluster.host(
                A).hypervisor.qemu_pids()))

        # The user's stop ends as it would have anyway.
        self.wait_for_server(busy, status='SHUTOFF', host=B,
                             timeout=STOP_WAIT + 30)
        self.assertIsNone(self.qemu_of(B, busy))
        self.assert_running_on(B, idle)
        self.assertEqual(new_qemu[idle], self.qemu_of(B, idle))
        self.nova('delete', *uuids)
        for uuid in uuids:
            self.wait_for_gone(uuid, timeout=STOP_WAIT + 30)
