from nova.compute import host_init
from nova.compute import operation
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.tests.fixtures import compute as fixtures
from nova.tests.fixtures import database as dbf
from nova.virt import fake


class _EvacuatedMeanwhile(fake.FakeDriver):
    """A hypervisor during whose first get_info of an instance another
    host's evacuation of it completes: the row moves to compute2.

    Stands for what cannot run here (a second compute host racing this
    one); the code under test is not touched.
    """

    def __init__(self, *args):
        super().__init__(*args)
        self.moving = set()

    def get_info(self, instance):
        if instance.uuid in self.moving:
            self.moving.discard(instance.uuid)
            row = objects.Instance.get_by_uuid(instance.context,
                                               instance.uuid)
            row.host = row.node = 'compute2'
            row.save()
        return super().get_info(instance)


class TestInitInstances(fixtures.ComputeTestCase):

    def reconcile(self, *instances, do_not_touch=frozenset()):
        host_init.init_instances(self.compute, self.runner,
                                 [self.reload(i) for i in instances],
                                 do_not_touch=do_not_touch)

    def test_do_not_touch_is_honoured(self):
        instance = self.active_instance()
        instance.task_state = task_states.POWERING_OFF
        instance.save()
        self.reconcile(instance, do_not_touch={instance.uuid})
        self.assertEqual(task_states.POWERING_OFF,
                         self.states(instance)[1])

    def test_instance_of_another_host_in_the_list_is_skipped(self):
        instance = self.active_instance()
        instance.host = 'compute2'
        instance.task_state = task_states.POWERING_OFF
        instance.save()
        self.reconcile(instance)
        self.assertEqual(task_states.POWERING_OFF,
                         self.states(instance)[1])
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(instance).state)

    def test_one_failure_does_not_stop_the_others(self):
        first = self.active_instance()
        second = self.active_instance()
        for instance in (first, second):
            instance.task_state = task_states.POWERING_OFF
            instance.save()
        self.driver.fail_at('power_off')
        self.reconcile(first, second)
        # The first stop failed (vm_state kept, fault); the second ran.
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(first))
        self.assertEqual(1, len(self.faults(first)))
        self.assertEqual((vm_states.STOPPED, None, power_state.SHUTDOWN),
                         self.states(second))

    def test_idle_instance_gets_the_hypervisors_power_state(self):
        instance = self.active_instance()
        instance.power_state = power_state.NOSTATE
        instance.save()
        self.reconcile(instance)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual([], self.events(instance))

    def test_unknown_task_state_is_cleared_with_a_fault(self):
        instance = self.active_instance()
        instance.task_state = task_states.MIGRATING
        instance.save()
        self.reconcile(instance)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertIn('migrating', self.faults(instance)[0].message)

    def test_snapshot_cut_short_is_cleared_without_fault(self):
        # The guest runs as before the snapshot: nothing failed that the
        # server's owner must hear of (the image stays queued).
        instance = self.active_instance()
        instance.task_state = task_states.IMAGE_UPLOADING
        instance.save()
        self.reconcile(instance)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual([], self.faults(instance))


