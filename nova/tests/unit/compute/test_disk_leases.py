"""Disk leases: what each host records and shows, the warning about
shared storage without leases, and whom a refused start names."""

from nova.compute import disk_leases
from nova.compute import manager as compute_manager
from nova.compute import operation
from nova.model import power_state
from nova.model import vm_states
from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.fixtures import compute as fixtures
from nova.virt.libvirt import lock_config

HOST = fixtures.HOST
START = operation.Operation('start', 'start', 'compute_start_instance')
LOCKD = lock_config.DiskLeases('lockd', 'lock_manager = "lockd" (test)')
NONE = lock_config.DiskLeases('none', 'no lock_manager (test)')


def service(host, identity, leases, binary='nova-compute'):
    return objects.Service(host=host, binary=binary,
                           storage_identity=identity, disk_leases=leases)


class TestDescribe(fixtures.ComputeTestCase):
    """What GET /os-services shows, from the rows alone."""

    def test_sharing_and_leases(self):
        a = service('a', 's1', 'lockd')
        b = service('b', 's1', 'none')
        c = service('c', 's2', 'none')
        d = service('d', None, 'none')
        rows = [a, b, c, d, service('ctl', 's1', None,
                                    binary='nova-conductor')]
        self.assertEqual(['b'], disk_leases.unprotected_sharing(a, rows))
        self.assertEqual(['a'], disk_leases.unprotected_sharing(b, rows))
        self.assertEqual([], disk_leases.unprotected_sharing(c, rows))
        self.assertEqual([], disk_leases.unprotected_sharing(d, rows))
        self.assertIn('but b sharing its storage takes no disk leases',
                      disk_leases.describe(a, rows))
        self.assertTrue(disk_leases.describe(b, rows).startswith(
            'none: shares storage with a without disk leases'))
        self.assertEqual('none', disk_leases.describe(c, rows))
        self.assertIsNone(disk_leases.describe(
            service('e', 's1', None), rows))
        # A peer that never reported its leases counts as without.
        self.assertEqual(['e'], disk_leases.unprotected_sharing(
            a, [a, service('e', 's1', None)]))


class LeaseTestCase(fixtures.ComputeTestCase):

    def setUp(self):
        super().setUp()
        self.identity = self.driver.get_storage_identity()
        self.row = objects.Service(
            self.context, host=HOST, binary='nova-compute',
            topic='compute', storage_identity=self.identity).create()

    def peer(self, host, leases='lockd', identity=None):
        return objects.Service(
            self.context, host=host, binary='nova-compute', topic='compute',
            storage_identity=identity or self.identity,
            disk_leases=leases).create()

    def reporter(self, leases):
        self.driver.get_disk_leases = lambda: leases
        return disk_leases.LeaseReporter(HOST, self.driver)

    def recorded(self):
        return objects.Service.get_by_id(self.context, self.row.id)


