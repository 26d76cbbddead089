"""Disk leases: what each host records and shows, the warning about
shared storage without leases, and whom a refused start names."""

import os

from nova.compute import disk_leases
from nova.compute import manager as compute_manager
from nova.compute import operation
from nova import exception
from nova.model import power_state
from nova.model import vm_states
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.fixtures import compute as fixtures
from nova.virt.libvirt import lock_config

HOST = fixtures.HOST
INSTANCES = '/var/lib/nova/instances'
# This host's mount table: instances_path on NFS, the rest on its own
# disk (real lines of /proc/self/mountinfo).
MOUNTINFO = (
    '22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/mapper/vg-root rw\n'
    '97 22 0:52 / /var/lib/nova/instances rw,relatime shared:60 - nfs4 '
    '10.0.0.5:/nova rw,vers=4.2,hard,proto=tcp,timeo=600,retrans=2,'
    'sec=sys,clientaddr=10.0.0.21,local_lock=none,addr=10.0.0.5\n')
LOCKSPACE_ON_ROOT = (
    'file_lockspace_dir /var/lib/libvirt/lockd/files is on / (ext4 '
    '/dev/mapper/vg-root), not on the storage of instances_path '
    '/var/lib/nova/instances, which is on /var/lib/nova/instances (nfs4 '
    '10.0.0.5:/nova): leases taken there do not cross hosts')
START = operation.Operation('start', 'start', 'compute_start_instance')
LOCKD = lock_config.DiskLeases('lockd', 'lock_manager = "lockd" (test)')
NONE = lock_config.DiskLeases('none', 'no lock_manager (test)')


def service(host, identity, leases, binary='nova-compute', reason=None):
    return objects.Service(host=host, binary=binary,
                           storage_identity=identity, disk_leases=leases,
                           disk_leases_reason=reason)


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

    def test_the_reason_configured_leases_count_as_none(self):
        a = service('a', 's1', 'none', reason='the lockspace is local')
        b = service('b', 's1', 'lockd')
        c = service('c', 's2', 'none', reason='the lockspace is local')
        u = service('u', 's3', None, reason='cannot read the mounts')
        rows = [a, b, c, u]
        self.assertEqual('none: the lockspace is local',
                         disk_leases.describe(c, rows))
        self.assertEqual('unknown: cannot read the mounts',
                         disk_leases.describe(u, rows))
        self.assertEqual('none: the lockspace is local; it shares storage '
                         'with b without disk leases; fence it before '
                         'evacuating', disk_leases.describe(a, rows))
        self.assertEqual('lockd, but a sharing its storage takes no disk '
                         'leases; fence before evacuating',
                         disk_leases.describe(b, rows))


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

    def test_leases_that_do_not_cross_hosts_are_recorded_as_none(self):
        # libvirt configured with lockd, its lockspace on the host's own
        # disk while the disks are on NFS: read as the driver reads it.
        conf = os.path.join(self.tmp, 'etc-libvirt')
        os.makedirs(conf)
        for name, text in (
                ('qemu.conf', 'lock_manager = "lockd"\n'),
                ('qemu-lockd.conf',
                 'file_lockspace_dir = "/var/lib/libvirt/lockd/files"\n'),
                ('mountinfo', MOUNTINFO)):
            with open(os.path.join(conf, name), 'w') as f:
                f.write(text)
        leases = lock_config.read(conf, INSTANCES,
                                  os.path.join(conf, 'mountinfo'))
        self.peer('compute2', 'lockd')
        with self.assertLogs('nova.compute.disk_leases', 'WARNING') as logs:
            self.reporter(leases).record_at_start(self.context)
        row = self.recorded()
        self.assertEqual(('none', LOCKSPACE_ON_ROOT),
                         (row.disk_leases, row.disk_leases_reason))
        self.assertFalse(disk_leases.protected(row.disk_leases))
        rows = objects.Service.get_all(self.context)
        self.assertEqual(
            'none: %s; it shares storage with compute2 without disk leases; '
            'fence it before evacuating' % LOCKSPACE_ON_ROOT,
            disk_leases.describe(row, rows))
        self.assertEqual(
            'lockd, but %s sharing its storage takes no disk leases; fence '
            'before evacuating' % HOST,
            disk_leases.describe(
                objects.Service.get_by_host_and_binary(
                    self.context, 'compute2', 'nova-compute'), rows))
        warnings = [r.getMessage() for r in logs.records
                    if r.levelname == 'WARNING']
        self.assertIn(LOCKSPACE_ON_ROOT, warnings[0])
        self.assertTrue(warnings[0].startswith(
            'Disk leases on %s: lock_manager = "lockd"' % HOST))
        self.assertIn('this host takes no disk leases (%s)'
                      % LOCKSPACE_ON_ROOT, warnings[1])

    def test_an_unreadable_mount_table_records_unknown(self):
        conf = os.path.join(self.tmp, 'etc-libvirt')
        os.makedirs(conf)
        with open(os.path.join(conf, 'qemu.conf'), 'w') as f:
            f.write('lock_manager = "lockd"\n')
        missing = os.path.join(self.tmp, 'no-mountinfo')
        leases = lock_config.read(conf, INSTANCES, missing)
        with self.assertLogs('nova.compute.disk_leases', 'WARNING'):
            self.reporter(leases).record_at_start(self.context)
        row = self.recorded()
        self.assertIsNone(row.disk_leases)
        self.assertIn('cannot read %s' % missing, row.disk_leases_reason)
        self.assertTrue(disk_leases.describe(row, [row]).startswith(
            'unknown: cannot read %s' % missing))

    def test_a_late_mount_reads_the_leases_again(self):
        # At start the disks are on the host's own disk, with the
        # lockspace: lockd. NFS is mounted over instances_path later: the
        # lockspace is no longer on their storage.
        reporter = self.reporter(LOCKD)
        reporter.record_at_start(self.context)
        self.assertEqual(('lockd', None), (self.recorded().disk_leases,
                                           self.recorded().disk_leases_reason))
        moved = lock_config.DiskLeases('none', 'lockd; but far',
                                       reason='the lockspace is elsewhere')
        self.driver.get_disk_leases = lambda: moved
        row = self.recorded()
        reporter.update(self.context, row)     # same identity: not read
        self.assertEqual('lockd', row.disk_leases)
        row.storage_identity = 'nfs'
        with self.assertLogs('nova.compute.disk_leases', 'WARNING') as logs:
            reporter.update(self.context, row)
        self.assertIn('lockd; but far', logs.records[0].getMessage())
        row.heartbeat()                        # what the service does next
        self.assertEqual(('none', 'the lockspace is elsewhere'),
                         (self.recorded().disk_leases,
                          self.recorded().disk_leases_reason))
        # Back to leases that reach: the reason goes.
        self.driver.get_disk_leases = lambda: LOCKD
        row.storage_identity = 'nfs2'
        reporter.update(self.context, row)
        row.heartbeat()
        self.assertEqual(('lockd', None), (self.recorded().disk_leases,
                                           self.recorded().disk_leases_reason))

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