class TestInstanceMovedDuringInitHost(fixtures.ComputeTestCase):
    """init_host read the list once; an evacuation moved an instance
    (service down during init_host) before its turn came."""

    def setUp(self):
        super().setUp()
        self.driver = _EvacuatedMeanwhile(self.virtapi, self.settings)
        self.driver.init_host(fixtures.HOST)
        self.compute = operation.ComputeHost(
            host=fixtures.HOST, settings=self.settings.replace(
                resume_guests_state_on_host_boot=True),
            driver=self.driver, virtapi=self.virtapi)
        self.runner = operation.Runner(self.compute, self.runner.locks)

    def rebooted_host_instance(self, recorded_power_state):
        instance = self.active_instance()
        instance.power_state = recorded_power_state
        instance.save()
        self.driver.simulate_host_reboot()
        return instance

    def assertLeftAlone(self, instance, recorded_power_state):
        files = self.files(instance)
        self.assertEqual((vm_states.ACTIVE, None, recorded_power_state),
                         self.states(instance))
        self.assertEqual('compute2', self.reload(instance).host)
        # The local guest is not started, nothing is deleted, and
        # nothing is recorded against the other host's instance.
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(instance).state)
        self.assertIn('disk', files)
        self.assertEqual([], self.faults(instance))
        self.assertEqual([], self.events(instance))

    def test_moved_after_the_list_was_read(self):
        instance = self.rebooted_host_instance(power_state.RUNNING)
        listed = objects.Instance.get_by_host(self.context, fixtures.HOST)
        row = self.reload(instance)
        row.host = row.node = 'compute2'
        row.save()
        host_init.init_instances(self.compute, self.runner, listed)
        self.assertLeftAlone(instance, power_state.RUNNING)

    def test_moved_before_the_power_state_is_recorded(self):
        instance = self.rebooted_host_instance(power_state.RUNNING)
        self.driver.moving.add(instance.uuid)
        host_init.init_instances(self.compute, self.runner,
                                 [self.reload(instance)])
        self.assertLeftAlone(instance, power_state.RUNNING)

    def test_moved_before_the_claim_to_resume_it(self):
        # The power state was already recorded, so the claim of
        # resume_on_host_boot is the first write: its UPDATE refuses.
        instance = self.rebooted_host_instance(power_state.SHUTDOWN)
        self.driver.moving.add(instance.uuid)
        host_init.init_instances(self.compute, self.runner,
                                 [self.reload(instance)])
        files = self.files(instance)
        self.assertEqual((vm_states.ACTIVE, None, power_state.SHUTDOWN),
                         self.states(instance))
        self.assertEqual('compute2', self.reload(instance).host)
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(instance).state)
        self.assertIn('disk', files)
        self.assertEqual([], self.faults(instance))
        # Only the refused claim's event, as for any lost race.
        self.assertEqual([('resume_on_host_boot',
                           'compute_resume_state_on_host_boot', 'Error')],
                         self.events(instance))

    def test_instance_still_here_is_resumed(self):
        # The same path without the move: the guest is started, so the
        # tests above fail if the skip stops being the reason.
        instance = self.rebooted_host_instance(power_state.SHUTDOWN)
        host_init.init_instances(self.compute, self.runner,
                                 [self.reload(instance)])
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(instance).state)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))


class TestReportForeignDomains(fixtures.ComputeTestCase):

    def test_foreign_domains_are_left_alone(self):
        mine = self.active_instance()
        theirs = self.active_instance()
        theirs.host = 'compute2'
        theirs.save()
        deleted = self.active_instance()
        deleted.destroy()
        host_init.report_foreign_domains(self.compute, self.context,
                                         [self.reload(mine)])
        self.assertEqual(sorted([mine.uuid, theirs.uuid, deleted.uuid]),
                         sorted(self.driver.list_instance_uuids()))
        for instance in (theirs, deleted):
            self.assertIn('disk', self.files(instance))


class TestInitHostInBulk(fixtures.ComputeTestCase):
    """An idle host's start issues a number of SQL statements that does
    not grow with its instances, and reads the power states once."""

    def statements_of_init_instances(self, instances):
        """The SQL statements reconciling ``instances`` (as read) issues."""
        reloaded = [self.reload(i) for i in instances]
        with dbf.recorded_statements() as statements:
            host_init.init_instances(self.compute, self.runner, reloaded)
        return statements

    def test_idle_instances_cost_no_statement(self):
        for count in (3, 30):
            instances = [self.active_instance() for _ in range(count)]
            self.assertEqual([], self.statements_of_init_instances(
                instances))

    def test_only_the_instance_that_needs_it_is_touched(self):
        idle = [self.active_instance() for _ in range(10)]
        first, second = self.active_instance(), self.active_instance()
        for stopped_behind_our_back in (first, second):
            self.driver.simulate_shutdown(stopped_behind_our_back.uuid)
        alone = self.statements_of_init_instances([first])
        with_idle = self.statements_of_init_instances(idle + [second])
        # Each stopped guest is recorded as stopped (its one read and
        # save); the ten idle instances add nothing to that.
        self.assertTrue(alone)
        self.assertEqual(len(alone), len(with_idle))
        for instance in (first, second):
            self.assertEqual(power_state.SHUTDOWN,
                             self.reload(instance).power_state)

    def test_power_states_are_read_once(self):
        instances = [self.active_instance() for _ in range(5)]
        calls = []
        read = self.driver.get_power_states

        def counted():
            calls.append(1)
            return read()
        self.driver.get_power_states = counted
        self.driver.get_info = None     # never asked one by one
        host_init.init_instances(self.compute, self.runner,
                                 [self.reload(i) for i in instances])
        self.assertEqual([1], calls)
