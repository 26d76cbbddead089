"""host-evacute: every instance of a failed host, several at a time."""

from nova.conductor import rpcapi as conductor_rpcapi
from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.functional import evacuate_harness as harness

# Only host a has it: an instance on it cannot be plugged anywhere else.
LOCAL_BRIDGE = 'br-only-a'


class TestHostEvacuate(harness.EvacuateTestCase):
    BRIDGES = {'a': (harness.BRIDGE, LOCAL_BRIDGE)}

    def test_twenty_instances_one_failure(self):
        self.flags(host_evacuate_workers=4, group='conductor')
        instances = [self.boot('a') for _ in range(19)]
        doomed = self.boot('a', bridge=LOCAL_BRIDGE)
        instances.insert(7, doomed)
        a = self.kill('a')
        doomed_files = sha256_tree(a.instance_dir(doomed))

        results = conductor_rpcapi.ConductorAPI(timeout=60).host_evacuate(
            self.ctx, 'a')

        self.assertEqual(sorted(i.uuid for i in instances),
                         sorted(r.instance_uuid for r in results))
        self.assertTrue(all(r.accepted for r in results), results)
        for result in results:
            self.wait_for_evacuation(objects.Migration.get_by_uuid(
                self.ctx, result.migration_uuid))
        landed = {}
        for instance in instances:
            if instance.uuid == doomed.uuid:
                continue
            row = self.fresh(instance)
            self.assertIn(row.host, ('b', 'c'))
            self.assertTrue(self.hosts[row.host].running(instance))
            landed[row.host] = landed.get(row.host, 0) + 1
        self.assertEqual(19, sum(landed.values()))
        # The conductor spread them (most free memory first).
        self.assertEqual({'b', 'c'}, set(landed))
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
        self.assertEqual((19, 1), (statuses.count(migration_obj.DONE),
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
        self.assertEqual((19, 1), (statuses.count(migration_obj.COMPLETED),
                                   statuses.count(migration_obj.FAILED)))

    def test_refused_while_the_host_is_up(self):
        self.boot('a')
        with self.assertRaises(exception.ComputeServiceStillUp):
            conductor_rpcapi.ConductorAPI(timeout=30).host_evacuate(
                self.ctx, 'a')
