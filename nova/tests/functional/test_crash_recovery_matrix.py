"""The operator's recovery from an evacuation whose target stopped, at
every crash point an evacuation passes on its target, on private and on
shared storage, for a target killed and for one stalled.

Hosts ``a``, ``b`` and ``c`` (``crash_harness``). The instance runs on
``a``; ``a`` loses power; the operator evacuates the instance to ``b``
(m1), whose compute runs the evacuation in a process of its own that
stops at the crash point, one of two ways:

* **killed**: kill -9 at the point (``crash_harness.crash``). The
  compute service is dead; its hypervisor keeps what it held;
* **stalled**: the process stops itself there with SIGSTOP
  (``[fault_injection] stall_point``): a host cut off from the control
  plane, or hung on its storage, that may go on at any time.

The operator then:

1. resets the instance's state (reset-state: m1 ``failed``, the
   instance's token cleared);
2. evacuates it to ``c`` (m2). On shared storage, once ``b`` stamped
   the instance directory (it does right after ``spawn.after_mkdir``),
   ``c`` must refuse: ``b`` may still run a guest from these very
   disks. The refusal ends in ERROR on ``a`` with a fault that names the
   fence; the operator fences ``b`` (``StoppedTarget.fence``: a killed
   ``b`` is powered off, which makes the statement true; a stalled one
   is taken at the operator's word, the statement of an operator who
   powered it off and believes it off: where it had started its guest
   (``start.waiting_for_vif_events`` on), that guest, frozen with it,
   is not counted while it stays stopped, since only a real power-off
   or disk leases keep it off the disks; what the product owes is that
   b, once it goes on, starts nothing and powers off what it started)
   and evacuates to ``c`` again;
3. ``b`` comes back: a killed one starts again on what it left, a
   stalled one goes on where it stopped (it must stop at its next token
   check, undo only what it made, and leave ``c``'s instance alone), and
   the orphan reaper of its service runs once.

What c does, by where b stopped (the same for a killed and a stalled b):

* ``evacuate.after_claim`` to ``spawn.after_mkdir``: on private storage
  c builds new disks; on shared storage it reuses the instance's (the
  stamp is still a's);
* ``spawn.writing_root_disk`` to ``evacuate.before_instance_moves``: on
  private storage c builds new disks; on shared storage it refuses until
  b is fenced, then reuses the disks (or builds the root disk of an
  instance that never had one: the only case where b writes one there);
* ``evacuate.after_instance_moves`` (b, now the source, fenced first):
  on private storage c builds new disks and b, once back, quarantines its
  copy; on shared storage c reuses the disks.

Checked every time, at each moment the test can observe (right after
``c`` landed, after ``b`` came back):

* at most one running or paused domain uses any disk file of the
  instance, by inode, over every hypervisor the test knows of;
* no disk of the launched instance removed, replaced or changed: the
  file the test held open from the start is the one ``c`` runs on shared
  storage and is untouched on ``a``'s private storage; nothing of the
  instance quarantined;
* the instance ACTIVE on ``c`` alone, m2 ``done``, m1 ``failed`` (or,
  where the rule refuses, ERROR on ``a`` with a fault saying what to do
  first, never anything else);
* after ``b`` came back: no domain, VIF, journal or ``.part-`` file of
  the instance on ``b``, and no directory there on private storage;
  ``c``'s disks and directory byte for byte as ``c`` left them; no guest
  start passed by the stalled attempt once it went on; ``b``'s attempt
  not landed; no token left.

``evacuate.after_instance_moves`` differs: the evacuation to ``b`` had
landed before ``b`` stopped (``test_evacuate_after_instance_moves``).
"""

import os

from nova import context as nova_context
from nova import exception
from nova import objects
from nova.objects import attempt as attempt_obj
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.functional import crash_harness
from nova.virt import instancedir

# Every crash point an evacuation passes on its target before the row
# moves there, in order.
POINTS = (
    'evacuate.after_claim', 'evacuate.after_ports_bound',
    'rebuild.after_spawning', 'spawn.after_mkdir',
    'spawn.writing_root_disk', 'spawn.after_disk_info',
    'start.after_plug_vifs', 'start.after_define',
    'start.waiting_for_vif_events', 'start.after_resume',
    'evacuate.before_instance_moves')
# Where b's stamp is on the instance directory (written right after
# spawn.after_mkdir): on shared storage, c refuses until b is fenced.
STAMPED = POINTS[POINTS.index('spawn.writing_root_disk'):]
# The points a guest's start passes: a stale attempt that goes on must
# reach none.
GUEST_STARTS = ('start.waiting_for_vif_events', 'start.after_resume')


def _points(cls):
    """One test method per point of ``POINTS``: ``test_<point with _>``,
    running ``recover_at(point)``; and
    ``test_evacuate_after_instance_moves``."""
    for point in POINTS:
        def test(self, point=point):
            self.recover_at(point)
        test.__name__ = 'test_' + point.replace('.', '_')
        test.__doc__ = 'b %s at %s; the operator recovers' % (cls.HOW,
                                                              point)
        setattr(cls, test.__name__, test)

    def test_evacuate_after_instance_moves(self):
        self.landed_then_stopped()
    test_evacuate_after_instance_moves.__doc__ = (
        'b %s at evacuate.after_instance_moves; the operator evacuates '
        'from b' % cls.HOW)
    cls.test_evacuate_after_instance_moves = (
        test_evacuate_after_instance_moves)
    return cls


