import functools
import os
import threading
from unittest import mock

import sqlalchemy as sa

from nova.compute import operation
from nova.compute import resources
from nova.conf import host_settings
from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.model import hardware
from nova import objects
from nova.objects import aggregate as aggregate_obj
from nova.objects import host_lease
from nova.objects import instance_group as group_obj
from nova.objects import migration as migration_obj
from nova.scheduler import target
from nova.scheduler import usage
from nova.tests import base
from nova.tests.fixtures import database as dbf
from nova.tests.fixtures import driver_contract as contract
from nova.virt import fake

ID_A = '11111111-1111-4111-8111-111111111111'
ID_B = '22222222-2222-4222-8222-222222222222'


def _capacity(memory_mb, vcpus=64, local_gb=1000):
    return hardware.HostResources(hypervisor_hostname='x', vcpus=vcpus,
                                  memory_mb=memory_mb, local_gb=local_gb)


class TargetTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.capacities = {}
        self.chooser = target.TargetChooser(
            lambda ctx, host: self.capacities.get(host))
        self.source = dbf.make_service(self.ctx, 'a', up=False,
                                       identity=ID_A)
        self.flavor = dbf.make_flavor(self.ctx, memory_mb=512, vcpus=1,
                                      root_gb=1)
        self.instance = dbf.make_instance(self.ctx, 'a', flavor=self.flavor)


class TestChoose(TargetTestCase):

    def test_only_up_enabled_hosts_other_than_the_source(self):
        dbf.make_service(self.ctx, 'down', up=False)
        dbf.make_service(self.ctx, 'forced', forced_down=True)
        dbf.make_service(self.ctx, 'disabled', disabled=True)
        dbf.make_service(self.ctx, 'b')
        self.assertEqual('b', self.chooser.choose(self.ctx, self.instance))

    def test_no_candidate_is_no_valid_host(self):
        dbf.make_service(self.ctx, 'down', up=False)
        with self.assertRaises(exception.NoValidHost):
            self.chooser.choose(self.ctx, self.instance)

    def test_host_without_room_is_skipped(self):
        dbf.make_service(self.ctx, 'b')
        dbf.make_service(self.ctx, 'c')
        self.capacities = {'b': _capacity(1024), 'c': _capacity(500)}
        # b already holds one 512 MiB instance: 512 left, just enough;
        # c is too small.
        dbf.make_instance(self.ctx, 'b', flavor=self.flavor)
        self.assertEqual('b', self.chooser.choose(self.ctx, self.instance))
        dbf.make_instance(self.ctx, 'b', flavor=self.flavor)
        with self.assertRaises(exception.NoValidHost):
            self.chooser.choose(self.ctx, self.instance)
        self.capacities['c'] = _capacity(600)
        self.assertEqual('c', self.chooser.choose(self.ctx, self.instance))

    def test_vcpus_and_disk_count_too(self):
        dbf.make_service(self.ctx, 'b')
        self.capacities = {'b': _capacity(10000, vcpus=0)}
        with self.assertRaises(exception.NoValidHost):
            self.chooser.choose(self.ctx, self.instance)
        self.capacities = {'b': _capacity(10000, local_gb=0)}
        with self.assertRaises(exception.NoValidHost):
            self.chooser.choose(self.ctx, self.instance)

    def test_allocation_ratios_apply(self):
        dbf.make_service(self.ctx, 'b')
        self.capacities = {'b': _capacity(10000, vcpus=1)}
        for _ in range(3):
            dbf.make_instance(self.ctx, 'b', flavor=self.flavor)
        # 1 physical CPU x 4.0 (the default) = 4 vCPUs: one more fits.
        self.assertEqual('b', self.chooser.choose(self.ctx, self.instance))
        self.flags(cpu_allocation_ratio=3.0, group='conductor')
        with self.assertRaises(exception.NoValidHost):
            self.chooser.choose(self.ctx, self.instance)

    def test_most_free_memory_wins_and_unknown_comes_last(self):
        dbf.make_service(self.ctx, 'b')
        dbf.make_service(self.ctx, 'c')
        dbf.make_service(self.ctx, 'unknown')
        self.capacities = {'b': _capacity(2048), 'c': _capacity(4096)}
        self.assertEqual('c', self.chooser.choose(self.ctx, self.instance))
        self.capacities = {'b': _capacity(100), 'c': _capacity(100)}
        self.assertEqual('unknown',
                         self.chooser.choose(self.ctx, self.instance))

    def test_explicit_shared_storage_filters_by_identity(self):
        dbf.make_service(self.ctx, 'b', identity=ID_B)
        dbf.make_service(self.ctx, 'shared', identity=ID_A)
        self.capacities = {'b': _capacity(8192), 'shared': _capacity(1024)}
        self.assertEqual('b', self.chooser.choose(self.ctx, self.instance))
        self.assertEqual('shared', self.chooser.choose(
            self.ctx, self.instance, on_shared_storage=True))
        self.assertEqual('b', self.chooser.choose(
            self.ctx, self.instance, on_shared_storage=False))

    def test_no_valid_host_names_the_hosts_the_storage_left_out(self):
        dbf.make_service(self.ctx, 'b', identity=ID_B)
        dbf.make_service(self.ctx, 'c', identity=ID_B)
        self.capacities = {'b': _capacity(8192), 'c': _capacity(8192)}
        with self.assertRaises(exception.NoValidHost) as caught:
            self.chooser.choose(self.ctx, self.instance,
                                on_shared_storage=True)
        self.assertIn('(0 candidates checked); left out because '
                      'onSharedStorage=True contradicts their recorded '
                      'storage identity: b, c', str(caught.exception))
        # Full hosts are not blamed on the storage.
        self.capacities = {'b': _capacity(1), 'c': _capacity(1)}
        with self.assertRaises(exception.NoValidHost) as caught:
            self.chooser.choose(self.ctx, self.instance,
                                on_shared_storage=False)
        self.assertIn('(2 candidates checked)', str(caught.exception))
        self.assertNotIn('onSharedStorage', str(caught.exception))


