"""The request side of server operations, on a real SQLite database.

The compute and conductor services a request is handed to are not part of
these tests: a recorder stands in for their RPC clients and keeps what was
cast (``nova/tests/functional`` runs the real services).
"""

import threading

import sqlalchemy as sa

from nova.compute import api as compute_api
from nova.compute import evacuation_states
from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.model import external_event
from nova.model import task_states
from nova.model import vm_states
from nova.network import api as network_api_mod
from nova import objects
from nova.objects import instance_group as group_obj
from nova.objects import migration as migration_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf
from nova.tests.fixtures import libvirt_host as libvirt_fixtures

ID_A = '11111111-1111-4111-8111-111111111111'
ID_B = '22222222-2222-4222-8222-222222222222'


class Recorder:
    """Stands in for an RPC client: records each cast; can fail them."""

    def __init__(self):
        self.calls = []
        self.fail_with = None

    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(name)

        def cast(ctxt, *args, **kwargs):
            self.calls.append((name, args, kwargs))
            if self.fail_with is not None:
                raise self.fail_with
        return cast

    def names(self):
        return [name for name, _, _ in self.calls]


class ClaimedThenFailing:
    """A conductor client whose cast reached a target that claimed the
    evacuation, and then raised all the same (a lost reply)."""

    def evacuate_instance(self, ctxt, instance, migration, host=None,
                          on_shared_storage=None):
        evacuation_states.advance(migration, evacuation_states.PRE_MIGRATING,
                                  evacuation_states.TARGET)
        raise exception.NoValidHost(reason='the reply was lost')


class APITestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.compute = Recorder()
        self.conductor = Recorder()
        self.api = compute_api.API(self.compute, self.conductor)
        self.service_a = dbf.make_service(self.ctx, 'a', identity=ID_A)
        self.service_b = dbf.make_service(self.ctx, 'b', identity=ID_B)

    def fresh(self, instance):
        return objects.Instance.get_by_uuid(self.ctx, instance.uuid,
                                            read_deleted='yes')

    def actions(self, instance):
        return [a.action for a in objects.InstanceAction.get_by_instance_uuid(
            self.ctx, instance.uuid)]

    def migrations(self, instance):
        return objects.Migration.get_by_filters(self.ctx,
                                                instance_uuid=instance.uuid)