class TestLeaseReporter(LeaseTestCase):

    def test_records_the_leases_and_is_quiet_when_every_side_has_them(self):
        self.peer('compute2', 'lockd')
        with self.assertLogs('nova.compute.disk_leases', 'INFO') as logs:
            self.reporter(LOCKD).record_at_start(self.context)
        self.assertEqual('lockd', self.recorded().disk_leases)
        self.assertEqual(['INFO'], [r.levelname for r in logs.records])

    def test_warns_when_this_host_shares_storage_without_leases(self):
        self.peer('compute2', 'lockd')
        self.peer('compute3', 'lockd', identity='other storage')
        with self.assertLogs('nova.compute.disk_leases', 'WARNING') as logs:
            self.reporter(NONE).record_at_start(self.context)
        self.assertEqual('none', self.recorded().disk_leases)
        text = '\n'.join(r.getMessage() for r in logs.records)
        self.assertIn('with compute2, and this host takes no disk leases',
                      text)
        self.assertNotIn('compute3', text)
        self.assertIn('Fencing', text)

    def test_warns_when_a_peer_takes_none(self):
        self.peer('compute2', 'none')
        with self.assertLogs('nova.compute.disk_leases', 'WARNING') as logs:
            self.reporter(LOCKD).record_at_start(self.context)
        self.assertIn('with compute2, and they take no disk leases',
                      logs.records[-1].getMessage())

    def test_the_manager_records_them_at_init_host(self):
        self.driver.get_disk_leases = lambda: LOCKD
        manager = compute_manager.ComputeManager(self.settings,
                                                 driver=self.driver)
        manager.init_host()
        self.assertEqual('lockd', self.recorded().disk_leases)

    def test_an_unknown_answer_records_null(self):
        reporter = self.reporter(None)
        reporter.record_at_start(self.context)
        self.assertIsNone(self.recorded().disk_leases)

    def test_a_new_storage_identity_is_checked_again(self):
        reporter = self.reporter(NONE)
        reporter.record_at_start(self.context)     # nobody shares yet
        self.peer('compute2', 'lockd', identity='nfs')
        row = self.recorded()
        self.assertEqual([], reporter.check_sharing(self.context, row))
        row.storage_identity = 'nfs'               # a late mount
        with self.assertLogs('nova.compute.disk_leases', 'WARNING'):
            reporter.update(self.context, row)
        # Once per identity, not at every heartbeat.
        with self.assertNoLogs('nova.compute.disk_leases', 'WARNING'):
            reporter.update(self.context, row)


class TestHolder(LeaseTestCase):

    def held(self):
        return exception.DiskLeaseHeld(disk='/i/disk', reason='locked')

    def test_an_evacuation_names_the_source(self):
        instance = self.new_instance(host='compute2')
        self.assertEqual('compute2',
                         disk_leases.holder_of(self.context, HOST, instance))

    def test_the_newest_evacuation_source_then_the_storage_peer(self):
        instance = self.new_instance()
        self.assertIsNone(disk_leases.holder_of(self.context, HOST,
                                                instance))
        self.peer('compute3')
        self.assertEqual('compute3',
                         disk_leases.holder_of(self.context, HOST, instance))
        self.peer('compute4')
        self.assertIn('one of compute3, compute4',
                      disk_leases.holder_of(self.context, HOST, instance))
        objects.Migration(
            self.context, instance_uuid=instance.uuid,
            source_compute='compute2', dest_compute=HOST,
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.DONE).create()
        self.assertEqual('compute2',
                         disk_leases.holder_of(self.context, HOST, instance))

    def test_a_known_holder_is_kept(self):
        instance = self.new_instance(host='compute2')
        local = exception.DiskLeaseHeld(disk='/d', local_domain='x')
        self.assertIs(local, disk_leases.naming_holder(
            self.context, HOST, instance, local))
        named = disk_leases.naming_holder(self.context, HOST, instance,
                                          self.held())
        self.assertEqual('compute2', named.holder)

    def test_the_runner_records_whom_to_fence(self):
        # A start refused on this host, whose storage one other host
        # shares: the fault and the action event name it.
        instance = self.new_instance(vm_state=vm_states.STOPPED,
                                     power_state=power_state.SHUTDOWN)
        self.peer('compute2')

        def body():
            raise self.held()

        with self.assertRaises(exception.DiskLeaseHeld) as caught:
            self.runner.run(self.context, instance, START, body)
        self.assertEqual('compute2', caught.exception.holder)
        [fault] = objects.InstanceFault.get_by_instance_uuid(
            self.context, instance.uuid)
        self.assertEqual(409, fault.code)
        self.assertTrue(fault.message.startswith(
            'disk in use by another host: fence compute2 first'),
            fault.message)
        action = objects.InstanceAction.get_by_instance_uuid(
            self.context, instance.uuid)[0]
        [event] = action.events
        self.assertIn('fence compute2 first', event.details)
        self.assertEqual(vm_states.STOPPED,
                         objects.Instance.get_by_uuid(
                             self.context, instance.uuid).vm_state)
