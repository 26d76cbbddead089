"""What the services load at start: not the libraries that only some
configurations use.

Each probe runs in a fresh interpreter (this one has loaded everything
long ago) with the checkout's nova first on the path, and reports which
of ``WATCHED`` it has loaded once its code has run.
"""

import json
import os
import shutil
import subprocess
import sys

from nova import conf as nova_conf
from nova.tests import base
from nova.tests.fixtures import libvirt_host

# By top-level package or module: keystoneauth1 and what it imports
# (about 6 MiB and 160 modules); PostgreSQL's SQLAlchemy dialect (about
# 2 MiB, 20 modules).
KEYSTONEAUTH = ('keystoneauth1', 'requests', 'urllib3', 'charset_normalizer')
POSTGRESQL = ('sqlalchemy.dialects.postgresql',)
# The standard library's, used only by a REST event sender and the
# benchmarks' phase summaries (about 0.5 MiB together).
ON_DEMAND = ('urllib.request', 'statistics')
# PyYAML (about 1 MiB), which oslo.utils' fileutils imports: nova makes
# its directories and removes its files with os.
YAML = ('yaml',)
# The control plane's tables and their mappers (about 1 MiB).
CONTROL_MODELS = ('nova.db.control_models',)
# The objects that read and write only those tables: the flavors'
# queries (nova-compute gets an instance's flavor with the instance),
# server groups (a deleted server leaves its group with the instance)
# and servers' metadata (the API's and nova-hamonitor's).
CONTROL_OBJECTS = ('nova.objects.flavor_catalog',
                   'nova.objects.instance_group',
                   'nova.objects.instance_metadata')
WATCHED = (KEYSTONEAUTH + POSTGRESQL + ON_DEMAND + YAML + CONTROL_MODELS
           + CONTROL_OBJECTS)
# Tables nova-compute never reads nor writes, by name: here, not read
# from nova.db.control_models, so that one defined in nova.db.models
# again (which nova-compute imports) is seen.
CONTROL_TABLES = ('flavors', 'flavor_projects', 'flavor_extra_specs',
                  'instance_groups', 'instance_metadata')
NOT_THE_API = ('nova.cmd.compute', 'nova.cmd.conductor',
               'nova.cmd.hamonitor', 'nova.cmd.manage')
TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(nova_conf.__file__))))
PROBE = '''
import json, sys
%s
watched = %r
print(json.dumps(sorted(w for w in watched if any(
    m == w or m.startswith(w + '.') for m in sys.modules))))
'''
# The tables mapped once ``code`` has run.
TABLES_PROBE = '''
import json
%s
from nova.db import models
print(json.dumps(sorted(models.Base.metadata.tables)))
'''
# nova-compute's main up to serving (nova.cmd.compute.main), stopped then.
COMPUTE_START = '''
from nova.cmd import compute
from nova.conf import CONF
from nova.conf import host_settings
from nova import service
service.prepare_service(compute.BINARY, ['--config-file', %r])
settings = host_settings.HostSettings.from_conf(CONF)
svc = compute.build_compute_service(settings)
assert svc.start()
svc.stop()
'''
# nova-compute's manager on the fake driver: its start, a build, reboot,
# stop and start, a failed stop (fault and error event), the resource
# report and a delete; then the mappers SQLAlchemy has configured.
COMPUTE_OPERATIONS = '''
import json
import unittest

from nova.compute import manager as compute_manager
from nova.db import models
from nova import exception
from nova.model import task_states
from nova.model import vm_states
from nova.tests.fixtures import compute as fixtures


class Operations(fixtures.ComputeTestCase):

    def test(self):
        manager = compute_manager.ComputeManager(self.settings,
                                                 driver=self.driver)
        manager.init_host()
        instance = self.new_instance(task_state=task_states.SCHEDULING)
        manager.build_and_run_instance(self.context, instance, image_meta={},
                                       network_info=self.network_info())
        for method, state in (
                (manager.reboot_instance, task_states.REBOOTING),
                (manager.stop_instance, task_states.POWERING_OFF),
                (manager.start_instance, task_states.POWERING_ON)):
            instance.task_state = state
            instance.save()
            method(self.context, instance)
        self.driver.fail_at('power_off')
        instance.task_state = task_states.POWERING_OFF
        instance.save()
        self.assertRaises(exception.InstancePowerOffFailure,
                          manager.stop_instance, self.context, instance)
        manager.update_available_resource(self.context)
        instance.task_state = task_states.DELETING
        instance.save()
        manager.terminate_instance(self.context, instance)
        self.assertEqual(vm_states.DELETED, self.reload(instance).vm_state)


result = unittest.TextTestRunner(verbosity=0).run(Operations('test'))
assert result.wasSuccessful(), result.errors + result.failures
print(json.dumps(sorted(m.class_.__name__
                        for m in models.Base.registry.mappers
                        if m.configured)))
'''
COMPUTE_CONF = '''[DEFAULT]
host = compute1
state_path = %(tmp)s
transport_url = inproc://
[libvirt]
connection_uri = test://%(tmp)s/node.xml
[database]
connection = sqlite:///%(tmp)s/nova.sqlite
'''