class TestEvacuate(APITestCase):

    def setUp(self):
        super().setUp()
        dbf.set_down(self.service_a)
        self.instance = dbf.make_instance(self.ctx, 'a')

    def test_accepted_evacuation_writes_migration_action_and_casts(self):
        migration = self.api.evacuate(self.ctx, self.instance, host='b',
                                      on_shared_storage=False)
        self.assertEqual(task_states.REBUILDING,
                         self.fresh(self.instance).task_state)
        row = objects.Migration.get_by_id(self.ctx, migration.id)
        self.assertEqual(('a', 'b', 'evacuation', 'accepted'),
                         (row.source_compute, row.dest_compute,
                          row.migration_type, row.status))
        self.assertEqual(['evacuate'], self.actions(self.instance))
        name, args, kwargs = self.conductor.calls[0]
        self.assertEqual('evacuate_instance', name)
        self.assertEqual(self.instance.uuid, args[0].uuid)
        self.assertEqual(migration.id, args[1].id)
        self.assertEqual({'host': 'b', 'on_shared_storage': False}, kwargs)

    def test_refused_while_the_source_is_up(self):
        dbf.set_up(self.service_a)
        with self.assertRaises(exception.ComputeServiceStillUp):
            self.api.evacuate(self.ctx, self.instance)
        self.assertIsNone(self.fresh(self.instance).task_state)
        self.assertEqual([], self.migrations(self.instance))

    def test_forced_down_source_may_be_evacuated_at_once(self):
        dbf.set_up(self.service_a)
        self.service_a.forced_down = True
        self.service_a.save()
        self.api.evacuate(self.ctx, self.instance)
        self.assertEqual(['evacuate_instance'], self.conductor.names())

    def test_a_stale_read_never_evacuates_from_a_host_it_left(self):
        # The request read the instance on 'a'; meanwhile an evacuation
        # moved it to 'b' and ended (no task, same vm_state). Taking it by
        # its states alone would start a second evacuation from 'a', a
        # host that no longer owns it: two guests of one instance.
        stale = objects.Instance.get_by_uuid(self.ctx, self.instance.uuid)
        moved = self.fresh(self.instance)
        moved.host = moved.node = 'b'
        moved.save()
        dbf.set_down(self.service_b)
        with self.assertRaises(exception.InstanceNotOnThisHost):
            self.api.evacuate(self.ctx, stale)
        row = self.fresh(self.instance)
        self.assertEqual(('b', None), (row.host, row.task_state))
        self.assertEqual([], self.migrations(self.instance))
        self.assertEqual([], self.actions(self.instance))
        self.assertEqual([], self.conductor.names())

    def test_vm_states_of_the_table(self):
        for vm_state, allowed in ((vm_states.ACTIVE, True),
                                  (vm_states.STOPPED, True),
                                  (vm_states.ERROR, True),
                                  (vm_states.SUSPENDED, False),
                                  (vm_states.BUILDING, False)):
            instance = dbf.make_instance(self.ctx, 'a', vm_state=vm_state)
            if allowed:
                self.api.evacuate(self.ctx, instance)
            else:
                with self.assertRaises(exception.InstanceInvalidState):
                    self.api.evacuate(self.ctx, instance)
                self.assertEqual([], self.migrations(instance))

    def test_named_host_must_exist_differ_and_be_up_unless_forced(self):
        with self.assertRaises(exception.ComputeHostNotFound):
            self.api.evacuate(self.ctx, self.instance, host='nowhere')
        with self.assertRaises(exception.InvalidInput):
            self.api.evacuate(self.ctx, self.instance, host='a')
        dbf.set_down(self.service_b)
        with self.assertRaises(exception.ComputeServiceUnavailable):
            self.api.evacuate(self.ctx, self.instance, host='b')
        self.assertEqual([], self.migrations(self.instance))
        self.api.evacuate(self.ctx, self.instance, host='b', force=True)
        self.assertEqual(1, len(self.migrations(self.instance)))

    def test_named_host_contradicting_on_shared_storage_is_refused(self):
        with self.assertRaises(exception.InvalidSharedStorage) as cm:
            self.api.evacuate(self.ctx, self.instance, host='b',
                              on_shared_storage=True)
        self.assertIn(ID_A, str(cm.exception))
        self.assertIn(ID_B, str(cm.exception))
        self.assertIsNone(self.fresh(self.instance).task_state)
        self.assertEqual([], self.migrations(self.instance))

    def test_second_request_with_a_stale_copy_gets_a_conflict(self):
        stale = objects.Instance.get_by_uuid(self.ctx, self.instance.uuid)
        self.api.evacuate(self.ctx, self.instance)
        with self.assertRaises(exception.UnexpectedTaskStateError) as cm:
            self.api.evacuate(self.ctx, stale)
        self.assertEqual(409, cm.exception.code)
        self.assertEqual(1, len(self.migrations(self.instance)))
        self.assertEqual(['evacuate'], self.actions(self.instance))
        self.assertEqual(1, len(self.conductor.calls))

    def test_concurrent_requests_exactly_one_wins(self):
        copies = [objects.Instance.get_by_uuid(self.ctx, self.instance.uuid)
                  for _ in range(6)]
        start = threading.Barrier(len(copies))
        outcome = []

        def request(copy):
            start.wait()
            try:
                self.api.evacuate(dbf.admin_context(), copy)
                outcome.append('won')
            except exception.Conflict:
                outcome.append('conflict')

        threads = [threading.Thread(target=request, args=(c,))
                   for c in copies]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual((1, 5), (outcome.count('won'),
                                  outcome.count('conflict')))
        self.assertEqual(1, len(self.migrations(self.instance)))
        self.assertEqual(1, len(self.conductor.calls))

    def test_failed_hand_off_releases_the_instance(self):
        self.conductor.fail_with = exception.NoValidHost(reason='none')
        with self.assertRaises(exception.NoValidHost):
            self.api.evacuate(self.ctx, self.instance)
        self.assertIsNone(self.fresh(self.instance).task_state)
        self.assertEqual([migration_obj.FAILED],
                         [m.status for m in self.migrations(self.instance)])
        # Ended like every early end: with a fault saying why.
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, self.instance.uuid)
        self.assertIn('none', fault.message)
        # And it can be asked again.
        self.conductor.fail_with = None
        self.api.evacuate(self.ctx, self.fresh(self.instance))

    def test_a_hand_off_a_target_took_meanwhile_is_the_targets(self):
        # The cast raised, but the conductor had passed it on and the
        # target claimed it: the evacuation is the target's, the API
        # leaves the instance and the migration alone.
        api = compute_api.API(self.compute, ClaimedThenFailing())
        with self.assertRaises(exception.NoValidHost):
            api.evacuate(self.ctx, self.instance, host='b')
        self.assertEqual(task_states.REBUILDING,
                         self.fresh(self.instance).task_state)
        self.assertEqual([migration_obj.PRE_MIGRATING],
                         [m.status for m in self.migrations(self.instance)])
        self.assertIsNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, self.instance.uuid))

    def request_evacuation_at(self, n):
        """Request an evacuation of ``self.instance`` from another thread
        (and wait for its answer) just before the ``n``-th read this
        thread sends the database: at every point between two of its
        transactions in turn (a write transaction holds SQLite's lock, so
        nothing can come between its statements). A list that holds the
        request's outcome once it was made."""
        engine = db_api.get_engine()
        me = threading.current_thread()
        reads = []
        outcome = []

        def request():
            try:
                self.api.evacuate(dbf.admin_context(),
                                  self.fresh(self.instance), host='b')
                outcome.append('accepted')
            except (exception.InstanceInvalidState, exception.Conflict):
                outcome.append('refused')

        def before(conn, cursor, statement, *args):
            # Reads of read-only sessions only (the project's own flag).
            if (threading.current_thread() is not me or not
                    conn.get_execution_options().get(db_api._READ_ONLY)):
                return
            reads.append(statement)
            if len(reads) == n + 1:
                thread = threading.Thread(target=request)
                thread.start()
                thread.join()

        sa.event.listen(engine, 'before_cursor_execute', before)
        self.addCleanup(sa.event.remove, engine, 'before_cursor_execute',
                        before)
        return outcome

    def test_reset_state_and_an_evacuation_requested_meanwhile(self):
        # Wherever the request falls while reset-state runs, the instance
        # is rebuilding exactly when an evacuation of it is in progress:
        # never a migration failed by the reset with its task left.
        for start in ('evacuating', 'idle'):
            for n in range(10):
                with self.subTest(start=start, n=n):
                    self.instance = dbf.make_instance(self.ctx, 'a')
                    old = None
                    if start == 'evacuating':
                        old = self.api.evacuate(self.ctx, self.instance,
                                                host='b')
                    outcome = self.request_evacuation_at(n)
                    self.api.reset_state(dbf.admin_context(),
                                         self.fresh(self.instance), 'active')
                    if not outcome:
                        break           # the reset made fewer reads
                    row = self.fresh(self.instance)
                    statuses = [m.status
                                for m in self.migrations(self.instance)]
                    in_progress = set(statuses) & set(
                        migration_obj.IN_PROGRESS)
                    self.assertEqual(
                        task_states.REBUILDING if in_progress else None,
                        row.task_state, (outcome, statuses))
                    if old is not None:
                        self.assertEqual(
                            migration_obj.FAILED,
                            objects.Migration.get_by_id(
                                self.ctx, old.id).status)
        self.assertGreater(n, 0)


