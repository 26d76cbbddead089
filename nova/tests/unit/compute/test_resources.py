"""A host's record in compute_nodes: the hypervisor's capacity, the
database's usage."""

from nova.compute import operation
from nova.compute import resources
from nova.compute import vm_states
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.unit.compute import fixtures
from nova.tests.unit.virt.libvirt import fixtures as libvirt_fixtures
from nova.virt import driver as virt_driver
from nova.virt import fake
from nova.virt import hardware

SMALL = objects.Flavor('1', 'small', 512, 1, 1)
LARGE = objects.Flavor('2', 'large', 2048, 2, 10, ephemeral_gb=5, swap=1)


class NoResourcesDriver(fake.FakeDriver):
    """A driver that cannot describe its node (the base class's answer)."""

    def get_available_resource(self, nodename):
        return virt_driver.ComputeDriver.get_available_resource(
            self, nodename)


class TestUsage(fixtures.ComputeTestCase):

    def test_sums_the_flavors_of_the_instances_on_the_host(self):
        self.new_instance(flavor=SMALL, vm_state=vm_states.ACTIVE)
        # A stopped instance keeps its share: it may start at any time.
        self.new_instance(flavor=LARGE, vm_state=vm_states.STOPPED)
        self.new_instance(flavor=LARGE, host='compute2', node='compute2')
        deleted = self.new_instance(flavor=LARGE)
        deleted.destroy()
        self.assertEqual(resources.Need(3, 2560, 1 + 16),
                         resources.usage(self.context, fixtures.HOST))

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
        self.assertEqual(resources.Need.of(LARGE),
                         resources.usage(self.context, fixtures.HOST))
        self.assertEqual(resources.Need(), resources.usage(
            self.context, fixtures.HOST, exclude_instance=coming.uuid))

    def test_node_filter(self):
        self.new_instance(flavor=SMALL, node='n1')
        self.new_instance(flavor=LARGE, node='n2')
        self.assertEqual(resources.Need.of(SMALL), resources.usage(
            self.context, fixtures.HOST, node='n1'))

    def test_combined_sums_the_nodes_of_a_host(self):
        one = hardware.HostResources('n1', 4, 1024, 10, 1, 256, 2, 'QEMU')
        two = hardware.HostResources('n2', 2, 512, 5, 1, 128, 1, 'QEMU')
        self.assertIsNone(resources.combined([]))
        self.assertIs(one, resources.combined([one]))
        both = resources.combined([one, two])
        self.assertEqual((6, 1536, 15, 2, 384, 3),
                         (both.vcpus, both.memory_mb, both.local_gb,
                          both.vcpus_used, both.memory_mb_used,
                          both.local_gb_used))


class TestUpdateAvailableResource(fixtures.ComputeTestCase):

    def nodes(self, host=fixtures.HOST):
        return [(n.hypervisor_hostname, n.vcpus, n.memory_mb, n.local_gb,
                 n.vcpus_used, n.memory_mb_used, n.local_gb_used)
                for n in objects.ComputeNode.get_by_host(self.context, host)]

    def test_records_capacity_from_the_driver_and_usage_from_the_db(self):
        # The guest runs on the hypervisor; the other instance has no guest
        # yet (a claimed evacuation, say) but already counts.
        self.active_instance()
        self.new_instance(flavor=LARGE, vm_state=vm_states.STOPPED)
        written = resources.update_available_resource(self.compute,
                                                      self.context)
        self.assertEqual([fixtures.HOST],
                         [n.hypervisor_hostname for n in written])
        # FakeDriver: 8 vCPUs, 16384 MiB, 200 GiB. The instance built by
        # active_instance() has no flavor, so it counts as nothing.
        self.assertEqual([(fixtures.HOST, 8, 16384, 200, 2, 2048, 16)],
                         self.nodes())
        self.assertEqual('fake', written[0].hypervisor_type)

    def test_a_second_run_updates_the_same_row(self):
        instance = self.new_instance(flavor=LARGE)
        first = resources.update_available_resource(self.compute,
                                                    self.context)
        instance.destroy()
        second = resources.update_available_resource(self.compute,
                                                     self.context)
        self.assertEqual(first[0].id, second[0].id)
        self.assertEqual([(fixtures.HOST, 8, 16384, 200, 0, 0, 0)],
                         self.nodes())

    def test_nodes_the_driver_no_longer_reports_are_removed(self):
        stale = hardware.HostResources('old-name', 1, 1, 1)
        objects.ComputeNode.create_or_update(self.context, fixtures.HOST,
                                             stale)
        other = objects.ComputeNode.create_or_update(self.context,
                                                     'compute2', stale)
        resources.update_available_resource(self.compute, self.context)
        self.assertEqual([fixtures.HOST], [n[0] for n in self.nodes()])
        # Another host's rows are never touched.
        self.assertEqual([other.id], [n.id for n in objects.ComputeNode.
                                      get_by_host(self.context,
                                                  'compute2')])

    def test_driver_that_cannot_report_keeps_the_previous_row(self):
        resources.update_available_resource(self.compute, self.context)
        driver = NoResourcesDriver(self.virtapi, self.settings)
        compute = operation.ComputeHost(host=fixtures.HOST,
                                        settings=self.settings,
                                        driver=driver, virtapi=self.virtapi)
        self.assertEqual([], resources.update_available_resource(
            compute, self.context))
        self.assertEqual([(fixtures.HOST, 8, 16384, 200, 0, 0, 0)],
                         self.nodes())

    def test_libvirt_node_capacity(self):
        host = libvirt_fixtures.make_host(self.tmp, 'lv1')
        self.addCleanup(host.close)
        compute = operation.ComputeHost(host='lv1', settings=host.settings,
                                        driver=host.driver,
                                        virtapi=host.virtapi)
        self.new_instance(flavor=SMALL, host='lv1', node='lv1')
        resources.update_available_resource(compute, self.context)
        (node,) = objects.ComputeNode.get_by_host(self.context, 'lv1')
        # The test driver's node file: 4 CPUs, 8192 MiB. The hypervisor
        # has no guest; the database's instance counts.
        self.assertEqual(('lv1', 4, 8192, 1, 512, 'TEST'),
                         (node.hypervisor_hostname, node.vcpus,
                          node.memory_mb, node.vcpus_used,
                          node.memory_mb_used, node.hypervisor_type))
        self.assertGreater(node.local_gb, 0)