class TestClaim(TargetTestCase):

    def _migration(self):
        return objects.Migration(
            self.ctx, instance_uuid=self.instance.uuid, source_compute='a',
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED).create()

    def test_claim_records_the_target_and_counts_for_the_next_choice(self):
        dbf.make_service(self.ctx, 'b')
        dbf.make_service(self.ctx, 'c')
        self.capacities = {'b': _capacity(4096), 'c': _capacity(3900)}
        migration = self._migration()
        self.assertEqual('b', self.chooser.choose_and_claim(
            self.ctx, self.instance, migration))
        self.assertEqual('b', objects.Migration.get_by_id(
            self.ctx, migration.id).dest_compute)
        # The in-flight evacuation to b takes 512 MiB there, so another
        # instance now goes to c (3900 free > 3584 free).
        other = dbf.make_instance(self.ctx, 'a', flavor=self.flavor)
        self.assertEqual('c', self.chooser.choose(self.ctx, other))

    def test_named_host_is_validated(self):
        dbf.make_service(self.ctx, 'b', up=False)
        migration = self._migration()
        with self.assertRaises(exception.ComputeHostNotFound):
            self.chooser.choose_and_claim(self.ctx, self.instance,
                                          migration, host='nope')
        with self.assertRaises(exception.InvalidInput):
            self.chooser.choose_and_claim(self.ctx, self.instance,
                                          migration, host='a')
        # Up-ness of a named host is the API's check (force may skip it).
        self.assertEqual('b', self.chooser.choose_and_claim(
            self.ctx, self.instance, migration, host='b'))

    def test_validate_named_target_wants_it_up_unless_forced(self):
        dbf.make_service(self.ctx, 'b', up=False)
        with self.assertRaises(exception.ComputeServiceUnavailable):
            target.validate_named_target(self.ctx, self.instance, 'b',
                                         force=False)
        target.validate_named_target(self.ctx, self.instance, 'b',
                                     force=True)

    def test_place_new_creates_the_row_on_the_chosen_host(self):
        dbf.make_service(self.ctx, 'b')
        new = objects.Instance(self.ctx, display_name='n',
                               flavor=self.flavor)
        self.assertEqual('b', self.chooser.place_new(self.ctx, new))
        row = objects.Instance.get_by_uuid(self.ctx, new.uuid)
        self.assertEqual(('b', 'b'), (row.host, row.node))

    def _unbound_port(self, instance, mac):
        network = objects.Network(self.ctx, name='n-%s' % mac[-2:],
                                  bridge='br-%s' % mac[-2:]).create()
        return objects.Port(self.ctx, network_uuid=network.uuid,
                            instance_uuid=instance.uuid,
                            mac_address=mac).create()

    def test_place_new_writes_the_bound_ports_with_the_row(self):
        dbf.make_service(self.ctx, 'b')
        new = objects.Instance(self.ctx, display_name='n',
                               flavor=self.flavor)
        port = self._unbound_port(new, 'fa:16:3e:00:00:01')
        asked = []

        def bind(host):
            asked.append(host)
            port.binding_host = host
            return [port]

        self.assertEqual('b', self.chooser.place_new(self.ctx, new,
                                                     bind=bind))
        self.assertEqual(['b'], asked)
        self.assertEqual('b', objects.Port.get_by_uuid(
            self.ctx, port.uuid).binding_host)
        self.assertEqual('b', objects.Instance.get_by_uuid(
            self.ctx, new.uuid).host)

    def test_a_port_gone_under_place_new_leaves_no_row_and_no_lease(self):
        # The bound ports are written with the row: a port deleted between
        # its read and that write fails the whole transaction, the other
        # port's binding and the host's lease given back included.
        dbf.make_service(self.ctx, 'b')
        new = objects.Instance(self.ctx, display_name='n',
                               flavor=self.flavor)
        kept = self._unbound_port(new, 'fa:16:3e:00:00:01')
        gone = self._unbound_port(new, 'fa:16:3e:00:00:02')
        objects.Port.get_by_uuid(self.ctx, gone.uuid).destroy()

        def bind(host):
            for port in (kept, gone):
                port.binding_host = host
            return [kept, gone]

        with self.assertRaises(exception.PortNotFound):
            self.chooser.place_new(self.ctx, new, bind=bind)
        self.assertRaises(exception.InstanceNotFound,
                          objects.Instance.get_by_uuid, self.ctx, new.uuid)
        self.assertIsNone(objects.Port.get_by_uuid(
            self.ctx, kept.uuid).binding_host)
        self.assertIsNone(host_lease.holder_of(self.ctx, 'b'))

    def test_place_new_on_a_named_host_considers_only_that_one(self):
        # Microversion 2.74's host: chosen even where another host has
        # more room, refused when it cannot take the instance.
        dbf.make_service(self.ctx, 'b')
        dbf.make_service(self.ctx, 'c')
        self.capacities = {'b': _capacity(8192), 'c': _capacity(1024)}
        new = objects.Instance(self.ctx, display_name='n',
                               flavor=self.flavor)
        self.assertEqual('c', self.chooser.place_new(self.ctx, new,
                                                     only='c'))
        self.capacities['b'] = _capacity(256)
        full = objects.Instance(self.ctx, display_name='full',
                                flavor=self.flavor)
        with self.assertRaises(exception.NoValidHost):
            self.chooser.place_new(self.ctx, full, only='b')
        self.assertRaises(exception.InstanceNotFound,
                          objects.Instance.get_by_uuid, self.ctx, full.uuid)