class RecoveryMatrix(crash_harness.CrashTestCase):

    HOW = None              # crash_harness.KILLED or STALLED

    def request(self):
        return nova_context.get_admin_context()

    def launched(self, point):
        """The instance, running on a; the ``KeptDisk`` of its root disk
        (None for an instance that never had disks)."""
        if self.SHARED and point == 'spawn.writing_root_disk':
            # On shared storage the disks are reused, so b writes a root
            # disk only for an instance that never had one: its first
            # build failed (and removed what it made).
            return self.never_built(), None
        instance = self.boot('a')
        return instance, self.keep_disk(os.path.join(
            self.hosts['a'].instance_dir(instance), instancedir.DISK))

    def files_of(self, instance, name):
        """sha256 of each file of the instance's directory on ``name``,
        but ``.part-`` files (another attempt's leftovers on shared
        storage, which ``assertNothingLeftOn`` looks for)."""
        return {path: digest for path, digest in sha256_tree(
            self.hosts[name].instance_dir(instance)).items()
            if '.part-' not in path}

    def assertDisksOfTheInstance(self, instance, kept, source_files):
        """The instance's own disks: on shared storage the very file the
        test held from the start is the one c runs; on private storage
        a's directory is as it was. Nothing of it quarantined."""
        if kept is not None:
            self.assertDiskKept(kept)
            if self.SHARED:
                self.assertEqual(crash_harness.file_key(kept.path),
                                 crash_harness.file_key(
                                     self.disk_of(instance, 'c')))
        if not self.SHARED:
            self.assertEqual(source_files, sha256_tree(
                self.hosts['a'].instance_dir(instance)))

    def recover_at(self, point):
        instance, kept = self.launched(point)
        a = self.power_cut('a')
        source_files = sha256_tree(a.instance_dir(instance))
        m1 = self.requested_evacuation(instance, 'b')
        b = self.stop_target('b', self.HOW, point, instance, m1)
        self.assertNoPartialDiskBooted(b.held)

        # The operator gives up on b.
        self.api.reset_state(self.request(), self.fresh(instance), 'active')
        self.assertEqual(migration_obj.FAILED, self.fresh(m1).status)
        stamped = bool(self.SHARED) and point in STAMPED
        self.assertEqual(stamped, self.stamp_host(instance, 'c') == 'b')
        if stamped:
            refused = self.evacuate(instance, host='c')
            self.assertOneRunningDomainPerDisk(instance)
            self.assertRefusedUntilFenced(instance, refused, 'a', 'b')
            b.fence()
        m2 = self.evacuate(instance, host='c')
        self.assertLandedOn('c', instance, m2)
        self.assertIsNone(self.fresh(instance).attempt_id)
        self.assertOneRunningDomainPerDisk(instance)
        self.assertDisksOfTheInstance(instance, kept, source_files)
        c_disk = self.keep_disk(self.disk_of(instance, 'c'))
        c_files = self.files_of(instance, 'c')

        # b comes back.
        ended = b.come_back()
        self.assertNothingLeftOn('b', instance, ended,
                                 disks_gone=not self.SHARED)
        self.assertNothingLeftOn('b', instance, b.reaped,
                                 disks_gone=not self.SHARED)
        self.assertEqual([], [p for p in b.after if p in GUEST_STARTS],
                         'b\'s stale attempt started a guest')
        if self.HOW == crash_harness.STALLED:
            # It went on and stopped: it never ended as a success.
            self.assertIsNotNone(ended['error'])
        self.assertActiveOnlyOn('c', instance, m2)
        self.assertEqual(migration_obj.FAILED, self.fresh(m1).status)
        self.assertOneRunningDomainPerDisk(instance)
        self.assertDisksOfTheInstance(instance, kept, source_files)
        self.assertNothingQuarantined(instance)
        # c's instance left alone: its disk the very file, its directory
        # byte for byte.
        self.assertDiskKept(c_disk)
        self.assertEqual(c_files, self.files_of(instance, 'c'))
        self.assertAttemptsOfDidNotLand(instance, 'b')
        self.assertIsNone(self.fresh(instance).attempt_id)
        # b recorded no fault: a stale attempt writes nothing of the
        # instance.
        self.assertEqual([], [f.message for f in
                              objects.InstanceFault.get_by_instance_uuid(
                                  self.ctx, instance.uuid)
                              if f.host == 'b'])
        self.assertPortsBoundToItsHost(instance)
        self.assertNoJournalsOrParts('b')
        self.assertNoJournalsOrParts('c')
        self.assertNoPartialDiskBooted(b.held)

    def landed_then_stopped(self):
        # b stops right after the transaction that moved the row to b and
        # marked m1 done: the evacuation to b landed, and the instance is
        # b's (its attempt recorded landed, its guest the instance's). So
        # the operator's recovery is an evacuation *from b*: the API
        # takes it only once b counts as down, and b, the source now,
        # must be fenced first, as every source of an evacuation (on
        # shared storage c reuses the very disks b's guest runs). Right
        # expectation: ACTIVE on c, m2 done, m1 stays done (a landed
        # evacuation is history; reset-state ends only evacuations in
        # progress); the disks are never rebuilt on shared storage (the
        # same file from a to b to c); on private storage c builds its
        # own from the image, a's copy stays as it was, and b, once
        # back, moves its copy, whole, into quarantine (the source's
        # cleanup of m2: completed), never deletes it.
        point = 'evacuate.after_instance_moves'
        instance, kept = self.launched(point)
        a = self.power_cut('a')
        source_files = sha256_tree(a.instance_dir(instance))
        m1 = self.requested_evacuation(instance, 'b')
        b = self.stop_target('b', self.HOW, point, instance, m1)
        row = self.fresh(instance)
        self.assertEqual(('b', 'active', None, None),
                         (row.host, row.vm_state, row.task_state,
                          row.attempt_id))
        self.assertEqual(migration_obj.DONE, self.fresh(m1).status)
        b_dir = self.hosts['b'].instance_dir(instance)
        b_files = sha256_tree(b_dir)
        b_disk = self.keep_disk(os.path.join(b_dir, instancedir.DISK))

        # The operator: b is still up as far as the API knows.
        self.assertRaises(exception.ComputeServiceStillUp,
                          self.api.evacuate, self.request(),
                          self.fresh(instance), host='c')
        self.api.reset_state(self.request(), self.fresh(instance), 'active')
        self.assertEqual(migration_obj.DONE, self.fresh(m1).status)
        b.fence()
        m2 = self.evacuate(instance, host='c')
        self.assertLandedOn('c', instance, m2)
        self.assertEqual('b', m2.source_compute)
        self.assertEqual(migration_obj.DONE, self.fresh(m1).status)
        self.assertOneRunningDomainPerDisk(instance)
        self.assertDisksOfTheInstance(instance, kept, source_files)
        self.assertDiskKept(b_disk)
        c_disk = self.keep_disk(self.disk_of(instance, 'c'))
        c_files = self.files_of(instance, 'c')

        # b comes back: its attempt had landed, so what it made is kept
        # (a stalled one completes it); then, as the source of m2, it
        # stops its guest and (private storage) quarantines its copy.
        b.come_back()
        self.assertEqual([], [p for p in b.after if p in GUEST_STARTS])
        self.assertNothingLeftOn('b', instance, b.reaped,
                                 disks_gone=not self.SHARED)
        self.assertEqual(migration_obj.COMPLETED, self.fresh(m2).status)
        self.assertEqual(migration_obj.DONE, self.fresh(m1).status)
        row = self.fresh(instance)
        self.assertEqual(('c', 'active', None, None),
                         (row.host, row.vm_state, row.task_state,
                          row.attempt_id))
        self.assertEqual(['c'], self.running_on(instance))
        self.assertOneRunningDomainPerDisk(instance)
        self.assertDisksOfTheInstance(instance, kept, source_files)
        self.assertDiskKept(c_disk)
        self.assertEqual(c_files, self.files_of(instance, 'c'))
        self.assertEqual(
            [attempt_obj.LANDED],
            [r.status for r in objects.InstanceAttempt.get_by_instance(
                self.ctx, instance.uuid) if r.host == 'b'])
        if self.SHARED:
            self.assertNothingQuarantined(instance)
            self.assertDiskKept(b_disk)
        else:
            # b's copy, moved aside whole: the very disk file.
            quarantined = [q for q in instancedir.list_quarantine(
                self.instances_path('b'))[0]
                if q.instance_uuid == instance.uuid]
            self.assertEqual(1, len(quarantined))
            moved = sha256_tree(quarantined[0].path)
            moved.pop(instancedir.QUARANTINE_REASON, None)
            self.assertEqual(b_files, moved)
            self.assertEqual(
                (b_disk.dev, b_disk.ino), crash_harness.file_key(
                    os.path.join(quarantined[0].path, instancedir.DISK)))
        self.assertPortsBoundToItsHost(instance)
        self.assertNoJournalsOrParts('b')
        self.assertNoJournalsOrParts('c')
        self.assertNoPartialDiskBooted(b.held)


@_points
class TestRecoveryPrivateStorageKilled(RecoveryMatrix):
    HOW = crash_harness.KILLED


@_points
class TestRecoveryPrivateStorageStalled(RecoveryMatrix):
    HOW = crash_harness.STALLED


@_points
class TestRecoverySharedStorageKilled(RecoveryMatrix):
    SHARED = ('a', 'b', 'c')
    HOW = crash_harness.KILLED


@_points
class TestRecoverySharedStorageStalled(RecoveryMatrix):
    SHARED = ('a', 'b', 'c')
    HOW = crash_harness.STALLED