class TestLifecycle(APITestCase):

    def setUp(self):
        super().setUp()
        self.instance = dbf.make_instance(self.ctx, 'a')

    def test_stop_start_suspend_resume_reboot_cast_with_task_states(self):
        for method, cast, task, vm_state_after_cast in (
                ('stop', 'stop_instance', task_states.POWERING_OFF,
                 vm_states.STOPPED),
                ('start', 'start_instance', task_states.POWERING_ON,
                 vm_states.ACTIVE),
                ('suspend', 'suspend_instance', task_states.SUSPENDING,
                 vm_states.SUSPENDED),
                ('resume', 'resume_instance', task_states.RESUMING,
                 vm_states.ACTIVE)):
            instance = self.fresh(self.instance)
            getattr(self.api, method)(self.ctx, instance)
            self.assertEqual(cast, self.compute.names()[-1])
            self.assertEqual(task, self.fresh(instance).task_state)
            # What the compute host would do when it finishes.
            instance.vm_state = vm_state_after_cast
            instance.task_state = None
            instance.save()
        self.api.reboot(self.ctx, self.fresh(self.instance), 'hard')
        name, args, _ = self.compute.calls[-1]
        self.assertEqual(('reboot_instance', 'HARD'), (name, args[1]))
        self.assertEqual(task_states.REBOOTING_HARD,
                         self.fresh(self.instance).task_state)
        self.assertEqual(['reboot', 'resume', 'suspend', 'start', 'stop'],
                         self.actions(self.instance))

    def test_state_table_refuses_and_nothing_is_cast(self):
        with self.assertRaises(exception.InstanceInvalidState):
            self.api.start(self.ctx, self.instance)      # it is active
        with self.assertRaises(exception.InstanceInvalidState):
            self.api.resume(self.ctx, self.instance)
        self.assertEqual([], self.compute.calls)
        self.assertEqual([], self.actions(self.instance))

    def test_two_stops_one_conflict(self):
        stale = self.fresh(self.instance)
        self.api.stop(self.ctx, self.instance)
        with self.assertRaises(exception.Conflict):
            self.api.stop(self.ctx, stale)
        self.assertEqual(['stop_instance'], self.compute.names())

    def test_bad_reboot_type(self):
        with self.assertRaises(exception.InvalidInput):
            self.api.reboot(self.ctx, self.instance, 'WARM')

    def test_failed_cast_clears_the_task(self):
        self.compute.fail_with = RuntimeError('bus down')
        with self.assertRaises(RuntimeError):
            self.api.stop(self.ctx, self.instance)
        self.assertIsNone(self.fresh(self.instance).task_state)

    def test_delete_casts_to_an_up_host(self):
        self.api.delete(self.ctx, self.instance)
        self.assertEqual(['terminate_instance'], self.compute.names())
        self.assertEqual(task_states.DELETING,
                         self.fresh(self.instance).task_state)

    def test_delete_on_a_down_host_is_local(self):
        network = objects.Network(self.ctx, name='n', bridge='br').create()
        objects.Port(self.ctx, network_uuid=network.uuid,
                     mac_address='fa:16:3e:00:00:09',
                     instance_uuid=self.instance.uuid).create()
        dbf.set_down(self.service_a)
        self.api.delete(self.ctx, self.instance)
        self.assertEqual([], self.compute.calls)
        row = self.fresh(self.instance)
        self.assertTrue(row.deleted)
        self.assertEqual(vm_states.DELETED, row.vm_state)
        self.assertEqual([], objects.Port.get_by_instance_uuid(
            self.ctx, self.instance.uuid))

    def test_reset_state_clears_task_and_ends_stale_evacuations(self):
        migration = objects.Migration(
            self.ctx, instance_uuid=self.instance.uuid, source_compute='a',
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.PRE_MIGRATING).create()
        self.instance.task_state = task_states.REBUILDING
        self.instance.save()
        self.api.reset_state(self.ctx, self.instance, 'error')
        row = self.fresh(self.instance)
        self.assertEqual((vm_states.ERROR, None),
                         (row.vm_state, row.task_state))
        self.assertEqual(migration_obj.FAILED, objects.Migration.get_by_id(
            self.ctx, migration.id).status)
        with self.assertRaises(exception.InvalidInput):
            self.api.reset_state(self.ctx, self.instance, 'stopped')

    def test_get_and_get_all(self):
        other = dbf.make_instance(self.ctx, 'b')
        self.assertEqual(self.instance.uuid,
                         self.api.get(self.ctx, self.instance.uuid).uuid)
        self.assertEqual([other.uuid],
                         [i.uuid for i in self.api.get_all(self.ctx,
                                                           host='b')])
        with self.assertRaises(exception.InstanceNotFound):
            self.api.get(self.ctx, '33333333-3333-4333-8333-333333333333')


