"""What instances take on a host as the database sees it, and a host's
nodes summed: the one formula of target choice and of the compute
nodes' records."""

from nova.model import hardware
from nova.model import vm_states
from nova import objects
from nova.objects import migration as migration_obj
from nova.scheduler import usage
from nova.tests.fixtures import compute as fixtures
from nova.tests.fixtures import database as dbf

SMALL = objects.Flavor('1', 'small', 512, 1, 1)
LARGE = objects.Flavor('2', 'large', 2048, 2, 10, ephemeral_gb=5, swap=1)


class TestUsage(fixtures.ComputeTestCase):

    def test_sums_the_flavors_of_the_instances_on_the_host(self):
        self.new_instance(flavor=SMALL, vm_state=vm_states.ACTIVE)
        # A stopped instance keeps its share: it may start at any time.
        self.new_instance(flavor=LARGE, vm_state=vm_states.STOPPED)
        self.new_instance(flavor=LARGE, host='compute2', node='compute2')
        deleted = self.new_instance(flavor=LARGE)
        deleted.destroy()
        self.assertEqual(usage.Need(3, 2560, 1 + 16),
                         usage.usage(self.context, fixtures.HOST))

    def test_counts_evacuations_in_flight_to_the_host(self):
        coming = self.new_instance(flavor=LARGE, host='compute2',
                                   node='compute2')
        done = self.new_instance(flavor=LARGE, host='compute2',
                                 node='compute2')
        for instance, status in ((coming, migration_obj.PRE_MIGRATING),
                                 (done, migration_obj.FAILED)):
            objects.Migration(
                self.context, instance_uuid=instance.uuid,
                source_compute='compute2', dest_compute=fixtures.HOST,
                dest_node=fixtures.HOST,
                migration_type=migration_obj.EVACUATION,
                status=status).create()
        self.assertEqual(usage.Need.of(LARGE),
                         usage.usage(self.context, fixtures.HOST))
        self.assertEqual(usage.Need(), usage.usage(
            self.context, fixtures.HOST, exclude_instance=coming.uuid))

    def test_an_evacuation_in_flight_counts_once_and_only_while_live(self):
        # Landed on the target while its migration is still in flight:
        # the host's totals count it, the migration does not again.
        landed = self.new_instance(flavor=LARGE)
        # Two migrations in flight for one instance count it once;
        # a deleted instance's migration counts nothing.
        twice = self.new_instance(flavor=SMALL, host='compute2',
                                  node='compute2')
        gone = self.new_instance(flavor=LARGE, host='compute2',
                                 node='compute2')
        for instance in (landed, twice, twice, gone):
            objects.Migration(
                self.context, instance_uuid=instance.uuid,
                source_compute='compute2', dest_compute=fixtures.HOST,
                dest_node=fixtures.HOST,
                migration_type=migration_obj.EVACUATION,
                status=migration_obj.PRE_MIGRATING).create()
        gone.destroy()
        self.assertEqual(usage.Need.of(LARGE) + usage.Need.of(SMALL),
                         usage.usage(self.context, fixtures.HOST))
        self.assertEqual(usage.Need.of(LARGE) + usage.Need.of(SMALL),
                         usage.usages(self.context, [fixtures.HOST])[
                             fixtures.HOST])

    def test_usages_cost_the_same_reads_however_many_evacuations_run(self):
        hosts = [fixtures.HOST, 'compute2']

        def reads():
            with dbf.recorded_statements() as statements:
                usage.usages(self.context, hosts)
            return len(statements)
        before = reads()
        for n in range(5):
            instance = self.new_instance(flavor=SMALL, host='compute3',
                                         node='compute3')
            objects.Migration(
                self.context, instance_uuid=instance.uuid,
                source_compute='compute3', dest_compute=hosts[n % 2],
                dest_node=hosts[n % 2],
                migration_type=migration_obj.EVACUATION,
                status=migration_obj.ACCEPTED).create()
        self.assertEqual(before, reads())
        self.assertEqual(usage.Need(3, 1536, 3), usage.usages(
            self.context, hosts)[fixtures.HOST])

    def test_usages_of_many_hosts_are_each_hosts_usage(self):
        self.new_instance(flavor=SMALL)
        mine = self.new_instance(flavor=LARGE)
        self.new_instance(flavor=LARGE, host='compute2', node='compute2')
        coming = self.new_instance(flavor=SMALL, host='compute3',
                                   node='compute3')
        objects.Migration(
            self.context, instance_uuid=coming.uuid,
            source_compute='compute3', dest_compute='compute2',
            dest_node='compute2', migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED).create()
        hosts = [fixtures.HOST, 'compute2', 'compute3', 'empty']
        for exclude in (None, mine.uuid, coming.uuid):
            expected = {host: usage.usage(self.context, host,
                                          exclude_instance=exclude)
                        for host in hosts}
            self.assertEqual(expected, usage.usages(
                self.context, hosts, exclude_instance=exclude))
        self.assertEqual(usage.Need(), usage.usages(
            self.context, ['empty'])['empty'])
        self.assertEqual(usage.Need.of(LARGE) + usage.Need.of(SMALL),
                         usage.usages(self.context, hosts)['compute2'])
        self.assertEqual({}, usage.usages(self.context, []))

    def test_node_filter(self):
        self.new_instance(flavor=SMALL, node='n1')
        self.new_instance(flavor=LARGE, node='n2')
        self.assertEqual(usage.Need.of(SMALL), usage.usage(
            self.context, fixtures.HOST, node='n1'))

    def test_combined_sums_the_nodes_of_a_host(self):
        one = hardware.HostResources('n1', 4, 1024, 10, 1, 256, 2, 'QEMU')
        two = hardware.HostResources('n2', 2, 512, 5, 1, 128, 1, 'QEMU')
        self.assertIsNone(usage.combined([]))
        self.assertIs(one, usage.combined([one]))
        both = usage.combined([one, two])
        self.assertEqual((6, 1536, 15, 2, 384, 3),
                         (both.vcpus, both.memory_mb, both.local_gb,
                          both.vcpus_used, both.memory_mb_used,
                          both.local_gb_used))

    def test_the_columns_placement_sums_follow_the_flavor(self):
        instance = self.new_instance(flavor=SMALL)
        self.assertEqual(usage.Need.of(SMALL),
                         usage.usage(self.context, fixtures.HOST))
        instance.flavor = LARGE
        instance.save()
        self.assertEqual(usage.Need.of(LARGE),
                         usage.usage(self.context, fixtures.HOST))
        instance.flavor = None
        instance.save()
        self.assertEqual(usage.Need(),
                         usage.usage(self.context, fixtures.HOST))
