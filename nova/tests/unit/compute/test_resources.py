"""A host's record in compute_nodes: the hypervisor's capacity, the
database's usage."""

import sqlalchemy as sa

from nova.compute import operation
from nova.compute import resources
from nova.db import api as db_api
from nova.model import hardware
from nova.model import vm_states
from nova import objects
from nova.tests.fixtures import compute as fixtures
from nova.tests.fixtures import libvirt_host as libvirt_fixtures
from nova.virt import driver as virt_driver
from nova.virt import fake

SMALL = objects.Flavor('1', 'small', 512, 1, 1)
LARGE = objects.Flavor('2', 'large', 2048, 2, 10, ephemeral_gb=5, swap=1)


class NoResourcesDriver(fake.FakeDriver):
    """A driver that cannot describe its node (the base class's answer)."""

    def get_available_resource(self, nodename):
        return virt_driver.ComputeDriver.get_available_resource(
            self, nodename)


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

    def test_usage_that_drifted_from_the_instances_is_corrected(self):
        instance = self.new_instance(flavor=LARGE)
        # A write that bypassed the objects (an operator's SQL): the
        # counters still hold the instance.
        with db_api.session() as session:
            session.execute(sa.text(
                'UPDATE instances SET deleted = :yes WHERE uuid = :uuid'),
                {'yes': True, 'uuid': instance.uuid})
        with self.assertLogs('nova.objects.host_usage', 'WARNING'):
            resources.update_available_resource(self.compute, self.context)
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
