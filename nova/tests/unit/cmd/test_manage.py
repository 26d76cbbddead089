"""nova-manage db sync / db version, in process and as a console script;
nova-manage host audit / cleanup / reap / init-storage /
record-storage-identity / purge-quarantine and network audit / cleanup in
process."""

import contextlib
import datetime
import io
import os
import subprocess
import sys
import time

from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from nova.cmd import manage
from nova.conf import CONF
from nova.db import api as db_api
from nova.db import migration
from nova.network import api as network_api
from nova import objects
from nova.tests import base
from nova.tests.files import sha256_tree
from nova.tests.fixtures import database as dbf
from nova.tests.fixtures import libvirt_host as fixtures
from nova.tests.unit.virt import test_storage_identity
from nova.virt import instancedir
from nova.virt import storage_identity


class ManageTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        # main() parses the config files into the global CONF; parse again
        # without them afterwards so no other test sees this one's files.
        self.addCleanup(CONF, [], project='nova', default_config_files=[])
        self.addCleanup(db_api.dispose)
        self.db_path = os.path.join(self.tmp, 'manage.sqlite')

    def _conf(self, connection):
        path = os.path.join(self.tmp, 'nova.conf')
        with open(path, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n' % self.state_path)
            f.write('[database]\nconnection = %s\n' % connection)
        return path

    def _run(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = manage.main(list(argv))
        return code, out.getvalue(), err.getvalue()

    def _tables(self):
        engine = sa.create_engine('sqlite:///' + self.db_path)
        try:
            return set(sa.inspect(engine).get_table_names())
        finally:
            engine.dispose()

    def test_sync_then_version(self):
        conf = self._conf('sqlite:///' + self.db_path)
        self.assertEqual((0, 'None\n', ''),
                         self._run('--config-file', conf, 'db', 'version'))
        code, out, err = self._run('--config-file', conf, 'db', 'sync')
        self.assertEqual((0, ''), (code, err))
        self.assertIn(migration.head_version(), out)
        self.assertIn('instances', self._tables())
        self.assertEqual((0, migration.head_version() + '\n', ''),
                         self._run('--config-file', conf, 'db', 'version'))

    def test_sync_to_a_version(self):
        conf = self._conf('sqlite:///' + self.db_path)
        code, _, _ = self._run('--config-file', conf, 'db', 'sync', '0001')
        self.assertEqual(0, code)

    def test_unknown_version(self):
        conf = self._conf('sqlite:///' + self.db_path)
        code, _, err = self._run('--config-file', conf, 'db', 'sync', '42')
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn("unknown schema version '42'", err)
        self.assertNotIn('instances', self._tables())

    def test_bad_url(self):
        conf = self._conf('not-a-url')
        code, _, err = self._run('--config-file', conf, 'db', 'sync')
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn("cannot use database URL 'not-a-url'", err)

    def test_unreachable_database_hides_the_password(self):
        # Port 1 on localhost: nothing listens there.
        conf = self._conf('postgresql+psycopg2://nova:secret@127.0.0.1:1/n')
        code, _, err = self._run('--config-file', conf, 'db', 'version')
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('127.0.0.1:1', err)
        self.assertNotIn('secret', err)

    def test_missing_config_file(self):
        code, _, err = self._run('--config-file',
                                 os.path.join(self.tmp, 'none.conf'),
                                 'db', 'sync')
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('none.conf', err)

    def test_usage_errors(self):
        self.assertEqual(manage.EXIT_USAGE, self._run()[0])
        self.assertEqual(manage.EXIT_USAGE, self._run('db')[0])
        self.assertEqual(manage.EXIT_USAGE, self._run('db', 'upgrade')[0])

    def test_console_script_exit_codes(self):
        conf = self._conf('sqlite:///' + self.db_path)
        command = [sys.executable, '-m', 'nova.cmd.manage',
                   '--config-file', conf, 'db']
        done = subprocess.run(command + ['sync'], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(0, done.returncode, done.stderr)
        done = subprocess.run(command + ['sync', 'bogus'],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(manage.EXIT_FAILED, done.returncode)
        self.assertIn('bogus', done.stderr)


DOMAIN = """<domain type='qemu'>
  <name>instance-{uuid}</name>
  <uuid>{uuid}</uuid>
  <memory unit='KiB'>65536</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>
  <devices/>
</domain>
"""


class HostAuditTestCase(base.TestCase):
    """nova-manage host audit / cleanup on a host whose libvirt is the
    test driver: its node file holds the host's domains (every new
    connection starts from it), its directories are real."""

    _run = ManageTestCase._run

    def setUp(self):
        super().setUp()
        self.addCleanup(CONF, [], project='nova', default_config_files=[])
        self.addCleanup(db_api.dispose)
        self.db_path = os.path.join(self.tmp, 'manage.sqlite')
        self.path = os.path.join(self.tmp, 'instances')
        self.node = os.path.join(self.tmp, 'node.xml')
        url = 'sqlite:///' + self.db_path
        db_api.configure(url)
        migration.db_sync()
        ctx = dbf.admin_context()
        identity = storage_identity.create(self.path)
        dbf.make_service(ctx, 'compute1', identity=identity)
        dbf.make_service(ctx, 'compute3', identity=identity)   # shared
        self.own = dbf.make_instance(ctx, 'compute1')
        # Deleted on compute2: its domain here is an orphan to stop, its
        # disks not compute1's (a delete made while compute1 was down
        # would be finished instead: test_reaper.TestPendingDeletes).
        self.deleted = dbf.make_instance(ctx, 'compute2')
        self.deleted.destroy()
        self.shared = dbf.make_instance(ctx, 'compute3')
        db_api.dispose()
        with open(self.node, 'w') as f:
            f.write(fixtures.NODE_XML.format(cpus=2, memory_kib=2 ** 22)
                    .replace('</node>', ''.join(
                        DOMAIN.format(uuid=i.uuid)
                        for i in (self.own, self.deleted)) + '</node>'))
        for instance in (self.own, self.deleted, self.shared):
            os.makedirs(os.path.join(self.path, instance.uuid))
            with open(os.path.join(self.path, instance.uuid, 'disk'),
                      'w') as f:
                f.write('disk of %s' % instance.uuid)
        os.makedirs(os.path.join(self.path, '_base'))
        with open(os.path.join(self.path, '_base', 'img'), 'w') as f:
            f.write('base')
        path = os.path.join(self.tmp, 'host.conf')
        with open(path, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\nhost = compute1\n'
                    'instances_path = %s\n'
                    'compute_driver = libvirt.LibvirtDriver\n'
                    '[libvirt]\nconnection_uri = test://%s\n'
                    '[database]\nconnection = %s\n'
                    % (self.state_path, self.path, self.node, url))
        self.conf = path

    def listing(self):
        return sorted(os.listdir(self.path))

    def test_audit_prints_the_orphans_and_changes_nothing(self):
        before = self.listing()
        code, out, err = self._run('--config-file', self.conf, 'host',
                                   'audit')
        self.assertEqual((0, ''), (code, err))
        lines = out.splitlines()
        self.assertIn('Host compute1', lines[0])
        self.assertTrue(lines[1].startswith('KIND'))
        rows = [line.split() for line in lines[2:-1]]
        self.assertEqual(
            sorted([['domain', self.deleted.uuid, 'remove'],
                    ['directory', self.deleted.uuid, 'remove'],
                    ['directory', self.shared.uuid, 'keep']]),
            sorted([r[0], r[1], r[6]] for r in rows))
        self.assertNotIn(self.own.uuid, out)
        shared_row = next(line for line in lines
                          if self.shared.uuid in line)
        self.assertIn('shared, keep', shared_row)
        self.assertEqual('2 to remove, 1 to keep', lines[-1])
        self.assertEqual(before, self.listing())

    def test_cleanup_without_yes_is_a_dry_run(self):
        before = self.listing()
        code, out, _err = self._run('--config-file', self.conf, 'host',
                                    'cleanup')
        self.assertEqual(0, code)
        self.assertIn('Dry run: 2 would be removed, 1 kept', out)
        self.assertEqual(before, self.listing())

    def test_cleanup_yes_removes_only_what_may_go(self):
        code, out, err = self._run('--config-file', self.conf, 'host',
                                   'cleanup', '--yes')
        self.assertEqual((0, ''), (code, err))
        self.assertIn('Removed domain %s' % self.deleted.uuid, out)
        self.assertIn('2 removed, 1 kept, 0 failed', out)
        self.assertEqual(sorted([self.own.uuid, self.shared.uuid, '_base',
                                 '_quarantine',
                                 instancedir.STORAGE_IDENTITY_FILE]),
                         self.listing())
        with open(os.path.join(self.path, self.shared.uuid, 'disk')) as f:
            self.assertEqual('disk of %s' % self.shared.uuid, f.read())

    def test_unreachable_hypervisor_fails_cleanly(self):
        os.unlink(self.node)
        code, out, err = self._run('--config-file', self.conf, 'host',
                                   'audit')
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('hypervisor is broken on host: compute1', err)

    def test_usage(self):
        self.assertEqual(manage.EXIT_USAGE, self._run('host')[0])
        self.assertEqual(manage.EXIT_USAGE,
                         self._run('host', 'audit', '--yes')[0])


class NetworkAuditTestCase(base.TestCase):
    """nova-manage network audit / cleanup: the database alone."""

    _run = ManageTestCase._run

    def setUp(self):
        super().setUp()
        self.addCleanup(CONF, [], project='nova', default_config_files=[])
        self.addCleanup(db_api.dispose)
        self.url = url = 'sqlite:///' + os.path.join(self.tmp,
                                                     'manage.sqlite')
        db_api.configure(url)
        migration.db_sync()
        ctx = dbf.admin_context()
        api = network_api.API()
        api.create_network(ctx, 'public', 'br-public', cidr='10.9.0.0/29')
        # A boot whose process died between its ports and its row, and
        # an instance that lives.
        self.lost = objects.Instance(ctx, display_name='lost')
        api.allocate_for_instance(ctx, self.lost, ['public'])
        self.live = dbf.make_instance(ctx, 'compute1')
        api.allocate_for_instance(ctx, self.live, ['public'])
        self.lost_port = objects.Port.get_by_instance_uuid(
            ctx, self.lost.uuid)[0].uuid
        db_api.dispose()
        self.conf = os.path.join(self.tmp, 'nova.conf')
        with open(self.conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n[database]\n'
                    'connection = %s\n' % (self.state_path, url))

    def _ports(self):
        db_api.configure(self.url)
        try:
            return sorted(p.instance_uuid for p in objects.Port.get_all(
                dbf.admin_context()))
        finally:
            db_api.dispose()

    def test_audit_lists_the_orphan_and_changes_nothing(self):
        before = self._ports()
        code, out, err = self._run('--config-file', self.conf, 'network',
                                   'audit', '--min-age', '0')
        self.assertEqual((0, ''), (code, err))
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith('PORT'))
        [row] = lines[1:]
        self.assertIn(self.lost_port, row)
        self.assertIn('no such instance', row)
        self.assertEqual(before, self._ports())

    def test_the_default_age_spares_a_boot_in_progress(self):
        code, out, _err = self._run('--config-file', self.conf, 'network',
                                    'audit')
        self.assertEqual((0, 'No orphaned ports.\n'), (code, out))

    def test_cleanup_is_a_dry_run_without_yes(self):
        before = self._ports()
        code, out, _err = self._run('--config-file', self.conf, 'network',
                                    'cleanup', '--min-age', '0')
        self.assertEqual(0, code)
        self.assertIn('Dry run: 1 would be released', out)
        self.assertEqual(before, self._ports())

    def test_cleanup_yes_releases_only_the_orphan(self):
        code, out, err = self._run('--config-file', self.conf, 'network',
                                   'cleanup', '--min-age', '0', '--yes')
        self.assertEqual((0, ''), (code, err))
        self.assertIn('Released port %s' % self.lost_port, out)
        self.assertIn('1 released, 0 kept', out)
        self.assertEqual([self.live.uuid], self._ports())

    def test_bad_age_is_a_usage_error_and_changes_nothing(self):
        before = self._ports()
        for bad in ('-5', 'soon', 'nan'):
            code, _out, err = self._run('--config-file', self.conf,
                                        'network', 'cleanup', '--yes',
                                        '--min-age', bad)
            self.assertEqual(manage.EXIT_USAGE, code, bad)
            self.assertIn('--min-age', err)
        self.assertEqual(before, self._ports())


class StorageCommandsTestCase(base.TestCase):
    """nova-manage host init-storage / record-storage-identity /
    purge-quarantine, on real directories and a real SQLite database."""

    _run = ManageTestCase._run

    def setUp(self):
        super().setUp()
        self.addCleanup(CONF, [], project='nova', default_config_files=[])
        self.addCleanup(db_api.dispose)
        self.url = 'sqlite:///' + os.path.join(self.tmp, 'manage.sqlite')
        db_api.configure(self.url)
        migration.db_sync()
        ctx = dbf.admin_context()
        self.other = os.path.join(self.tmp, 'dead-host-storage')
        self.other_identity = storage_identity.create(self.other)
        dbf.make_service(ctx, 'dead', up=False)
        dbf.make_service(ctx, 'alive', identity=None)
        dbf.make_service(ctx, 'stale', up=False,
                         identity=uuidutils.generate_uuid())
        dbf.make_service(ctx, 'forced', forced_down=True)
        db_api.dispose()
        self.path = os.path.join(self.tmp, 'instances')
        self.conf = self.write_conf()

    def write_conf(self, extra=''):
        path = os.path.join(self.tmp, 'host.conf')
        with open(path, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\nhost = compute1\n'
                    'instances_path = %s\n%s'
                    '[database]\nconnection = %s\n'
                    % (self.state_path, self.path, extra, self.url))
        return path

    def host(self, *argv):
        return self._run('--config-file', self.conf, 'host', *argv)

    def recorded(self, host):
        db_api.configure(self.url)
        try:
            return objects.Service.get_by_host_and_binary(
                dbf.admin_context(), host, 'nova-compute').storage_identity
        finally:
            db_api.dispose()

    def marker(self, path=None):
        path = storage_identity.marker_path(path or self.path)
        if not os.path.lexists(path):
            return None
        with open(path) as f:
            return f.read()

    # -- init-storage ---------------------------------------------------

    def test_init_storage_creates_the_identity_and_prints_it(self):
        code, out, err = self.host('init-storage')
        self.assertEqual((0, ''), (code, err))
        identity = storage_identity.read(self.path).identity
        self.assertIsNotNone(identity)
        self.assertIn('Created storage identity %s' % identity, out)

    def test_init_storage_reports_a_marker_there_and_keeps_it(self):
        identity = storage_identity.create(self.path)
        before = self.marker()
        code, out, _err = self.host('init-storage', '--existing')
        self.assertEqual(0, code)
        self.assertIn('already has storage identity %s' % identity, out)
        self.assertEqual(before, self.marker())

    def test_init_storage_never_replaces_a_bad_marker(self):
        os.makedirs(self.path)
        with open(storage_identity.marker_path(self.path), 'w') as f:
            f.write('garbage\n')
        code, _out, err = self.host('init-storage', '--existing')
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('not replacing', err)
        self.assertEqual('garbage\n', self.marker())

    def test_init_storage_refuses_storage_with_instances(self):
        os.makedirs(os.path.join(self.path, uuidutils.generate_uuid()))
        code, out, err = self.host('init-storage')
        self.assertEqual((manage.EXIT_FAILED, ''), (code, out))
        self.assertIn('already holds instance directories', err)
        self.assertIn('--existing', err)
        self.assertIsNone(self.marker())

    def test_init_storage_existing_creates_it_with_a_warning(self):
        os.makedirs(os.path.join(self.path, uuidutils.generate_uuid()))
        code, out, err = self.host('init-storage', '--existing')
        self.assertEqual(0, code)
        self.assertIn('WARNING', err)
        self.assertIn('you vouch', err)
        identity = storage_identity.read(self.path).identity
        self.assertIn(identity, out)

    def test_init_storage_refuses_a_mount_point_that_is_not_mounted(self):
        os.makedirs(self.path)
        self.conf = self.write_conf('instances_path_must_be_mounted = '
                                    'true\n')
        code, _out, err = self.host('init-storage', '--existing')
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('not a mount point', err)
        self.assertEqual([], os.listdir(self.path))

    # -- init-storage --mount-point / --force ---------------------------

    def own_row(self, identity, must_be_mounted=None):
        """This host's (compute1's) nova-compute row, up."""
        db_api.configure(self.url)
        try:
            row = dbf.make_service(dbf.admin_context(), 'compute1',
                                   identity=identity)
            row.storage_must_be_mounted = must_be_mounted
            row.save()
        finally:
            db_api.dispose()

    def recorded_pair(self, host):
        db_api.configure(self.url)
        try:
            row = objects.Service.get_by_host_and_binary(
                dbf.admin_context(), host, 'nova-compute')
            return row.storage_identity, row.storage_must_be_mounted
        finally:
            db_api.dispose()

    def test_init_storage_mount_point_refuses_a_path_not_mounted(self):
        os.makedirs(self.path)
        test_storage_identity.MountTable(self)
        code, _out, err = self.host('init-storage', '--mount-point')
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('instances_path %s is not a mount point' % self.path,
                      err)
        self.assertEqual([], os.listdir(self.path))

    def test_init_storage_mount_point_flags_a_new_marker(self):
        os.makedirs(self.path)
        test_storage_identity.MountTable(self).mount(self.path)
        code, out, err = self.host('init-storage', '--mount-point')
        self.assertEqual((0, ''), (code, err))
        status = storage_identity.read(self.path)
        self.assertEqual((True, True), (status.must_be_mounted,
                                        status.mounted))
        self.assertEqual(status.identity + '\nmount-point\n', self.marker())
        self.assertIn('Created storage identity %s (must be a mount point)'
                      % status.identity, out)

    def test_init_storage_mount_point_flags_the_marker_there(self):
        identity = storage_identity.create(self.path)
        self.own_row(identity)
        test_storage_identity.MountTable(self).mount(self.path)
        code, out, _err = self.host('init-storage', '--mount-point')
        self.assertEqual(0, code)
        self.assertIn('%s now says instances_path is a mount point'
                      % storage_identity.marker_path(self.path), out)
        self.assertEqual(identity + '\nmount-point\n', self.marker())
        self.assertEqual((identity, True), self.recorded_pair('compute1'))

    def test_init_storage_records_a_first_identity(self):
        self.own_row(None)
        code, out, _err = self.host('init-storage')
        self.assertEqual(0, code)
        identity = storage_identity.read(self.path).identity
        self.assertIn('Host compute1: recorded storage identity none -> %s'
                      % identity, out)
        self.assertEqual((identity, False), self.recorded_pair('compute1'))

    def test_init_storage_under_a_missing_mount_needs_force(self):
        # compute1 recorded its NFS storage as a mount point; the mount
        # is gone and the directory under it has its old local marker.
        nfs = uuidutils.generate_uuid()
        self.own_row(nfs, True)
        local = storage_identity.create(self.path)
        before = self.marker()
        code, out, err = self.host('init-storage')
        self.assertEqual((manage.EXIT_FAILED, ''), (code, out))
        self.assertIn('host compute1 records storage identity %s (must be a '
                      'mount point), but %s has %s' % (nfs, self.path, local),
                      err)
        self.assertIn('--force', err)
        self.assertEqual((nfs, True), self.recorded_pair('compute1'))
        self.assertEqual(before, self.marker())
        # The operator makes the local directory the host's storage.
        code, out, _err = self.host('init-storage', '--force')
        self.assertEqual(0, code)
        self.assertIn('recorded storage identity %s (must be a mount point) '
                      '-> %s' % (nfs, local), out)
        self.assertEqual((local, False), self.recorded_pair('compute1'))
        self.assertEqual(before, self.marker())

    def test_init_storage_on_a_bare_mount_point_needs_force(self):
        recorded = uuidutils.generate_uuid()
        self.own_row(recorded)
        os.makedirs(self.path)
        code, _out, err = self.host('init-storage')
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('records storage identity %s, but %s has none'
                      % (recorded, self.path), err)
        self.assertEqual([], os.listdir(self.path))
        self.assertEqual((recorded, None), self.recorded_pair('compute1'))

    # -- record-storage-identity ---------------------------------------

    def test_records_a_marker_flagged_as_a_mount_point(self):
        storage_identity.mark_mount_point(self.other)
        test_storage_identity.MountTable(self).mount(self.other)
        code, out, _err = self.host('record-storage-identity', 'dead',
                                    '--from', self.other)
        self.assertEqual(0, code)
        self.assertIn('none -> %s (must be a mount point)'
                      % self.other_identity, out)
        self.assertEqual((self.other_identity, True),
                         self.recorded_pair('dead'))

    def test_dropping_a_recorded_mount_point_needs_force(self):
        db_api.configure(self.url)
        row = objects.Service.get_by_host_and_binary(
            dbf.admin_context(), 'dead', 'nova-compute')
        row.storage_identity = self.other_identity
        row.storage_must_be_mounted = True
        row.save()
        db_api.dispose()
        code, _out, err = self.host('record-storage-identity', 'dead',
                                    '--from', self.other)
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('--force', err)
        self.assertEqual((self.other_identity, True),
                         self.recorded_pair('dead'))
        code, _out, _err = self.host('record-storage-identity', 'dead',
                                     '--from', self.other, '--force')
        self.assertEqual(0, code)
        self.assertEqual((self.other_identity, False),
                         self.recorded_pair('dead'))

    def test_records_the_identity_of_a_dead_host(self):
        code, out, err = self.host('record-storage-identity', 'dead',
                                   '--from', self.other)
        self.assertEqual((0, ''), (code, err))
        self.assertIn('Host dead: storage identity none -> %s'
                      % self.other_identity, out)
        self.assertEqual(self.other_identity, self.recorded('dead'))
        # Read only.
        self.assertEqual(self.other_identity + '\n', self.marker(self.other))

    def test_records_the_identity_of_a_forced_down_host(self):
        code, _out, _err = self.host('record-storage-identity', 'forced',
                                     '--from', self.other)
        self.assertEqual(0, code)
        self.assertEqual(self.other_identity, self.recorded('forced'))

    def test_refuses_a_directory_without_a_valid_marker(self):
        garbage = os.path.join(self.tmp, 'garbage')
        os.makedirs(garbage)
        with open(storage_identity.marker_path(garbage), 'w') as f:
            f.write('not a uuid\n')
        link = os.path.join(self.tmp, 'link')
        os.makedirs(link)
        os.symlink(storage_identity.marker_path(self.other),
                   storage_identity.marker_path(link))
        empty = os.path.join(self.tmp, 'empty')
        os.makedirs(empty)
        for source, why in ((garbage, 'not a UUID'), (link, 'symlink'),
                            (empty, 'no storage identity marker'),
                            (os.path.join(self.tmp, 'nowhere'),
                             'no storage identity marker')):
            code, _out, err = self.host('record-storage-identity', 'dead',
                                        '--from', source)
            self.assertEqual(manage.EXIT_FAILED, code, source)
            self.assertIn(why, err)
            self.assertIn('nothing recorded', err)
        self.assertIsNone(self.recorded('dead'))

    def test_refuses_an_unknown_host(self):
        code, _out, err = self.host('record-storage-identity', 'nosuch',
                                    '--from', self.other)
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('host nosuch has no nova-compute service row', err)

    def test_refuses_a_host_that_is_up(self):
        code, _out, err = self.host('record-storage-identity', 'alive',
                                    '--from', self.other)
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('is up', err)
        self.assertIsNone(self.recorded('alive'))

    def test_replaces_another_identity_only_with_force(self):
        old = self.recorded('stale')
        code, _out, err = self.host('record-storage-identity', 'stale',
                                    '--from', self.other)
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('--force', err)
        self.assertEqual(old, self.recorded('stale'))
        code, out, _err = self.host('record-storage-identity', 'stale',
                                    '--from', self.other, '--force')
        self.assertEqual(0, code)
        self.assertIn('%s -> %s' % (old, self.other_identity), out)
        self.assertEqual(self.other_identity, self.recorded('stale'))

    def test_from_is_required(self):
        self.assertEqual(manage.EXIT_USAGE, self.host(
            'record-storage-identity', 'dead')[0])

    # -- purge-quarantine -----------------------------------------------

    def quarantined(self, days_ago):
        uuid = uuidutils.generate_uuid()
        idir = instancedir.InstanceDir(self.path, uuid)
        idir.create()
        with open(idir.file('disk'), 'w') as f:
            f.write('disk of %s' % uuid)
        return idir.quarantine('test', now=timeutils.utcnow(
            with_timezone=True) - datetime.timedelta(days=days_ago))

    def in_quarantine(self):
        return sorted(os.listdir(instancedir.quarantine_dir(self.path)))

    def test_purge_without_yes_is_a_dry_run(self):
        old, young = self.quarantined(8), self.quarantined(1)
        before = self.in_quarantine()
        code, out, err = self.host('purge-quarantine')
        self.assertEqual((0, ''), (code, err))
        self.assertIn('Dry run: 1 would be purged, 1 kept', out)
        row = next(line for line in out.splitlines() if old in line)
        self.assertIn('purge', row.split())
        row = next(line for line in out.splitlines() if young in line)
        self.assertIn('keep', row.split())
        self.assertEqual(before, self.in_quarantine())

    def test_purge_yes_deletes_what_is_older_than_the_maximum_age(self):
        old, young = self.quarantined(8), self.quarantined(1)
        code, out, _err = self.host('purge-quarantine', '--yes')
        self.assertEqual(0, code)
        self.assertIn('Purged %s' % old, out)
        self.assertEqual([os.path.basename(young)], self.in_quarantine())

    def test_purge_older_than(self):
        self.quarantined(8)
        self.quarantined(1)
        code, out, _err = self.host('purge-quarantine', '--older-than',
                                    '0', '--yes')
        self.assertEqual(0, code)
        self.assertIn('2 purged, 0 kept', out)
        self.assertEqual([], self.in_quarantine())

    def test_bad_older_than_is_a_usage_error_and_changes_nothing(self):
        self.quarantined(8)
        before = self.in_quarantine()
        for bad in ('-5', 'soon', 'nan'):
            code, _out, err = self.host('purge-quarantine', '--yes',
                                        '--older-than', bad)
            self.assertEqual(manage.EXIT_USAGE, code, bad)
            self.assertIn('--older-than', err)
        self.assertEqual(before, self.in_quarantine())

    def test_an_unusable_quarantine_deletes_nothing(self):
        # _quarantine is a symlink to a directory outside instances_path.
        self.quarantined(8)
        root = instancedir.quarantine_dir(self.path)
        outside = os.path.join(self.tmp, 'outside')
        os.rename(root, outside)
        os.symlink(outside, root)
        before = os.listdir(outside)
        code, _out, err = self.host('purge-quarantine', '--yes',
                                    '--older-than', '0')
        self.assertEqual(manage.EXIT_FAILED, code)
        self.assertIn('cannot be used', err)
        self.assertEqual(before, os.listdir(outside))


class HostOnTestDriverTestCase(base.TestCase):
    """nova-manage on compute1, a host of libvirt's test driver: its
    database (schema made), ``instances_path`` and node file paths, and
    ``write_conf`` for its nova.conf."""

    _run = ManageTestCase._run

    def setUp(self):
        super().setUp()
        self.addCleanup(CONF, [], project='nova', default_config_files=[])
        self.addCleanup(db_api.dispose)
        self.url = 'sqlite:///' + os.path.join(self.tmp, 'manage.sqlite')
        self.path = os.path.join(self.tmp, 'instances')
        self.node = os.path.join(self.tmp, 'node.xml')
        db_api.configure(self.url)
        migration.db_sync()

    def write_conf(self, extra=''):
        """compute1's nova.conf; ``extra``: more [DEFAULT] lines."""
        self.conf = os.path.join(self.tmp, 'host.conf')
        with open(self.conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\nhost = compute1\n'
                    'instances_path = %s\n%s'
                    'compute_driver = libvirt.LibvirtDriver\n'
                    '[libvirt]\nconnection_uri = test://%s\n'
                    '[database]\nconnection = %s\n'
                    % (self.state_path, self.path, extra, self.node,
                       self.url))


class HostReapTestCase(HostOnTestDriverTestCase):
    """nova-manage host reap on a test-driver host: the node file holds a
    domain of an instance of the host's own and one of a deleted
    instance."""

    def setUp(self):
        super().setUp()
        node = self.node
        ctx = dbf.admin_context()
        dbf.make_service(ctx, 'compute1',
                         identity=storage_identity.create(self.path))
        self.own = dbf.make_instance(ctx, 'compute1')
        # Deleted on compute2: its domain here is an orphan to stop, its
        # disks not compute1's (a delete made while compute1 was down
        # would be finished instead: test_reaper.TestPendingDeletes).
        self.deleted = dbf.make_instance(ctx, 'compute2')
        self.deleted.destroy()
        db_api.dispose()
        with open(node, 'w') as f:
            f.write(fixtures.NODE_XML.format(cpus=2, memory_kib=2 ** 22)
                    .replace('</node>', ''.join(
                        DOMAIN.format(uuid=i.uuid)
                        for i in (self.own, self.deleted)) + '</node>'))
        for instance in (self.own, self.deleted):
            idir = instancedir.InstanceDir(self.path, instance.uuid)
            idir.create()
            with open(idir.file('disk'), 'w') as f:
                f.write('disk of %s' % instance.uuid)
            with open(idir.file('disk.info'), 'w') as f:
                f.write('{"disk": "raw"}')
        self.part = os.path.join(self.path, self.own.uuid,
                                 'disk.part-%s' % uuidutils.generate_uuid())
        self.base = os.path.join(self.path, '_base', '0' * 40)
        os.makedirs(os.path.dirname(self.base))
        long_ago = time.time() - 3 * 24 * 3600
        for path in (self.part, self.base):
            with open(path, 'w') as f:
                f.write('stale')
            os.utime(path, (long_ago, long_ago))
        self.write_conf('shutdown_timeout = 1\n')

    def rows(self, out):
        return {(line.split()[0], line.split()[3])
                for line in out.splitlines()[2:-1]}

    def test_without_yes_is_a_dry_run(self):
        before = sha256_tree(self.path)
        code, out, _err = self._run('--config-file', self.conf, 'host',
                                    'reap')
        self.assertEqual(0, code)
        lines = out.splitlines()
        self.assertIn('Host compute1', lines[0])
        self.assertTrue(lines[1].startswith('KIND'))
        self.assertEqual({('domain', 'stop'), ('part', 'remove'),
                          ('base', 'remove')}, self.rows(out))
        self.assertIn(self.deleted.uuid, out)
        self.assertNotIn(self.own.uuid + '  ' + self.own.uuid, out)
        self.assertTrue(lines[-1].startswith('Dry run: 3 would be'))
        self.assertEqual(before, sha256_tree(self.path))

    def test_yes_reaps(self):
        own_disk = sha256_tree(os.path.join(self.path, self.own.uuid))
        code, out, _err = self._run('--config-file', self.conf, 'host',
                                    'reap', '--yes')
        self.assertEqual(0, code, out)
        self.assertEqual({('domain', 'stop'), ('part', 'remove'),
                          ('base', 'remove')}, self.rows(out))
        self.assertEqual('3 stopped or removed, 0 kept, 0 failed',
                         out.splitlines()[-1])
        self.assertFalse(os.path.exists(self.part))
        self.assertFalse(os.path.exists(self.base))
        own_disk.pop(os.path.basename(self.part))
        self.assertEqual(own_disk, sha256_tree(os.path.join(
            self.path, self.own.uuid)))
        # The deleted instance's disks are not the reaper's.
        self.assertTrue(os.path.exists(os.path.join(
            self.path, self.deleted.uuid, 'disk')))


class HostAuditQuarantineTestCase(HostOnTestDriverTestCase):
    """nova-manage host audit lists what the quarantine holds, on a
    test-driver host, and changes nothing."""

    def setUp(self):
        super().setUp()
        fixtures.write_node_xml(self.node)
        dbf.make_service(dbf.admin_context(), 'compute1',
                         identity=storage_identity.create(self.path))
        db_api.dispose()
        self.write_conf()

    def quarantined(self, days_ago, reason):
        idir = instancedir.InstanceDir(self.path, uuidutils.generate_uuid())
        idir.create()
        with open(idir.file('disk'), 'w') as f:
            f.write('disk of %s' % idir.uuid)
        return idir.uuid, idir.quarantine(reason, now=timeutils.utcnow(
            with_timezone=True) - datetime.timedelta(days=days_ago))

    def test_audit_lists_the_quarantine_and_keeps_it(self):
        old_uuid, old = self.quarantined(30, 'left by evacuation m-1')
        young_uuid, young = self.quarantined(0, 'host cleanup')
        before = sha256_tree(self.path)
        code, out, err = self._run('--config-file', self.conf, 'host',
                                   'audit')
        self.assertEqual((0, ''), (code, err))
        rows = {line.split()[2]: line.split()
                for line in out.splitlines() if line.startswith('quarant')}
        self.assertEqual({old, young}, set(rows))
        for path, uuid in ((old, old_uuid), (young, young_uuid)):
            self.assertEqual(['quarantined', uuid, path, 'quarantined'],
                             rows[path][:4])
            self.assertIn('keep', rows[path])
        self.assertIn('left by evacuation m-1', out)
        self.assertIn('0 to remove, 2 to keep', out)
        self.assertEqual(before, sha256_tree(self.path))