class TestCreate(APITestCase):

    def setUp(self):
        super().setUp()
        self.images = libvirt_fixtures.make_image_store(self.tmp)
        self.image = libvirt_fixtures.add_disk_image(self.images, self.tmp,
                                                     size_mb=1)
        self.api.image_api = self.images
        dbf.make_flavor(self.ctx, '1')
        dbf.set_down(self.service_a)

    def test_create_places_allocates_ports_and_casts_the_build(self):
        network = objects.Network(self.ctx, name='n', bridge='br-n').create()
        instance = self.api.create(self.ctx, 'vm1', self.image.id, '1',
                                   networks=[{'uuid': network.uuid}])
        row = self.fresh(instance)
        self.assertEqual(('b', vm_states.BUILDING, task_states.SCHEDULING),
                         (row.host, row.vm_state, row.task_state))
        self.assertEqual(['create'], self.actions(instance))
        ports = objects.Port.get_by_instance_uuid(self.ctx, instance.uuid)
        self.assertEqual([('b', network.uuid)],
                         [(p.binding_host, p.network_uuid) for p in ports])
        self.assertEqual([ports[0].uuid], [v.id for v in row.network_info])
        self.assertEqual('br-n', row.network_info[0].network.bridge)
        name, args, kwargs = self.compute.calls[0]
        self.assertEqual('build_and_run_instance', name)
        self.assertEqual('b', kwargs['host'])
        self.assertEqual(self.image.id, kwargs['image_meta'].id)

    def test_create_writes_its_action_and_its_bindings_with_the_instance(self):
        # The 'create' action is inserted with the instance row, and the
        # ports' binding with the network_info the instance records: no
        # moment where an instance exists without the action that made
        # it, or records VIFs bound nowhere.
        network = objects.Network(self.ctx, name='n', bridge='br-n').create()
        with dbf.committed_writes() as transactions:
            instance = self.api.create(self.ctx, 'vm1', self.image.id, '1',
                                       networks=[{'uuid': network.uuid}])
        writes = [[w.split(' WHERE')[0] for w in t] for t in transactions()]
        # The port; the host's claim lease taken; the instance with its
        # action, usage and the port's binding, the lease given back in
        # the same transaction.
        self.assertEqual([['INSERT INTO ports'],
                          ['INSERT INTO host_claim_leases'],
                          ['INSERT INTO instances', 'INSERT INTO host_usage',
                           'INSERT INTO instance_actions', 'UPDATE ports',
                           'DELETE FROM host_claim_leases']], writes)
        self.assertEqual(['create'], self.actions(instance))
        [port] = objects.Port.get_by_instance_uuid(self.ctx, instance.uuid)
        self.assertEqual(('b', 'DOWN'), (port.binding_host, port.status))
        self.assertEqual([port.uuid],
                         [v.id for v in self.fresh(instance).network_info])

    def test_a_port_gone_before_the_binding_binds_nothing(self):
        # The instance's row and its bindings are one transaction: a port
        # deleted under it leaves no instance and the other port unbound,
        # then freed as for any refused create; nothing is cast.
        first = objects.Network(self.ctx, name='n1', bridge='br-1').create()
        second = objects.Network(self.ctx, name='n2', bridge='br-2').create()
        # Another request deletes the second port between the read of the
        # ports and the write of their binding.
        self.api.network_api = network_api_mod.API()
        real_bind = self.api.network_api.bind

        def bind_after_a_delete(context, instance, host, **kwargs):
            ports = real_bind(context, instance, host, **kwargs)
            objects.Port.get_by_uuid(self.ctx, ports.ports[1].uuid).destroy()
            return ports

        self.api.network_api.bind = bind_after_a_delete
        with self.assertRaises(exception.PortNotFound):
            self.api.create(self.ctx, 'vm1', self.image.id, '1',
                            networks=[{'uuid': first.uuid},
                                      {'uuid': second.uuid}])
        self.assertEqual([], objects.Instance.get_all(self.ctx))
        self.assertEqual([], self._all_ports())
        self.assertEqual([], self.compute.calls)

    def test_a_group_refusal_after_a_lost_claim_records_no_vifs(self):
        # The claim on b bound the port on the objects, then lost b's
        # lease (it stalled); c holds a member of the anti-affinity group:
        # the policy leaves no host. The instance is created in ERROR on
        # no host, and records no VIF of the freed port.
        dbf.make_service(self.ctx, 'c')
        group = group_obj.InstanceGroup(
            name='g', project_id=self.ctx.project_id,
            user_id=self.ctx.user_id, policy='anti-affinity').create()
        member = dbf.make_instance(self.ctx, 'c')
        group_obj.InstanceGroup.add_member(self.ctx, group.uuid, member.uuid)
        network = objects.Network(self.ctx, name='n', bridge='br-n').create()
        self.api.network_api = network_api_mod.API()
        real_bind = self.api.network_api.bind_new_instance
        asked = []

        def bind_then_lose_the_lease(instance, ports, host):
            asked.append(host)
            bound = real_bind(instance, ports, host)
            with db_api.writing() as connection:
                connection.execute(sa.update(
                    control_models.HostClaimLease.__table__).where(
                    control_models.HostClaimLease.host == host).values(
                    holder='0f0e0d0c-0b0a-4909-8807-060504030201'))
            return bound

        self.api.network_api.bind_new_instance = bind_then_lose_the_lease
        instance = self.api.create(self.ctx, 'vm1', self.image.id, '1',
                                   networks=[{'uuid': network.uuid}],
                                   group_uuid=group.uuid)
        self.assertEqual(['b'], asked)
        row = self.fresh(instance)
        self.assertEqual((vm_states.ERROR, None), (row.vm_state, row.host))
        self.assertEqual([], list(row.network_info))
        self.assertEqual([], self._all_ports())
        self.assertEqual([], self.compute.calls)

    def test_create_refuses_unknown_flavor_image_and_no_host(self):
        with self.assertRaises(exception.FlavorNotFound):
            self.api.create(self.ctx, 'vm', self.image.id, '99')
        with self.assertRaises(exception.ImageNotFound):
            self.api.create(self.ctx, 'vm',
                            '44444444-4444-4444-8444-444444444444', '1')
        dbf.set_down(self.service_b)
        with self.assertRaises(exception.NoValidHost):
            self.api.create(self.ctx, 'vm', self.image.id, '1')
        self.assertEqual([], objects.Instance.get_all(self.ctx))

    def _all_ports(self):
        return [p for n in objects.Network.get_all(self.ctx)
                for p in objects.Port.get_by_network_uuid(self.ctx, n.uuid)]

    def assertNothingCreated(self):
        self.assertEqual([], objects.Instance.get_all(self.ctx,
                                                      include_deleted=True))
        self.assertEqual([], self._all_ports())
        self.assertEqual([], self.compute.calls)

    def test_create_gives_each_port_a_fixed_address(self):
        network = objects.Network(self.ctx, name='public', bridge='br-p',
                                  cidr='172.24.4.0/24').create()
        first = self.api.create(self.ctx, 'vm1', self.image.id, '1',
                                networks=[{'uuid': network.uuid}])
        second = self.api.create(self.ctx, 'vm2', self.image.id, '1')
        [vif] = self.fresh(first).network_info
        self.assertEqual(('public', ('172.24.4.2',)),
                         (vif.network.label, vif.ips))
        [vif] = self.fresh(second).network_info    # the only network
        self.assertEqual(('172.24.4.3',), vif.ips)
        [port] = objects.Port.get_by_instance_uuid(self.ctx, first.uuid)
        self.assertEqual(('172.24.4.2', 'b'),
                         (port.ip_address, port.binding_host))
        # What was cast carries the addresses too.
        _, _, kwargs = self.compute.calls[0]
        self.assertEqual(('172.24.4.2',), kwargs['network_info'][0].ips)

    def test_unknown_network_leaves_no_instance_and_no_port(self):
        network = objects.Network(self.ctx, name='public', bridge='br-p',
                                  cidr='172.24.4.0/24').create()
        with self.assertRaises(exception.NetworkNotFound) as ctx:
            self.api.create(self.ctx, 'vm', self.image.id, '1', networks=[
                {'uuid': network.uuid},
                {'uuid': '66666666-6666-4666-8666-666666666666'}])
        # A client error (the REST API answers 400), nothing written.
        self.assertTrue(400 <= ctx.exception.code < 500)
        self.assertNothingCreated()

    def test_ambiguous_default_network_leaves_nothing(self):
        for name in ('public', 'private'):
            objects.Network(self.ctx, name=name, bridge='br-' + name,
                            cidr='10.0.0.0/24').create()
        with self.assertRaises(exception.NetworkAmbiguous):
            self.api.create(self.ctx, 'vm', self.image.id, '1')
        self.assertNothingCreated()

    def test_bad_flavor_or_image_checked_before_the_network(self):
        objects.Network(self.ctx, name='public', bridge='br-p',
                        cidr='10.0.0.0/24').create()
        with self.assertRaises(exception.FlavorNotFound):
            self.api.create(self.ctx, 'vm', self.image.id, '99')
        with self.assertRaises(exception.ImageNotFound):
            self.api.create(self.ctx, 'vm',
                            '44444444-4444-4444-8444-444444444444', '1')
        self.assertNothingCreated()

    def test_full_network_refuses_without_an_instance(self):
        # A /30 has two host addresses; the first is the gateway's.
        objects.Network(self.ctx, name='tiny', bridge='br-t',
                        cidr='10.0.0.0/30').create()
        first = self.api.create(self.ctx, 'vm1', self.image.id, '1')
        with self.assertRaises(exception.NoMoreFixedIps):
            self.api.create(self.ctx, 'vm2', self.image.id, '1')
        self.assertEqual([first.uuid], [
            i.uuid for i in objects.Instance.get_all(self.ctx,
                                                     include_deleted=True)])
        self.assertEqual([('10.0.0.2', first.uuid)], [
            (p.ip_address, p.instance_uuid) for p in self._all_ports()])

    def test_no_valid_host_frees_the_ports(self):
        objects.Network(self.ctx, name='public', bridge='br-p',
                        cidr='10.0.0.0/24').create()
        dbf.set_down(self.service_b)
        with self.assertRaises(exception.NoValidHost):
            self.api.create(self.ctx, 'vm', self.image.id, '1')
        self.assertNothingCreated()

    def test_failed_cast_leaves_an_error_instance_with_its_port(self):
        objects.Network(self.ctx, name='public', bridge='br-p',
                        cidr='10.0.0.0/24').create()
        self.compute.fail_with = exception.ComputeServiceUnavailable(
            host='b')
        with self.assertRaises(exception.ComputeServiceUnavailable):
            self.api.create(self.ctx, 'vm', self.image.id, '1')
        [row] = objects.Instance.get_all(self.ctx)
        self.assertEqual((vm_states.ERROR, None),
                         (row.vm_state, row.task_state))
        self.assertIsNotNone(objects.InstanceFault.get_latest_for_instance(
            self.ctx, row.uuid))
        # Its delete frees the port, as for any instance.
        self.assertEqual([(row.uuid, 'b')], [
            (p.instance_uuid, p.binding_host) for p in self._all_ports()])


class TestExternalEvents(APITestCase):

    def test_routed_to_the_host_and_to_an_evacuation_target(self):
        here = dbf.make_instance(self.ctx, 'a')
        moving = dbf.make_instance(self.ctx, 'a')
        objects.Migration(self.ctx, instance_uuid=moving.uuid,
                          source_compute='a', dest_compute='b',
                          migration_type=migration_obj.EVACUATION,
                          status=migration_obj.PRE_MIGRATING).create()
        unknown = '55555555-5555-4555-8555-555555555555'
        events = [external_event.InstanceExternalEvent(
            uuid, 'network-vif-plugged', 'port') for uuid in
            (here.uuid, moving.uuid, unknown)]
        results = self.api.external_instance_event(self.ctx, events)
        self.assertEqual([200, 200, 404], [r.code for r in results])
        sent = {kwargs['host']: sorted(i.uuid for i in args[0])
                for _, args, kwargs in self.compute.calls}
        self.assertEqual({'a': sorted([here.uuid, moving.uuid]),
                          'b': [moving.uuid]}, sent)
