"""nova-manage db sync / db version, in process and as a console script;
nova-manage host audit / cleanup in process."""

import contextlib
import io
import os
import subprocess
import sys

import sqlalchemy as sa

from nova.cmd import manage
from nova.conf import CONF
from nova.db import api as db_api
from nova.db import migration
from nova.tests import base
from nova.tests.unit.conductor import db_fixtures as dbf
from nova.tests.unit.virt.libvirt import fixtures
from nova.virt import instancedir


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
        identity = instancedir.storage_identity(self.path)
        dbf.make_service(ctx, 'compute1', identity=identity)
        dbf.make_service(ctx, 'compute3', identity=identity)   # shared
        self.own = dbf.make_instance(ctx, 'compute1')
        self.deleted = dbf.make_instance(ctx, 'compute1')
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
