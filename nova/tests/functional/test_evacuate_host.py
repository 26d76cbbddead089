"""host-evacuate: every instance of a failed host, several at a time, run
by the conductor (cast over RPC, as the API does) against real compute
hosts."""

from nova.conductor import rpcapi as conductor_rpcapi
from nova import objects
from nova.objects import host_evacuation as run_obj
from nova.objects import instance_group as group_obj
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.functional import evacuate_harness as harness

# Only host a has it: an instance on it cannot be plugged anywhere else.
LOCAL_BRIDGE = 'br-only-a'


def run_to_end(case, instances):
    """Record a host-evacuate of host a's ``instances``, cast it to the
    conductor as the API does, and return its row once it ended."""
    run = run_obj.HostEvacuation.create(case.ctx, 'a', instances)
    conductor_rpcapi.ConductorAPI().run_host_evacuation(case.ctx, run.uuid)
    case.wait_for(lambda: run_obj.HostEvacuation.get_by_uuid(
        case.ctx, run.uuid).ended, 'the run to end')
    return run_obj.HostEvacuation.get_by_uuid(case.ctx, run.uuid)


class TestHostEvacuate(harness.EvacuateTestCase):
    BRIDGES = {'a': (harness.BRIDGE, LOCAL_BRIDGE)}

    def test_twenty_instances_one_failure(self):
        self.flags(host_evacuate_workers=4, group='conductor')
        instances = [self.boot('a') for _ in range(19)]
        doomed = self.boot('a', bridge=LOCAL_BRIDGE)
        instances.insert(7, doomed)
        a = self.kill('a')
        doomed_files = sha256_tree(a.instance_dir(doomed))

        run = run_to_end(self, objects.Instance.get_by_host(self.ctx, 'a'))
        self.assertEqual(run_obj.FINISHED, run.status)
        items = {i.instance_uuid: i for i in run.instances()}
        self.assertEqual(sorted(i.uuid for i in instances), sorted(items))
        landed = {}
        for instance in instances:
            if instance.uuid == doomed.uuid:
                continue
            row = self.fresh(instance)
            self.assertIn(row.host, ('b', 'c'))
            self.assertEqual((run_obj.DONE, row.host),
                             (items[instance.uuid].outcome,
                              items[instance.uuid].host))
            self.assertTrue(self.hosts[row.host].running(instance))
            landed[row.host] = landed.get(row.host, 0) + 1
        self.assertEqual(19, sum(landed.values()))
        # The conductor spread them (most free memory first).
        self.assertEqual({'b', 'c'}, set(landed))
        # It failed on b, then on c (retried once, elsewhere); both
        # cleaned up and its disks on a are untouched.
        item = items[doomed.uuid]
        self.assertEqual((run_obj.FAILED, 'a'), (item.outcome, item.host))
        self.assertEqual(['b', 'c'],
                         sorted(a.target for a in item.attempt_list()))
        self.assertIn(LOCAL_BRIDGE, item.message)
        migration = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=doomed.uuid)[-1]
        fault = self.assertFailedOnSource(doomed, migration)
        self.assertIn(LOCAL_BRIDGE, fault.message)
        for name in ('b', 'c'):
            self.assertNoTrace(self.hosts[name], doomed)
        self.assertEqual(doomed_files,
                         sha256_tree(a.instance_dir(doomed)))
        statuses = [m.status for m in objects.Migration.get_by_filters(
            self.ctx, source_compute='a')]
        self.assertEqual((19, 2), (statuses.count(migration_obj.DONE),
                                   statuses.count(migration_obj.FAILED)))

        # a comes back: it removes the 19 copies, keeps the failed one.
        a = self.restart('a')
        for instance in instances:
            if instance.uuid == doomed.uuid:
                self.assertTrue(a.has_domain(instance))
            else:
                self.assertNoTrace(a, instance)
        statuses = [m.status for m in objects.Migration.get_by_filters(
            self.ctx, source_compute='a')]
        self.assertEqual((19, 2), (statuses.count(migration_obj.COMPLETED),
                                   statuses.count(migration_obj.FAILED)))

    def test_each_target_says_when_its_evacuation_ended(self):
        # With an hour between two reads of the rows, the run can only
        # end because each target told the conductors, landed or failed
        # (after its cleanup: the failure is decided from the rows).
        self.flags(host_evacuate_poll_interval=3600, group='conductor')
        self.flags(host_evacuate_workers=2, group='conductor')
        instances = [self.boot('a') for _ in range(3)]
        doomed = self.boot('a', bridge=LOCAL_BRIDGE)
        self.kill('a')
        run = run_to_end(self, objects.Instance.get_by_host(self.ctx, 'a'))
        self.assertEqual(run_obj.FINISHED, run.status)
        items = {i.instance_uuid: i for i in run.instances()}
        for instance in instances:
            row = self.fresh(instance)
            self.assertEqual((run_obj.DONE, row.host),
                             (items[instance.uuid].outcome,
                              items[instance.uuid].host))
            self.assertTrue(self.hosts[row.host].running(instance))
        self.assertEqual(run_obj.FAILED, items[doomed.uuid].outcome)
        self.assertEqual(['b', 'c'], sorted(
            a.target for a in items[doomed.uuid].attempt_list()))

    def test_a_stopping_conductor_interrupts_its_run(self):
        self.flags(host_evacuate_workers=1, group='conductor')
        instance = self.boot('a')
        self.kill('a')
        hold = self.hold_after_claim('b')
        run = run_obj.HostEvacuation.create(self.ctx, 'a', [instance],
                                            target_host='b')
        conductor_rpcapi.ConductorAPI().run_host_evacuation(
            self.ctx, run.uuid)
        self.wait_held(hold, 'b')
        # The conductor stops: its run says so.
        self.conductor_service.stop()
        run = run_obj.HostEvacuation.get_by_uuid(self.ctx, run.uuid)
        self.assertEqual(run_obj.INTERRUPTED, run.status)
        (item,) = run.instances()
        self.assertEqual(run_obj.IN_PROGRESS, item.outcome)
        hold.release()
        # The evacuation it had requested goes on without it.
        (migration,) = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)
        self.assertEqual(migration_obj.DONE,
                         self.wait_for_evacuation(migration).status)


