"""nova-manage db sync / db version, in process and as a console script."""

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
