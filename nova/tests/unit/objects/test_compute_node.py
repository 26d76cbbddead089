"""Compute node rows: upsert by (host, node), reads, RPC form."""

import threading

from nova import context
from nova.model import hardware
from nova import objects
from nova.objects import base as obj_base
from nova.tests import base


def _resources(node='node1', vcpus=4, memory_mb=8192, local_gb=100,
               used=(0, 0, 0), hypervisor_type='QEMU'):
    return hardware.HostResources(
        hypervisor_hostname=node, vcpus=vcpus, memory_mb=memory_mb,
        local_gb=local_gb, vcpus_used=used[0], memory_mb_used=used[1],
        local_gb_used=used[2], hypervisor_type=hypervisor_type)


class ComputeNodeTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()

    def test_create_then_read_back_as_host_resources(self):
        resources = _resources(used=(2, 1024, 10))
        node = objects.ComputeNode.create_or_update(self.ctx, 'h1',
                                                    resources)
        self.assertIsNotNone(node.id)
        self.assertEqual(('h1', 'node1'),
                         (node.host, node.hypervisor_hostname))
        rows = objects.ComputeNode.get_by_host(self.ctx, 'h1')
        self.assertEqual([node.id], [r.id for r in rows])
        self.assertEqual(resources, rows[0].to_host_resources())
        self.assertIsNotNone(rows[0].created_at)

    def test_same_host_and_node_updates_the_row_in_place(self):
        first = objects.ComputeNode.create_or_update(
            self.ctx, 'h1', _resources(memory_mb=8192))
        second = objects.ComputeNode.create_or_update(
            self.ctx, 'h1', _resources(memory_mb=4096, used=(1, 512, 1)))
        self.assertEqual(first.id, second.id)
        rows = objects.ComputeNode.get_all(self.ctx)
        self.assertEqual(1, len(rows))
        self.assertEqual((4096, 1, 512, 1),
                         (rows[0].memory_mb, rows[0].vcpus_used,
                          rows[0].memory_mb_used, rows[0].local_gb_used))

    def test_rows_are_per_host_and_node(self):
        objects.ComputeNode.create_or_update(self.ctx, 'h2',
                                             _resources('n1'))
        objects.ComputeNode.create_or_update(self.ctx, 'h1',
                                             _resources('n2'))
        objects.ComputeNode.create_or_update(self.ctx, 'h1',
                                             _resources('n1'))
        # The same node name on another host is another row.
        objects.ComputeNode.create_or_update(self.ctx, 'h2',
                                             _resources('n2'))
        self.assertEqual(
            [('h1', 'n1'), ('h1', 'n2'), ('h2', 'n1'), ('h2', 'n2')],
            [(n.host, n.hypervisor_hostname)
             for n in objects.ComputeNode.get_all(self.ctx)])
        self.assertEqual(
            ['n1', 'n2'],
            [n.hypervisor_hostname
             for n in objects.ComputeNode.get_by_host(self.ctx, 'h1')])
        self.assertEqual([], objects.ComputeNode.get_by_host(self.ctx, 'h3'))

    def test_capacities_of_hosts_as_read_from_the_objects(self):
        for host, node, hv_type in (('h2', 'n1', 'QEMU'), ('h1', 'n2', ''),
                                    ('h1', 'n1', 'QEMU'), ('h3', 'n1', 'x')):
            objects.ComputeNode.create_or_update(
                self.ctx, host, _resources(node, used=(1, 2, 3),
                                           hypervisor_type=hv_type))
        self.assertEqual(
            [(n.host, n.to_host_resources())
             for n in objects.ComputeNode.get_all(self.ctx)
             if n.host in ('h1', 'h2')],
            objects.ComputeNode.capacities_by_hosts(self.ctx,
                                                    ['h2', 'h1', 'h9']))
        self.assertEqual(
            [], objects.ComputeNode.capacities_by_hosts(self.ctx, []))

    def test_empty_hypervisor_type_is_stored_as_null(self):
        node = objects.ComputeNode.create_or_update(
            self.ctx, 'h1', _resources(hypervisor_type=''))
        self.assertIsNone(node.hypervisor_type)
        self.assertEqual('', node.to_host_resources().hypervisor_type)

    def test_destroy_removes_only_that_row_and_is_idempotent(self):
        gone = objects.ComputeNode.create_or_update(self.ctx, 'h1',
                                                    _resources('n1'))
        kept = objects.ComputeNode.create_or_update(self.ctx, 'h1',
                                                    _resources('n2'))
        gone.destroy()
        gone.destroy()
        self.assertEqual([kept.id], [
            n.id for n in objects.ComputeNode.get_all(self.ctx)])

    def test_concurrent_writers_of_a_new_node_make_one_row(self):
        errors = []
        barrier = threading.Barrier(6)

        def write(memory_mb):
            try:
                barrier.wait()
                objects.ComputeNode.create_or_update(
                    self.ctx, 'h1', _resources(memory_mb=memory_mb))
            except Exception as e:   # reported below
                errors.append(e)

        threads = [threading.Thread(target=write, args=(1024 * (i + 1),))
                   for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([], errors)
        rows = objects.ComputeNode.get_all(self.ctx)
        self.assertEqual(1, len(rows))
        self.assertIn(rows[0].memory_mb, [1024 * (i + 1) for i in range(6)])

    def test_rpc_round_trip(self):
        node = objects.ComputeNode.create_or_update(self.ctx, 'h1',
                                                    _resources())
        copy = obj_base.obj_from_primitive(
            self.ctx, obj_base.obj_to_primitive(node))
        self.assertIsInstance(copy, objects.ComputeNode)
        self.assertEqual(node.to_dict(), copy.to_dict())
        self.assertEqual(node.to_host_resources(), copy.to_host_resources())