class TestHostEvacuateServerGroup(harness.EvacuateTestCase):
    """Three members of an anti-affinity group on the failed host, two
    targets, all evacuated at once: one member per target, and the third
    stays where it is, whole, saying why."""

    def test_anti_affinity_members_evacuated_at_once(self):
        self.flags(host_evacuate_workers=3, group='conductor')
        members = [self.boot('a') for _ in range(3)]
        group = group_obj.InstanceGroup(
            name='spread', project_id=members[0].project_id,
            user_id=members[0].user_id, policy='anti-affinity').create()
        for member in members:
            group_obj.InstanceGroup.add_member(self.ctx, group.uuid,
                                               member.uuid)
        a = self.kill('a')
        files = {m.uuid: sha256_tree(a.instance_dir(m)) for m in members}

        items = {i.instance_uuid: i
                 for i in run_to_end(self, members).instances()}
        done = [m for m in members
                if items[m.uuid].outcome == run_obj.DONE]
        (left,) = [m for m in members
                   if items[m.uuid].outcome != run_obj.DONE]
        self.assertEqual(['b', 'c'], sorted(self.fresh(m).host
                                            for m in done))
        for member in done:
            self.assertTrue(self.hosts[self.fresh(member).host].running(
                member))
        # The third was refused by the group's policy: still on a with
        # its disks untouched, nothing of it on b or c.
        item = items[left.uuid]
        self.assertEqual((run_obj.FAILED, 'a'), (item.outcome, item.host))
        self.assertIn('Server group %s' % group.uuid, item.message)
        self.assertEqual('a', self.fresh(left).host)
        self.assertEqual(files[left.uuid], sha256_tree(a.instance_dir(left)))
        for name in ('b', 'c'):
            self.assertNoTrace(self.hosts[name], left)
        self.assertEqual({'a': 1, 'b': 1, 'c': 1},
                         group_obj.InstanceGroup.member_hosts(self.ctx,
                                                              group.uuid))