class TestZones(TargetTestCase):
    """A create's zone keeps the instance there: placement and every
    evacuation after it."""

    def setUp(self):
        super().setUp()
        for host in ('b', 'c', 'd'):
            dbf.make_service(self.ctx, host)
        # c has the most room: the choice goes there unless a zone says no.
        self.capacities = {'b': _capacity(2048), 'c': _capacity(8192),
                           'd': _capacity(4096)}
        zone1 = aggregate_obj.Aggregate.create(self.ctx, 'rack1',
                                               {'availability_zone': 'az1'})
        for host in ('a', 'b', 'd'):
            aggregate_obj.Aggregate.add_host(self.ctx, zone1.id, host)

    def test_place_new_considers_only_the_zone_asked_for(self):
        new = objects.Instance(self.ctx, display_name='n',
                               flavor=self.flavor, availability_zone='az1')
        self.assertEqual('d', self.chooser.place_new(self.ctx, new))
        anywhere = objects.Instance(self.ctx, display_name='m',
                                    flavor=self.flavor)
        self.assertEqual('c', self.chooser.place_new(self.ctx, anywhere))

    def test_the_default_zone_is_the_hosts_in_no_zone(self):
        new = objects.Instance(self.ctx, display_name='n',
                               flavor=self.flavor, availability_zone='nova')
        self.assertEqual('c', self.chooser.place_new(self.ctx, new))

    def test_an_evacuation_keeps_to_the_zone_its_create_asked_for(self):
        self.instance.availability_zone = 'az1'
        self.instance.save()
        instance = objects.Instance.get_by_uuid(self.ctx, self.instance.uuid)
        self.assertEqual('d', self.chooser.choose(self.ctx, instance))
        with self.assertRaises(exception.NoValidHost) as caught:
            self.chooser.choose(self.ctx, instance, exclude=('b', 'd'))
        self.assertIn('availability zone az1', str(caught.exception))

    def test_an_instance_that_asked_for_no_zone_goes_anywhere(self):
        self.assertEqual('c', self.chooser.choose(self.ctx, self.instance))


