"""Base class of every test: a private state directory, config overrides
that undo themselves, and a real database on demand.

Tests are unittest-style so that both stestr and pytest run them.
"""

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from nova.conf import CONF


def _parse_conf_once():
    # Parse with no files and no command line, so a developer's
    # /etc/nova/nova.conf never leaks into a test.
    if not getattr(CONF, '_nova_test_parsed', False):
        CONF([], project='nova', default_config_files=[])
        CONF._nova_test_parsed = True


@functools.cache
def _migrated_template():
    """A SQLite database this process migrated to the newest schema, which
    use_database copies for each test; made at the first use, removed at
    exit."""
    from nova.db import api as db_api
    from nova.db import migration

    directory = tempfile.mkdtemp(prefix='nova-test-schema-')
    atexit.register(shutil.rmtree, directory, True)
    path = os.path.join(directory, 'nova.sqlite')
    db_api.configure('sqlite:///' + path)
    try:
        migration.db_sync()
    finally:
        # Every connection closed: SQLite folds its write-ahead log into
        # the file, which alone is then the whole database.
        db_api.dispose()
    if os.path.exists(path + '-wal'):
        raise RuntimeError('%s-wal outlived its connections' % path)
    return path


class TestCase(unittest.TestCase):

    def setUp(self):
        super().setUp()
        _parse_conf_once()
        self.tmp = tempfile.mkdtemp(prefix='nova-test-')
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.state_path = os.path.join(self.tmp, 'state')
        os.makedirs(self.state_path)
        self.flags(state_path=self.state_path)

    def flags(self, group=None, **overrides):
        """Override options for this test only."""
        for name, value in overrides.items():
            CONF.set_override(name, value, group=group)
            self.addCleanup(CONF.clear_override, name, group=group)

    def use_database(self, url=None):
        """Point the DB API at a fresh, migrated database for this test.

        SQLite in the test's own directory unless ``url`` is given: a copy
        of one this process migrated once (``_migrated_template``), which
        is what migrating again would write, in a few milliseconds
        instead of 0.3 s. Another ``url`` is migrated here.
        """
        from nova.db import api as db_api
        from nova.db import migration

        migrate = url is not None
        if not migrate:
            path = os.path.join(self.tmp, 'nova.sqlite')
            shutil.copyfile(_migrated_template(), path)
            url = 'sqlite:///' + path
        db_api.configure(url)
        self.addCleanup(db_api.dispose)
        if migrate:
            migration.db_sync()
        return url

    def start_nova_process(self, module, config_file, log_path):
        """Run ``python -m <module> --config-file F`` (a console script of
        ours) with its output in ``log_path``; it is stopped at cleanup by
        the PID recorded here, never by name."""
        from nova.testing import procs

        with open(log_path, 'w') as log:
            popen = subprocess.Popen(
                [sys.executable, '-m', module, '--config-file', config_file],
                stdout=log, stderr=subprocess.STDOUT)
        record = procs.ProcessRecord.of(popen.pid)
        self.addCleanup(popen.wait, 30)
        self.addCleanup(procs.terminate, record, 30)
        return popen

    def serve_rpc(self, target, endpoints):
        """An oslo.messaging RPC server of ``endpoints`` on ``target``,
        over the transport ``nova.rpc`` was initialised with; stopped,
        and waited for, at cleanup."""
        from nova import rpc

        server = rpc.get_server(target, endpoints)
        server.start()

        def stop():
            server.stop()
            server.wait()
        self.addCleanup(stop)
        return server


def wait_until(predicate, timeout=30, interval=0.02):
    """Poll ``predicate`` until it is true or ``timeout`` seconds passed;
    its last value. A test waits for a condition, never for a time:
    ``timeout`` only bounds a wait that failed."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)
