"""One owner at every instant: an evacuation attempt the operator gave
up on never acts again, wherever it stalled (the attempt token).

Hosts ``a`` (dies), ``b`` and ``c`` as real services on libvirt's test
driver. An evacuation to ``b`` is held still at a named point between its
claim and its guest's vCPUs starting (``stall_at``: a hung NFS write, a
slow image lookup). The operator resets the instance's state and
evacuates it to ``c``; it lands there. Then ``b`` wakes. At every point:
``b``'s attempt starts no guest, writes nothing the new owner uses, and
leaves nothing behind; the instance runs on ``c`` alone, its migrations
say ``failed`` and ``done``, and its disks are as they were.

On shared storage a stall after ``b`` stamped the directory makes ``c``
refuse until the operator fences ``b`` (forces it down): ``b`` may still
run a guest from the disks, as far as anything but the operator knows.
The refusal ends the evacuation in ERROR with a fault that says so, and
the evacuation after the fence lands (``TestDeadTargetsStamp``).
"""

from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.fixtures import database as dbf
from nova.tests.functional import evacuate_harness as harness
from nova.tests.functional import test_evacuation_races as races
from nova.virt import ownership

# Between the claim and the guest's vCPUs: where b's attempt stalls.
BEFORE_THE_STAMP = ('evacuate.after_claim', 'evacuate.after_ports_bound',
                    'rebuild.after_spawning', 'spawn.after_mkdir')
AFTER_THE_STAMP = ('spawn.after_disk_info', 'start.after_plug_vifs',
                   'start.after_define', 'start.waiting_for_vif_events')
# Points a guest's start passes: a stale attempt must reach none.
GUEST_STARTS = ('start.waiting_for_vif_events', 'start.after_resume')


def _points(points):
    """One test method per point: ``test_stalled_at_<point with _>``."""
    return harness.one_test_per_point(points, 'stalled_then_given_up',
                                      prefix='test_stalled_at_',
                                      doc='b stalls at %s')


class StalledAttemptTestCase(races.RaceTestCase):

    # The operator fences b before evacuating elsewhere (shared storage,
    # a stamp of b's there).
    FENCE_B = False

    def force_down(self, name):
        service = objects.Service.get_by_host_and_binary(
            self.ctx, name, 'nova-compute')
        service.forced_down = True
        service.save()

    def stalled_then_given_up(self, point):
        instance = self.boot('a')
        a = self.kill('a')
        disks = sha256_tree(a.instance_dir(instance))
        stall = self.stall_at(point)
        m1 = self.api.evacuate(self.request(), self.fresh(instance),
                               host='b')
        if not stall.reached.wait(60):
            self.fail('b never reached %s' % point)

        # The operator gives up on b, and evacuates to c.
        self.api.reset_state(self.request(), self.fresh(instance), 'active')
        if self.FENCE_B:
            self.force_down('b')
        m2 = self.wait_for_evacuation(self.api.evacuate(
            self.request(), self.fresh(instance), host='c'))
        self.assertLandedOn('c', instance, m2)

        # b wakes.
        stall.release()
        self.wait_for(lambda: self.attempt_ended('b', instance),
                      'b\'s stale attempt to end')
        stall.stop()
        self.assertEqual([], [p for p in stall.after if p in GUEST_STARTS],
                         'b\'s stale attempt started a guest')
        self.assertEqual(['c'], self.running_on(instance))
        self.assertNoTrace(self.hosts['b'], instance,
                           disks_gone=not self.SHARED)
        self.assertEqual([], self.hosts['b'].driver.interrupted_attempts()[0])
        self.assertLandedOn('c', instance, m2)
        self.assertEqual(migration_obj.FAILED, self.fresh(m1).status)
        # Given up, not failed: b's attempt left no fault.
        self.assertIsNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid))
        row = self.fresh(instance)
        self.assertIsNone(row.attempt_id)
        # b's attempt is recorded as what it is: given up, never landed.
        self.assertEqual(['failed', 'landed'], sorted(
            a.status for a in objects.InstanceAttempt.get_by_instance(
                self.ctx, instance.uuid) if a.operation == 'evacuation'))
        if self.SHARED:
            # The disks c runs are the instance's own, as they were, and
            # the directory is c's.
            now = sha256_tree(a.instance_dir(instance))
            self.assertEqual(disks['disk'], now['disk'])
            stamp = ownership.read(self.hosts['c'].driver._instance_dir(
                instance))
            self.assertEqual('c', stamp.host)
        else:
            self.assertEqual(disks, sha256_tree(a.instance_dir(instance)))


@_points(BEFORE_THE_STAMP + ('spawn.writing_root_disk',) + AFTER_THE_STAMP)
class TestStalledAttemptPrivateStorage(StalledAttemptTestCase):
    pass


@_points(BEFORE_THE_STAMP)
class TestStalledAttemptSharedStorage(StalledAttemptTestCase):
    SHARED = ('a', 'b', 'c')


@_points(AFTER_THE_STAMP)
class TestStalledAttemptSharedStorageFenced(StalledAttemptTestCase):
    SHARED = ('a', 'b', 'c')
    FENCE_B = True


class TestDeadTargetsStamp(StalledAttemptTestCase):
    """A target cut off right after it stamped the shared directory: the
    operator resets the state; every evacuation elsewhere is refused, with
    the reason and what unblocks it, until the operator forces that
    target down; then it lands."""

    SHARED = ('a', 'b', 'c')

    def test_the_stamp_blocks_until_its_host_is_forced_down(self):
        instance = self.boot('a')
        self.kill('a')
        stall = self.stall_at('spawn.after_disk_info')
        self.api.evacuate(self.request(), self.fresh(instance), host='b')
        if not stall.reached.wait(60):
            self.fail('b never stamped the directory')
        self.api.reset_state(self.request(), self.fresh(instance), 'active')

        refused = self.wait_for_evacuation(self.api.evacuate(
            self.request(), self.fresh(instance), host='c'))
        self.assertEqual(migration_obj.FAILED, refused.status)
        row = self.fresh(instance)
        self.assertEqual(('a', 'error'), (row.host, row.vm_state))
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid)
        self.assertIn('b may still run the guest', fault.message)
        self.assertIn('nova service-force-down b nova-compute',
                      fault.message)
        self.assertEqual([], self.running_on(instance))

        # The operator powers b off and says so.
        self.force_down('b')
        m2 = self.wait_for_evacuation(self.api.evacuate(
            self.request(), self.fresh(instance), host='c'))
        self.assertLandedOn('c', instance, m2)

        # b comes back: its stale attempt stops and leaves c's alone.
        dbf.set_up(objects.Service.get_by_host_and_binary(
            self.ctx, 'b', 'nova-compute'))
        stall.release()
        self.wait_for(lambda: self.attempt_ended('b', instance),
                      'b\'s stale attempt to end')
        self.assertEqual(['c'], self.running_on(instance))
        self.assertLandedOn('c', instance, m2)
        self.assertEqual('c', ownership.read(
            self.hosts['c'].driver._instance_dir(instance)).host)