class TestClaimsAcrossProcesses(TargetTestCase):
    """Two choosers, each with its own in-process ledger and locks, as
    nova-api and a conductor (or two conductors) have: the host lease alone
    keeps them from giving away one last slot twice."""

    def setUp(self):
        super().setUp()
        # Each chooser's first capacity read (which comes after its usage
        # read) waits for the other's, so both have read the host's usage
        # before either writes its claim: the race, every time.
        self.barrier = threading.Barrier(2, timeout=10)
        self.first_read = threading.local()

        def capacity(ctx, host):
            if not getattr(self.first_read, 'done', False):
                self.first_read.done = True
                self.barrier.wait()
            return self.capacities.get(host)

        self.api_chooser = target.TargetChooser(capacity)
        self.conductor_chooser = target.TargetChooser(capacity)

    def _race(self):
        migration = objects.Migration(
            self.ctx, instance_uuid=self.instance.uuid, source_compute='a',
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED).create()
        new = objects.Instance(self.ctx, display_name='new',
                               flavor=self.flavor)
        outcome = {}

        def run(name, func):
            try:
                outcome[name] = func()
            except exception.NoValidHost as e:
                outcome[name] = e
        threads = [
            threading.Thread(target=run, args=('evacuate', lambda: (
                self.conductor_chooser.choose_and_claim(
                    self.ctx, self.instance, migration)))),
            threading.Thread(target=run, args=('boot', lambda: (
                self.api_chooser.place_new(self.ctx, new))))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        return outcome

    def test_the_last_slot_goes_to_exactly_one(self):
        dbf.make_service(self.ctx, 'b')
        self.capacities = {'b': _capacity(512)}
        outcome = self._race()
        self.assertEqual(['b'], [v for v in outcome.values() if v == 'b'])
        [refused] = [v for v in outcome.values() if v != 'b']
        self.assertIsInstance(refused, exception.NoValidHost)
        self.assertIn('left out: b', str(refused))
        # The database agrees: b holds 512 MiB, its capacity.
        self.assertEqual(512, usage.usage(self.ctx, 'b').memory_mb)

    def test_the_loser_chooses_again_and_gets_the_next_host(self):
        dbf.make_service(self.ctx, 'b')
        dbf.make_service(self.ctx, 'c')
        # Equal room: both choose b (the name breaks the tie).
        self.capacities = {'b': _capacity(512), 'c': _capacity(512)}
        outcome = self._race()
        self.assertEqual({'b', 'c'}, set(outcome.values()))
        self.assertEqual(512, usage.usage(self.ctx, 'b').memory_mb)
        self.assertEqual(512, usage.usage(self.ctx, 'c').memory_mb)


class TestClaimsInOneProcess(TargetTestCase):
    """Many claims at once through one chooser, as a host-evacuate's
    workers in one conductor make them."""

    def _evacuations(self, count):
        pairs = []
        for _ in range(count):
            instance = dbf.make_instance(self.ctx, 'a', flavor=self.flavor)
            migration = objects.Migration(
                self.ctx, instance_uuid=instance.uuid, source_compute='a',
                migration_type=migration_obj.EVACUATION,
                status=migration_obj.ACCEPTED).create()
            pairs.append((instance, migration))
        return pairs

    def _claim_all(self, chooser, pairs):
        outcome = {}

        def run(n, instance, migration):
            outcome[n] = chooser.choose_and_claim(self.ctx, instance,
                                                  migration)
        threads = [threading.Thread(target=run, args=(n, i, m))
                   for n, (i, m) in enumerate(pairs)]
        for t in threads:
            t.start()
        return threads, outcome

    def test_choices_at_once_spread_over_the_hosts(self):
        for host in 'bcde':
            dbf.make_service(self.ctx, host)
            self.capacities[host] = _capacity(4096)
        # Every choice reads the database before any claim is written:
        # by that read alone all four would take b (the name breaks the
        # tie), and b has room for all four.
        barrier = threading.Barrier(4, timeout=30)
        first_read = threading.local()

        def capacity(ctx, host):
            if not getattr(first_read, 'done', False):
                first_read.done = True
                barrier.wait()
            return self.capacities.get(host)
        chooser = target.TargetChooser(capacity)
        pairs = self._evacuations(4)
        threads, outcome = self._claim_all(chooser, pairs)
        for t in threads:
            t.join(60)
        self.assertEqual(['b', 'c', 'd', 'e'], sorted(outcome.values()))
        for instance, migration in pairs:
            self.assertEqual(outcome[pairs.index((instance, migration))],
                             objects.Migration.get_by_id(
                                 self.ctx, migration.id).dest_compute)
        # Written, the claims are the database's to count: the ledger
        # forgot them.
        self.assertEqual([], chooser._in_flight.claims())

    def test_a_slow_claim_does_not_hold_up_claims_on_other_hosts(self):
        for host in 'bc':
            dbf.make_service(self.ctx, host)
            self.capacities[host] = _capacity(4096)
        under_lease = threading.Event()
        release = threading.Event()
        reads = threading.local()

        def capacity(ctx, host):
            # The first claim's read of b under b's lease (its second
            # read of b) stalls there until released.
            if host == 'b':
                reads.count = getattr(reads, 'count', 0) + 1
            if host == 'b' and reads.count == 2 and not release.is_set():
                under_lease.set()
                release.wait(60)
            return self.capacities.get(host)
        chooser = target.TargetChooser(capacity)
        (slow, slow_migration), (quick, quick_migration) = (
            self._evacuations(2))
        first, outcome = self._claim_all(chooser, [(slow, slow_migration)])
        self.assertTrue(under_lease.wait(30))
        try:
            # b's claim is being written: the second choice counts it and
            # takes c, while b's lease is still held.
            self.assertEqual('c', chooser.choose_and_claim(
                self.ctx, quick, quick_migration))
            self.assertIsNotNone(host_lease.holder_of(self.ctx, 'b'))
        finally:
            release.set()
            first[0].join(60)
        self.assertEqual({0: 'b'}, outcome)

    def test_a_groups_members_queue_in_the_process_not_on_its_lease(self):
        # Six members of one affinity group evacuated at once through one
        # chooser: their claims all take the group's lease, then b's.
        for host in 'bc':
            dbf.make_service(self.ctx, host)
        self.capacities = {'b': _capacity(8192), 'c': _capacity(4096)}
        pairs = self._evacuations(6)
        group = group_obj.InstanceGroup(name='g', project_id='p',
                                        user_id='u',
                                        policy='affinity').create()
        for instance, _migration in pairs:
            group_obj.InstanceGroup.add_member(self.ctx, group.uuid,
                                               instance.uuid)
        # A lease wait of 0: any claim of this process that found the
        # group's (or b's) lease taken by another of its claims would
        # fail at once with HostClaimBusy; they must wait for each other
        # in the process instead, however long a claim takes.
        hold = host_lease.hold
        barrier = threading.Barrier(6, timeout=30)
        outcome = {}

        def run(n, instance, migration):
            barrier.wait()
            try:
                outcome[n] = self.chooser.choose_and_claim(
                    self.ctx, instance, migration)
            except Exception as e:
                outcome[n] = e
        with mock.patch.object(host_lease, 'hold',
                               functools.partial(hold, wait=0)):
            threads = [threading.Thread(target=run, args=(n, i, m))
                       for n, (i, m) in enumerate(pairs)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
        self.assertEqual(['b'] * 6, [outcome[n] for n in range(6)])
        self.assertEqual({'a': 6, 'b': 6},
                         group_obj.InstanceGroup.member_hosts(self.ctx,
                                                              group.uuid))


class TestNeed(base.TestCase):

    def test_swap_rounds_up_to_a_gigabyte(self):
        flavor = objects.Flavor('1', 'f', 512, 2, 10, ephemeral_gb=5,
                                swap=1)
        self.assertEqual(target.Need(2, 512, 16), target.Need.of(flavor))


def _node(ctx, host, memory_mb, vcpus=64, local_gb=1000, node=None,
          memory_mb_used=0):
    return objects.ComputeNode.create_or_update(
        ctx, host, hardware.HostResources(
            hypervisor_hostname=node or host, vcpus=vcpus,
            memory_mb=memory_mb, local_gb=local_gb,
            memory_mb_used=memory_mb_used))


class TestDatabaseCapacity(base.TestCase):
    """The default provider: compute_nodes rows, whatever wrote them."""

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.chooser = target.TargetChooser()
        dbf.make_service(self.ctx, 'a', up=False)
        self.flavor = dbf.make_flavor(self.ctx, memory_mb=512, vcpus=1,
                                      root_gb=1)
        self.instance = dbf.make_instance(self.ctx, 'a', flavor=self.flavor)

    def test_no_row_is_unknown_and_several_nodes_are_summed(self):
        self.assertIsNone(target.database_capacity(self.ctx, 'b'))
        _node(self.ctx, 'b', 1024, vcpus=2, local_gb=10, node='n1')
        _node(self.ctx, 'b', 2048, vcpus=4, local_gb=20, node='n2')
        capacity = target.database_capacity(self.ctx, 'b')
        self.assertEqual((6, 3072, 30), (capacity.vcpus, capacity.memory_mb,
                                         capacity.local_gb))

    def test_rows_decide_room_and_hosts_without_one_come_last(self):
        dbf.make_service(self.ctx, 'b')
        dbf.make_service(self.ctx, 'c')
        dbf.make_service(self.ctx, 'norow')
        _node(self.ctx, 'b', 2048)
        _node(self.ctx, 'c', 4096)
        self.assertEqual('c', self.chooser.choose(self.ctx, self.instance))
        # Both known hosts full: the one whose capacity is unknown.
        _node(self.ctx, 'b', 100)
        _node(self.ctx, 'c', 100)
        self.assertEqual('norow',
                         self.chooser.choose(self.ctx, self.instance))

    def test_capacities_of_many_hosts_in_one_read(self):
        _node(self.ctx, 'b', 1024, vcpus=2, local_gb=10, node='n1')
        _node(self.ctx, 'b', 2048, vcpus=4, local_gb=20, node='n2')
        _node(self.ctx, 'c', 512)
        found = target.database_capacities(self.ctx, ['b', 'c', 'norow'])
        self.assertEqual({'b', 'c', 'norow'}, set(found))
        self.assertEqual((6, 3072, 30), (found['b'].vcpus,
                                         found['b'].memory_mb,
                                         found['b'].local_gb))
        self.assertEqual(512, found['c'].memory_mb)
        self.assertIsNone(found['norow'])

    def _statements_of_choice(self):
        with dbf.recorded_statements() as statements:
            self.chooser.choose(self.ctx, self.instance)
        return statements

    def test_a_choice_reads_the_same_whatever_the_number_of_hosts(self):
        def add_hosts(names):
            for name in names:
                dbf.make_service(self.ctx, name)
                _node(self.ctx, name, 4096)
                dbf.make_instance(self.ctx, name, flavor=self.flavor)
        add_hosts(['b', 'c'])
        few = self._statements_of_choice()
        add_hosts(['h%d' % n for n in range(20)])
        many = self._statements_of_choice()
        self.assertEqual(len(few), len(many), many)

    def test_a_choice_reads_the_allocation_ratios_once(self):
        # Not once per host, nor per comparison: reading an option cost
        # more than the rest of a host's arithmetic (a choice weighs every
        # host of the region).
        for n in range(20):
            dbf.make_service(self.ctx, 'h%d' % n)
            _node(self.ctx, 'h%d' % n, 4096 + n)
        chooser = target.TargetChooser()
        with mock.patch.object(target.AllocationRatios, 'configured',
                               wraps=target.AllocationRatios.configured
                               ) as configured:
            self.assertEqual('h19', chooser.choose(self.ctx, self.instance))
        self.assertEqual(1, configured.call_count)

    def test_a_choice_and_its_claim_read_in_one_transaction_each(self):
        for name in ('b', 'c'):
            dbf.make_service(self.ctx, name)
            _node(self.ctx, name, 4096)
        migration = objects.Migration(
            self.ctx, instance_uuid=self.instance.uuid, source_compute='a',
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED).create()
        chooser = target.TargetChooser()
        with dbf.recorded_transactions() as transactions, \
                dbf.committed_writes() as writes:
            chooser.choose_and_claim(self.ctx, self.instance, migration)
        reads = [t for t in transactions if t.lstrip().startswith('SELECT')]
        # The instance's group; the choice (services, usage,
        # evacuations arriving, capacities); under the lease the host's
        # capacity and usage again.
        self.assertEqual(3, len(reads), transactions)
        # Two writes: the lease taken, then the claim, which gives the
        # lease back in its own transaction.
        self.assertEqual([['INSERT INTO host_claim_leases'],
                          ['UPDATE migrations',
                           'DELETE FROM host_claim_leases']],
                         [[w.split(' WHERE')[0] for w in t]
                          for t in writes()])
        self.assertIsNone(host_lease.holder_of(self.ctx, 'b'))

    def test_a_new_instance_and_the_lease_given_back_commit_together(self):
        dbf.make_service(self.ctx, 'b')
        _node(self.ctx, 'b', 4096)
        new = objects.Instance(self.ctx, flavor=self.flavor,
                               vm_state='building')
        with dbf.committed_writes() as writes:
            self.assertEqual('b', target.TargetChooser().place_new(
                self.ctx, new, only='b'))
        self.assertEqual([['INSERT INTO host_claim_leases'],
                          ['INSERT INTO instances', 'INSERT INTO host_usage',
                           'DELETE FROM host_claim_leases']],
                         [[w.split(' WHERE')[0] for w in t]
                          for t in writes()])
        self.assertIsNone(host_lease.holder_of(self.ctx, 'b'))

    def test_a_claim_whose_lease_was_lost_is_not_written(self):
        # The claim stalled past its lease: another claimer took the lease
        # over (and may have read b's usage without this claim). The
        # claim rolls back and the choice goes on without b.
        for name in ('b', 'c'):
            dbf.make_service(self.ctx, name)
            _node(self.ctx, name, 4096 if name == 'b' else 2048)
        migration = objects.Migration(
            self.ctx, instance_uuid=self.instance.uuid, source_compute='a',
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED).create()
        other = '0f0e0d0c-0b0a-4909-8807-060504030201'
        save = objects.Migration.save

        def stalled(migration, **kwargs):
            if migration.dest_compute == 'b':
                with db_api.writing() as connection:
                    connection.execute(sa.update(
                        control_models.HostClaimLease.__table__).where(
                        control_models.HostClaimLease.host == 'b').values(
                        holder=other))
            return save(migration, **kwargs)
        with mock.patch.object(objects.Migration, 'save', stalled):
            self.assertEqual('c', target.TargetChooser().choose_and_claim(
                self.ctx, self.instance, migration))
        self.assertEqual('c', objects.Migration.get_by_id(
            self.ctx, migration.id).dest_compute)
        # The new holder keeps b's lease; c's went with its claim.
        self.assertEqual(other, host_lease.holder_of(self.ctx, 'b'))
        self.assertIsNone(host_lease.holder_of(self.ctx, 'c'))

    def test_a_new_instance_whose_lease_was_lost_binds_its_ports_elsewhere(
            self):
        # The create stalled past b's lease after its ports were bound to
        # b on the objects: the row, the binding and the lease's return
        # roll back together; the next host chosen gets the row and the
        # binding.
        for name in ('b', 'c'):
            dbf.make_service(self.ctx, name)
            _node(self.ctx, name, 4096 if name == 'b' else 2048)
        new = objects.Instance(self.ctx, flavor=self.flavor,
                               vm_state='building')
        network = objects.Network(self.ctx, name='n', bridge='br-n').create()
        port = objects.Port(self.ctx, network_uuid=network.uuid,
                            instance_uuid=new.uuid,
                            mac_address='fa:16:3e:00:00:01').create()
        other = '0f0e0d0c-0b0a-4909-8807-060504030201'
        asked = []

        def bind(host):
            asked.append(host)
            if host == 'b':
                with db_api.writing() as connection:
                    connection.execute(sa.update(
                        control_models.HostClaimLease.__table__).where(
                        control_models.HostClaimLease.host == 'b').values(
                        holder=other))
            port.binding_host = host
            return [port]

        self.assertEqual('c', target.TargetChooser().place_new(
            self.ctx, new, bind=bind))
        self.assertEqual(['b', 'c'], asked)
        self.assertEqual('c', objects.Instance.get_by_uuid(
            self.ctx, new.uuid).host)
        self.assertEqual('c', objects.Port.get_by_uuid(
            self.ctx, port.uuid).binding_host)
        self.assertEqual(other, host_lease.holder_of(self.ctx, 'b'))
        self.assertIsNone(host_lease.holder_of(self.ctx, 'c'))

    def test_usage_is_counted_now_not_taken_from_the_row(self):
        dbf.make_service(self.ctx, 'b')
        # The row says b is full (an old record); nothing is on b now.
        _node(self.ctx, 'b', 1024, memory_mb_used=1024)
        self.assertEqual('b', self.chooser.choose(self.ctx, self.instance))
        # Two instances placed since the row was written: b is full.
        dbf.make_instance(self.ctx, 'b', flavor=self.flavor)
        dbf.make_instance(self.ctx, 'b', flavor=self.flavor)
        with self.assertRaises(exception.NoValidHost):
            self.chooser.choose(self.ctx, self.instance)

    def test_in_flight_evacuations_still_count(self):
        dbf.make_service(self.ctx, 'b')
        dbf.make_service(self.ctx, 'c')
        _node(self.ctx, 'b', 1024)
        _node(self.ctx, 'c', 768)
        migration = objects.Migration(
            self.ctx, instance_uuid=self.instance.uuid, source_compute='a',
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED).create()
        self.assertEqual('b', self.chooser.choose_and_claim(
            self.ctx, self.instance, migration))
        # b: 1024 - 512 claimed = 512 free; c: 768 free.
        other = dbf.make_instance(self.ctx, 'a', flavor=self.flavor)
        self.assertEqual('c', self.chooser.choose(self.ctx, other))

    def test_a_compute_hosts_record_is_what_the_conductor_reads(self):
        # The compute side (nova.compute.resources) writes the row with a
        # driver of its own; the conductor here knows no driver at all.
        settings = host_settings.HostSettings(
            host='b', instances_path=os.path.join(self.tmp, 'b'))
        driver = fake.FakeDriver(contract.NetworkBackendVirtAPI(), settings)
        driver.init_host('b')
        resources.update_available_resource(
            operation.ComputeHost(host='b', settings=settings, driver=driver,
                                  virtapi=driver.virtapi), self.ctx)
        dbf.make_service(self.ctx, 'b')
        dbf.make_service(self.ctx, 'norow')
        self.assertEqual(16384, target.database_capacity(
            self.ctx, 'b').memory_mb)
        self.assertEqual('b', self.chooser.choose(self.ctx, self.instance))


class TestServerGroups(TargetTestCase):
    """Evacuating a member of a server group: the target keeps its
    group's policy, counting members placed and members on their way."""

    def setUp(self):
        super().setUp()
        for host in ('b', 'c', 'd'):
            dbf.make_service(self.ctx, host)
        # b has the most room, then c, then d: without a group, b wins.
        self.capacities = {'b': _capacity(8192), 'c': _capacity(4096),
                           'd': _capacity(2048)}

    def group(self, policy='anti-affinity', most=None, members=()):
        group = group_obj.InstanceGroup(
            name='g', project_id='p', user_id='u', policy=policy,
            max_server_per_host=most).create()
        for instance in (self.instance, *members):
            group_obj.InstanceGroup.add_member(self.ctx, group.uuid,
                                               instance.uuid)
        return group

    def _migration(self, instance=None):
        return objects.Migration(
            self.ctx, instance_uuid=(instance or self.instance).uuid,
            source_compute='a', migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED).create()

    def test_anti_affinity_leaves_out_hosts_with_a_member(self):
        self.group(members=[dbf.make_instance(self.ctx, 'b',
                                              flavor=self.flavor)])
        migration = self._migration()
        self.assertEqual('c', self.chooser.choose_and_claim(
            self.ctx, self.instance, migration))
        self.assertEqual('c', objects.Migration.get_by_id(
            self.ctx, migration.id).dest_compute)

    def test_a_member_on_its_way_counts_where_it_goes(self):
        other = dbf.make_instance(self.ctx, 'a', flavor=self.flavor)
        self.group(members=[other])
        self.assertEqual('b', self.chooser.choose_and_claim(
            self.ctx, other, self._migration(other)))
        # other is still on a (its rebuild has not run), going to b.
        self.assertEqual('c', self.chooser.choose_and_claim(
            self.ctx, self.instance, self._migration()))

    def test_no_host_left_refuses_and_claims_nothing(self):
        members = [dbf.make_instance(self.ctx, h, flavor=self.flavor)
                   for h in ('b', 'c', 'd')]
        group = self.group(members=members)
        migration = self._migration()
        with self.assertRaises(exception.GroupPolicyUnsatisfied) as caught:
            self.chooser.choose_and_claim(self.ctx, self.instance,
                                          migration)
        self.assertIsInstance(caught.exception, exception.NoValidHost)
        self.assertIn(group.uuid, str(caught.exception))
        self.assertIn('b, c, d', str(caught.exception))
        self.assertIsNone(objects.Migration.get_by_id(
            self.ctx, migration.id).dest_compute)

    def test_max_server_per_host(self):
        self.group(most=2, members=[dbf.make_instance(self.ctx, 'b',
                                                      flavor=self.flavor)])
        self.assertEqual('b', self.chooser.choose(
            self.ctx, self.instance,
            group=group_obj.InstanceGroup.get_by_instance_uuid(
                self.ctx, self.instance.uuid)))

    def test_a_deleted_member_counts_nowhere(self):
        gone = dbf.make_instance(self.ctx, 'b', flavor=self.flavor)
        self.group(members=[gone])
        gone.destroy()
        self.assertEqual('b', self.chooser.choose_and_claim(
            self.ctx, self.instance, self._migration()))

    def test_affinity_follows_the_members_not_on_the_failed_host(self):
        still_on_a = dbf.make_instance(self.ctx, 'a', flavor=self.flavor)
        self.group(policy='affinity', members=[still_on_a])
        # The only other member is on the failed host: anywhere will do.
        self.assertEqual('b', self.chooser.choose_and_claim(
            self.ctx, self.instance, self._migration()))
        # The next one follows it to b, which it is on its way to.
        self.assertEqual('b', self.chooser.choose_and_claim(
            self.ctx, still_on_a, self._migration(still_on_a)))

    def test_affinity_refuses_when_the_members_host_is_full(self):
        self.group(policy='affinity', members=[
            dbf.make_instance(self.ctx, 'd', flavor=self.flavor)])
        self.assertEqual('d', self.chooser.choose(
            self.ctx, self.instance,
            group=group_obj.InstanceGroup.get_by_instance_uuid(
                self.ctx, self.instance.uuid)))
        self.capacities['d'] = _capacity(512)
        with self.assertRaises(exception.GroupPolicyUnsatisfied) as caught:
            self.chooser.choose_and_claim(self.ctx, self.instance,
                                          self._migration())
        self.assertIn('on d', str(caught.exception))

    def test_soft_anti_affinity_prefers_but_never_refuses(self):
        self.group(policy='soft-anti-affinity', members=[
            dbf.make_instance(self.ctx, h, flavor=self.flavor)
            for h in ('b', 'c')])
        self.assertEqual('d', self.chooser.choose_and_claim(
            self.ctx, self.instance, self._migration()))
        # Every host has a member now (d: the one on its way): the one
        # with the most room takes the next.
        group_obj.InstanceGroup.add_member(
            self.ctx, group_obj.InstanceGroup.get_by_instance_uuid(
                self.ctx, self.instance.uuid).uuid,
            dbf.make_instance(self.ctx, 'a', flavor=self.flavor).uuid)
        other = objects.Instance.get_all(self.ctx, host='a')[-1]
        self.assertEqual('b', self.chooser.choose_and_claim(
            self.ctx, other, self._migration(other)))

    def test_a_named_target_may_not_break_a_hard_policy(self):
        self.group(members=[dbf.make_instance(self.ctx, 'b',
                                              flavor=self.flavor)])
        migration = self._migration()
        with self.assertRaises(exception.GroupPolicyUnsatisfied) as caught:
            self.chooser.choose_and_claim(self.ctx, self.instance,
                                          migration, host='b')
        self.assertIn('named target b', str(caught.exception))
        self.assertIsNone(objects.Migration.get_by_id(
            self.ctx, migration.id).dest_compute)
        self.assertEqual('c', self.chooser.choose_and_claim(
            self.ctx, self.instance, migration, host='c'))

    def test_place_new_joins_the_group_in_the_claim(self):
        group = self.group()
        new = objects.Instance(self.ctx, display_name='n',
                               flavor=self.flavor)
        self.assertEqual('b', self.chooser.place_new(self.ctx, new,
                                                     group=group))
        self.assertEqual(
            [self.instance.uuid, new.uuid],
            group_obj.InstanceGroup.get_by_uuid(self.ctx, group.uuid).members)
        full = objects.Instance(self.ctx, display_name='full',
                                flavor=self.flavor)
        for host in ('c', 'd'):
            group_obj.InstanceGroup.add_member(
                self.ctx, group.uuid,
                dbf.make_instance(self.ctx, host, flavor=self.flavor).uuid)
        with self.assertRaises(exception.GroupPolicyUnsatisfied):
            self.chooser.place_new(self.ctx, full, group=group)
        self.assertRaises(exception.InstanceNotFound,
                          objects.Instance.get_by_uuid, self.ctx, full.uuid)
        self.assertIsNone(group_obj.InstanceGroup.get_by_instance_uuid(
            self.ctx, full.uuid))

    def test_the_choice_is_made_under_the_groups_lease(self):
        group = self.group()
        held = []

        def capacity(ctx, host):
            held.append(host_lease.holder_of(
                ctx, target.GROUP_LEASE % group.uuid))
            return self.capacities.get(host)
        chooser = target.TargetChooser(capacity)
        chooser.choose_and_claim(self.ctx, self.instance, self._migration())
        self.assertTrue(held)
        self.assertNotIn(None, held)
        self.assertIsNone(host_lease.holder_of(
            self.ctx, target.GROUP_LEASE % group.uuid))

    # -- the group's lease, given back with the claim --------------------

    OTHER = '0f0e0d0c-0b0a-4909-8807-060504030201'

    def _take_over(self, key):
        """Another claimer takes the lease ``key`` over (it expired while
        this claim stalled)."""
        with db_api.writing() as connection:
            connection.execute(sa.update(
                control_models.HostClaimLease.__table__).where(
                control_models.HostClaimLease.host == key).values(
                holder=self.OTHER))

    def _stalled(self, cls, method, key):
        """``cls.method``, which first has ``key``'s lease taken over."""
        real = getattr(cls, method)

        def stalled(obj, **kwargs):
            self._take_over(key)
            return real(obj, **kwargs)
        return mock.patch.object(cls, method, stalled)

    def test_a_members_claim_gives_both_leases_back_in_its_transaction(self):
        group = self.group()
        migration = self._migration()
        with dbf.committed_writes() as writes:
            self.assertEqual('b', self.chooser.choose_and_claim(
                self.ctx, self.instance, migration))
        self.assertEqual([['INSERT INTO host_claim_leases'],
                          ['INSERT INTO host_claim_leases'],
                          ['UPDATE migrations',
                           'DELETE FROM host_claim_leases',
                           'DELETE FROM host_claim_leases']],
                         [[w.split(' WHERE')[0] for w in t]
                          for t in writes()])
        self.assertIsNone(host_lease.holder_of(
            self.ctx, target.GROUP_LEASE % group.uuid))
        self.assertIsNone(host_lease.holder_of(self.ctx, 'b'))

    def test_a_claim_whose_groups_lease_was_lost_is_not_written(self):
        # The claim stalled past the group's lease: another claimer of the
        # group took it over and read the members without this one. No
        # host would do: the claim is not written, and says why.
        group = self.group()
        key = target.GROUP_LEASE % group.uuid
        migration = self._migration()
        with self._stalled(objects.Migration, 'save', key):
            with self.assertRaises(exception.HostClaimLeaseLost) as caught:
                self.chooser.choose_and_claim(self.ctx, self.instance,
                                              migration)
        self.assertIn(group.uuid, str(caught.exception))
        self.assertIsNone(objects.Migration.get_by_id(
            self.ctx, migration.id).dest_compute)
        # The new holder keeps the group's lease; b's was given back.
        self.assertEqual(self.OTHER, host_lease.holder_of(self.ctx, key))
        self.assertIsNone(host_lease.holder_of(self.ctx, 'b'))

    def test_a_named_targets_claim_is_fenced_by_the_groups_lease(self):
        group = self.group()
        key = target.GROUP_LEASE % group.uuid
        migration = self._migration()
        with dbf.committed_writes() as writes:
            self.chooser.choose_and_claim(self.ctx, self.instance,
                                          migration, host='c')
        self.assertEqual([['INSERT INTO host_claim_leases'],
                          ['UPDATE migrations',
                           'DELETE FROM host_claim_leases']],
                         [[w.split(' WHERE')[0] for w in t]
                          for t in writes()])
        self.assertIsNone(host_lease.holder_of(self.ctx, key))
        other = self._migration(dbf.make_instance(self.ctx, 'a',
                                                  flavor=self.flavor))
        group_obj.InstanceGroup.add_member(self.ctx, group.uuid,
                                           other.instance_uuid)
        with self._stalled(objects.Migration, 'save', key):
            self.assertRaises(exception.HostClaimLeaseLost,
                              self.chooser.choose_and_claim, self.ctx,
                              objects.Instance.get_by_uuid(
                                  self.ctx, other.instance_uuid),
                              other, host='d')
        self.assertIsNone(objects.Migration.get_by_id(
            self.ctx, other.id).dest_compute)
        self.assertEqual(self.OTHER, host_lease.holder_of(self.ctx, key))

    def test_a_new_member_whose_groups_lease_was_lost_is_not_created(self):
        group = group_obj.InstanceGroup(
            name='g', project_id='p', user_id='u',
            policy='anti-affinity').create()
        key = target.GROUP_LEASE % group.uuid
        new = objects.Instance(self.ctx, flavor=self.flavor,
                               vm_state='building')
        with self._stalled(objects.Instance, 'create', key):
            self.assertRaises(exception.HostClaimLeaseLost,
                              self.chooser.place_new, self.ctx, new,
                              group=group)
        self.assertRaises(exception.InstanceNotFound,
                          objects.Instance.get_by_uuid, self.ctx, new.uuid)
        self.assertIsNone(group_obj.InstanceGroup.get_by_instance_uuid(
            self.ctx, new.uuid))
        self.assertEqual(self.OTHER, host_lease.holder_of(self.ctx, key))
        self.assertEqual([], [h for h in ('b', 'c', 'd')
                              if host_lease.holder_of(self.ctx, h)])
        # Created as before once the other claimer is done with it.
        with db_api.writing() as connection:
            connection.execute(sa.delete(
                control_models.HostClaimLease.__table__))
        new = objects.Instance(self.ctx, flavor=self.flavor,
                               vm_state='building')
        self.assertEqual('b', self.chooser.place_new(self.ctx, new,
                                                     group=group))
        self.assertIn(new.uuid, group_obj.InstanceGroup.get_by_instance_uuid(
            self.ctx, new.uuid).members)


class TestGroupMembersEvacuatedAtOnce(TargetTestCase):
    """Two anti-affinity members evacuated at the same moment by two
    choosers (two conductors): they never take the same host, though
    both would choose b on their own."""

    def test_two_members_two_hosts(self):
        for host in ('b', 'c'):
            dbf.make_service(self.ctx, host)
        self.capacities = {'b': _capacity(8192), 'c': _capacity(4096)}
        other = dbf.make_instance(self.ctx, 'a', flavor=self.flavor)
        group = group_obj.InstanceGroup(name='g', project_id='p',
                                        user_id='u',
                                        policy='anti-affinity').create()
        for instance in (self.instance, other):
            group_obj.InstanceGroup.add_member(self.ctx, group.uuid,
                                               instance.uuid)
        started = threading.Barrier(2, timeout=10)
        outcome = {}

        def evacuate(instance):
            chooser = target.TargetChooser(
                lambda ctx, host: self.capacities.get(host))
            migration = objects.Migration(
                self.ctx, instance_uuid=instance.uuid, source_compute='a',
                migration_type=migration_obj.EVACUATION,
                status=migration_obj.ACCEPTED).create()
            started.wait()
            outcome[instance.uuid] = chooser.choose_and_claim(
                self.ctx, instance, migration)
        threads = [threading.Thread(target=evacuate, args=(i,))
                   for i in (self.instance, other)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        self.assertEqual(['b', 'c'], sorted(outcome.values()))
        # Both still on a, one on its way to b, the other to c.
        self.assertEqual({'a': 2, 'b': 1, 'c': 1},
                         group_obj.InstanceGroup.member_hosts(self.ctx,
                                                              group.uuid))