def _run(script):
    """What ``script`` printed last, as JSON, from a fresh interpreter."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(
        [TOP] + [p for p in [env.get('PYTHONPATH')] if p])
    result = subprocess.run(
        [sys.executable, '-W', 'ignore', '-c', script],
        capture_output=True, text=True, env=env, timeout=120)
    if result.returncode:
        raise AssertionError(result.stderr)
    return json.loads(result.stdout.splitlines()[-1])


def probe(code):
    """The names of ``WATCHED`` loaded once ``code`` has run."""
    return _run(PROBE % (code, WATCHED))


def mapped_tables(code):
    """The tables in ``nova.db.models.Base.metadata`` once ``code`` has
    run."""
    return _run(TABLES_PROBE % code)


class ServicesAtStartTest(base.TestCase):

    def _compute_conf(self, extra=''):
        """A nova-compute of libvirt's test driver on a migrated SQLite
        database; its configuration file."""
        shutil.copy(base._migrated_template(),
                    os.path.join(self.tmp, 'nova.sqlite'))
        libvirt_host.write_node_xml(os.path.join(self.tmp, 'node.xml'))
        path = os.path.join(self.tmp, 'nova.conf')
        with open(path, 'w') as f:
            f.write(COMPUTE_CONF % {'tmp': self.tmp} + extra)
        return path

    def test_nova_compute_starts_without_them(self):
        self.assertEqual(
            [], probe(COMPUTE_START % self._compute_conf()))

    def test_nova_compute_maps_none_of_the_control_planes_tables(self):
        tables = mapped_tables(COMPUTE_START % self._compute_conf())
        self.assertEqual([], [t for t in CONTROL_TABLES if t in tables])
        # The names are of tables that exist (the check above would pass
        # for a name that never did).
        every = mapped_tables('import nova.db.control_models')
        self.assertLessEqual(set(CONTROL_TABLES), set(every))

    def test_nova_compute_never_configures_the_orm(self):
        # Its statements select table columns (Model.__table__.c): a
        # mapped class or attribute among a SELECT's columns, or an ORM
        # DELETE through a Session, makes SQLAlchemy configure every
        # mapper (about 0.5 MiB) that nova-compute has no use for. On the
        # commit before this check the probe lists all 13.
        self.assertEqual([], _run(COMPUTE_OPERATIONS))

    def test_no_service_but_the_api_imports_keystoneauth(self):
        # nova-manage loads the PostgreSQL dialect (alembic's migrations
        # do): only keystoneauth is looked for.
        for module in NOT_THE_API:
            loaded = probe('import %s\n'
                           'from nova.conf import CONF\n'
                           "CONF([], project='nova', default_config_files=[])"
                           % module)
            self.assertEqual([], [name for name in loaded
                                  if name in KEYSTONEAUTH], module)

    def test_the_probe_sees_keystoneauth_when_glance_needs_it(self):
        # The checks above could pass by looking in the wrong place.
        path = self._compute_conf('[image]\nbackend = glance\n'
                                  '[glance]\n'
                                  'api_servers = http://127.0.0.1:9/\n')
        loaded = probe('from nova.conf import CONF, host_settings\n'
                       "CONF(['--config-file', %r], project='nova')\n"
                       'host_settings.HostSettings.from_conf(CONF)' % path)
        self.assertEqual(sorted(KEYSTONEAUTH),
                         [name for name in loaded if name in KEYSTONEAUTH])

    def test_the_probe_sees_what_their_users_import(self):
        loaded = probe('from nova import phases\n'
                       'phases.summarize([])\n'
                       'from nova.network import events\n'
                       "events.RESTEventSender('http://127.0.0.1:9/v2.1',"
                       " 't').send(None, [])")
        self.assertEqual(sorted(ON_DEMAND),
                         sorted(name for name in loaded
                                if name in ON_DEMAND))

    def test_the_probe_sees_the_postgresql_dialect(self):
        loaded = probe('import nova.cmd.compute\n'
                       'import sqlalchemy.dialects.postgresql')
        self.assertEqual(list(POSTGRESQL),
                         [name for name in loaded if name in POSTGRESQL])

    def test_the_probe_sees_yaml_through_oslo_fileutils(self):
        self.assertEqual(list(YAML),
                         probe('from oslo_utils import fileutils'))

    def test_the_probe_sees_the_control_plane_tables(self):
        loaded = probe('from nova.compute import aggregates')
        self.assertEqual(list(CONTROL_MODELS),
                         [name for name in loaded if name in CONTROL_MODELS])

    def test_the_probe_sees_the_control_planes_objects(self):
        self.assertEqual(sorted(CONTROL_MODELS + CONTROL_OBJECTS),
                         probe('from nova.objects import flavor_access\n'
                               'from nova.objects import instance_group\n'
                               'from nova.objects import instance_metadata'))
