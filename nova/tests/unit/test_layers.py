"""The layers of the code, held by reading it (``ast``), not by running it.

Top calls down, never up (doc/source/contributor/internals.rst, "Layers").
The product's units stand on an ordered list of floors, bottom first: a
unit may import only units on floors below its own (or beside it, where
its floor says so), so putting a name on a floor can never let anything
import upward. Most units also have a list, narrower than the floors, of
the units they may import; the ground floor (``nova/model``,
``nova.exception``) is importable by all. Imports are seen however they
are written: lazily inside a function, relative, or through
``importlib`` (see ``layering``). And the rules of the cleanup contract
and of the style:

* virt never reaches the database or the global configuration, not even
  through another module (``reach``);
* compute knows the virt contract, never a driver's insides, and drivers
  never import each other (the drivers are units of their own);
* only ``nova/virt/libvirt/binding.py`` imports libvirt;
* only ``nova/virt/instancedir.py`` deletes files or directories (its
  paths are built from validated UUIDs and checked to stay inside
  ``instances_path``), besides the image store, which lives elsewhere,
  and the RPC hub, which removes only its own Unix socket;
* options are declared and registered only in ``nova/conf/``;
* nothing imports a test package.

The test harnesses (``nova/testing``) and the tests are not product code
and are not held to the floors.
"""

import os
import tempfile
import textwrap
import unittest

import nova
from nova.tests.unit import layering
from nova.tests.unit.layering import Floor
from nova.tests.unit.layering import Tolerated

PRODUCT_DIR = os.path.dirname(os.path.abspath(nova.__file__))
NOT_PRODUCT = ('tests', 'testing')

# Bottom first. Placed as low as the code allows: what a unit imports is
# on a floor below it.
FLOORS = layering.Floors([
    # Ground: the vocabulary every layer speaks (model/ raises exceptions).
    # fileio: the one atomic write, for every layer that persists a file;
    # command: the one way to run an external program.
    Floor(frozenset({'command', 'exception', 'fileio', 'model'}),
          sideways=True),
    # Crash points: told where their settings are, read nothing else.
    Floor(frozenset({'crashpoint'})),
    # phases: the marks of an operation, crash points among them.
    Floor(frozenset({'conf', 'context', 'manager', 'phases', 'rpc_inproc',
                     'rpc_ipc'})),
    # Over the configuration.
    Floor(frozenset({'db', 'image', 'periodic'})),
    # The persistent objects over db/; the virt contract and what every
    # driver shares (instance directories, journals, ownership).
    Floor(frozenset({'objects', 'virt'})),
    # The drivers, over the contract, never over each other; the RPC
    # plumbing, which serialises objects.
    Floor(frozenset({'virt.fake', 'virt.libvirt', 'rpc'})),
    Floor(frozenset({'network', 'scheduler', 'service'})),
    Floor(frozenset({'compute'})),
    Floor(frozenset({'conductor'})),
    # nova-hamonitor: watches compute hosts, recovers them through the
    # compute API's host-evacuate.
    Floor(frozenset({'ha'})),
    Floor(frozenset({'api'})),
    # The nova CLI, over REST (api/ for microversions).
    Floor(frozenset({'cli'})),
    # Console scripts: wire everything below; no list of their own.
    Floor(frozenset({'cmd'})),
])

# Unit -> the units it may import, besides its own and the ground floor:
# narrower than the floors (an entry pointing up or sideways is still
# refused by them).
MAY_IMPORT = {
    'cli': {'api'},
    'api': {'compute', 'conf', 'context', 'image', 'objects'},
    'conductor': {'compute', 'conf', 'context', 'manager', 'objects',
                  'phases', 'rpc', 'scheduler'},
    'ha': {'compute', 'conf', 'crashpoint', 'objects'},
    'service': {'conf', 'context', 'manager', 'objects', 'periodic',
                'rpc'},
    # Compute drives the virt contract (never a driver's insides: it asks
    # the driver), the network and the image store.
    'compute': {'conf', 'context', 'crashpoint', 'image', 'manager',
                'network', 'objects', 'periodic', 'phases', 'rpc',
                'scheduler', 'virt'},
    'scheduler': {'conf', 'objects'},
    'network': {'conf', 'context', 'objects'},
    'objects': {'db'},
    'db': {'conf'},
    # Virt never reads the database or the global configuration (a driver
    # gets its host's settings) and knows nothing of the compute layer.
    'virt': {'crashpoint', 'image'},
    'virt.fake': {'virt', 'crashpoint', 'image'},
    'virt.libvirt': {'virt', 'crashpoint', 'image'},
    'image': {'conf'},
    # The serializer's objects (nova.objects.base, loaded by name).
    'rpc': {'context', 'objects', 'rpc_inproc', 'rpc_ipc'},
    'periodic': {'conf'},
    'crashpoint': set(),
    'phases': {'crashpoint'},
    'context': set(),
    'conf': {'crashpoint'},
    'manager': set(),
    'rpc_inproc': set(),
    'rpc_ipc': set(),
    'model': set(),
    'fileio': set(),
    'command': set(),
    'exception': set(),
}

# Layer -> the units it never reaches, directly or through any module.
NEVER_REACHES = {'virt': frozenset({'conf', 'db', 'objects'})}

LIBVIRT_BINDING = os.path.join('virt', 'libvirt', 'binding.py')
MAY_DELETE = frozenset({
    os.path.join('virt', 'instancedir.py'),
    # An atomic write's own temporary file, when the write failed.
    'fileio.py',
    # Image metadata in the image store, outside instances_path.
    os.path.join('image', 'store.py'),
    # The RPC hub's own Unix socket (only a socket: any other file at its
    # path is refused and kept) and the empty private directory it made.
    'rpc_ipc.py'})
OPTIONS_HOME = 'conf'
OPTION_CALLS = frozenset({'register_opt', 'register_opts',
                          'register_cli_opt', 'register_cli_opts',
                          'register_group'})

# Found in the product when the checker learnt to see them: each is a
# question for its owner, not a permission; delete the entry with the fix.
FOUND_BY_THE_STRICTER_CHECK: tuple[Tolerated, ...] = ()
TOLERATED = FOUND_BY_THE_STRICTER_CHECK


def violations(product_dir):
    """Every rule broken in the tree under ``product_dir``, tolerated or
    not."""
    modules = layering.read_tree(product_dir, NOT_PRODUCT)
    found = layering.layer_violations(modules, FLOORS, MAY_IMPORT,
                                      NOT_PRODUCT)
    for layer, never in NEVER_REACHES.items():
        found += layering.reach_violations(modules, FLOORS, layer, never)
    found += layering.libvirt_violations(modules, LIBVIRT_BINDING)
    found += layering.deletion_violations(modules, MAY_DELETE)
    found += layering.option_violations(modules, OPTIONS_HOME, OPTION_CALLS)
    return found


def untolerated(found):
    return [str(v) for v in found
            if not any(t.covers(v) for t in TOLERATED)]


class LayersTest(unittest.TestCase):
    """The product holds to the rules."""

    @classmethod
    def setUpClass(cls):
        cls.modules = layering.read_tree(PRODUCT_DIR, NOT_PRODUCT)
        cls.found = violations(PRODUCT_DIR)

    def test_every_module_is_on_a_floor(self):
        self.assertEqual([], [m.path for m in self.modules.values()
                              if m.name != layering.PRODUCT
                              and FLOORS.unit_of(m.name) is None])

    def test_every_list_points_down(self):
        # A list naming a unit beside or above would be refused by the
        # floors anyway; a list that says so is a list that misleads.
        wrong = ['%s -> %s: %s' % (source, target,
                                   FLOORS.why_not(source, target))
                 for source, targets in MAY_IMPORT.items()
                 for target in targets
                 if FLOORS.why_not(source, target)]
        self.assertEqual([], wrong)
        self.assertEqual(set(), set(MAY_IMPORT) - set(FLOORS.height))

    def test_nothing_breaks_a_rule(self):
        self.assertEqual([], untolerated(self.found))

    def test_every_tolerated_exception_is_still_needed(self):
        # Once fixed, an exception must go, or it would hide the next one.
        stale = [t for t in TOLERATED
                 if not any(t.covers(v) for v in self.found)]
        self.assertEqual([], stale)


class TheCheckCanFail(unittest.TestCase):
    """The checks above, shown failing on trees written to break them."""

    def setUp(self):
        # A temporary directory of unittest's own, so that stestr runs
        # this as pytest does.
        tmp = tempfile.TemporaryDirectory(prefix='nova-layers-')
        self.addCleanup(tmp.cleanup)
        self.tmp_path = tmp.name

    def tree(self, files):
        """Write ``files`` (path under nova/ -> source) and check them."""
        product_dir = os.path.join(self.tmp_path, 'nova')
        for path, source in files.items():
            full = os.path.join(product_dir, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, 'w') as f:
                f.write(textwrap.dedent(source))
        self.found = violations(product_dir)
        return [str(v) for v in self.found]

    def test_an_upward_import_is_caught(self):
        self.assertEqual(
            ['virt/driver.py:1 virt imports nova.objects.instance, '
             'beside it'],
            self.tree({'virt/driver.py':
                       'from nova.objects import instance\n'}))

    def test_an_import_off_the_list_is_caught(self):
        self.assertEqual(
            ['api/servers.py:1 api imports nova.db.api, not in its list'],
            self.tree({'api/servers.py': 'from nova.db import api\n'}))

    def test_a_lazy_import_is_caught_too(self):
        self.assertEqual(
            ['network/events.py:3 network imports nova.compute.rpcapi, '
             'above it'],
            self.tree({'network/events.py': '''\
                def sender():
                    x = 1
                    from nova.compute import rpcapi
                '''}))

    def test_a_test_package_import_is_caught(self):
        self.assertEqual(
            ['network/agent.py:1 imports the test package nova.tests.base',
             'network/agent.py:2 imports the test package '
             'nova.testing.hypervisor'],
            self.tree({'network/agent.py':
                       'import nova.tests.base\n'
                       'from nova.testing import hypervisor\n'}))

    def test_an_import_through_importlib_is_caught(self):
        self.assertEqual(
            ['db/api.py:3 db imports nova.objects.base, above it',
             'db/api.py:4 db imports nova.compute, above it',
             'db/api.py:5 db imports nova.scheduler.target, above it',
             'db/api.py:6 db imports nova.network.api, above it',
             'db/api.py:7 db imports nova.conductor.manager, above it'],
            self.tree({'db/api.py': '''\
                import importlib
                from importlib import import_module as load
                importlib.import_module('nova.objects.base')
                load('nova.compute.' + 'anything')
                __import__(f'nova.scheduler.target')
                importlib.import_module('.api', package='nova.network')
                importlib.import_module(WHERE)
                WHERE = 'nova.conductor.manager'
                '''}))

    def test_a_dynamic_import_that_names_no_unit_is_caught(self):
        self.assertEqual(
            ['image/store.py:2 image imports nova.nowhere, which is on no '
             'floor'],
            self.tree({'image/store.py':
                       'import importlib\n'
                       "importlib.import_module('nova.nowhere.' + name)\n"}))

    def test_a_relative_import_is_caught(self):
        self.assertEqual(
            ['objects/instance.py:1 objects imports nova.compute.states, '
             'above it',
             'objects/instance.py:2 objects imports nova.network, above it',
             'virt/libvirt/host.py:1 virt.libvirt imports nova.virt.fake.'
             'FakeDriver, beside it'],
            self.tree({
                'objects/instance.py': ('from ..compute import states\n'
                                        'from .. import network\n'
                                        'from .base import x\n'),
                'objects/base.py': 'x = 1\n',
                'virt/libvirt/host.py': 'from ..fake import FakeDriver\n',
            }))

    def test_drivers_never_import_each_other(self):
        self.assertEqual(
            ['virt/fake.py:1 virt.fake imports nova.virt.libvirt.config, '
             'beside it',
             'virt/libvirt/driver.py:1 virt.libvirt imports '
             'nova.virt.fake, beside it'],
            self.tree({
                'virt/fake.py': 'from nova.virt.libvirt import config\n',
                'virt/libvirt/driver.py': 'import nova.virt.fake\n',
            }))

    def test_compute_never_imports_a_drivers_insides(self):
        self.assertEqual(
            ['compute/audit.py:1 compute imports '
             'nova.virt.libvirt.imagecache, not in its list',
             'compute/audit.py:2 compute imports nova.virt.fake, '
             'not in its list'],
            self.tree({'compute/audit.py':
                       'from nova.virt.libvirt import imagecache\n'
                       'from nova.virt import fake\n'}))

    def test_virt_reaching_the_configuration_indirectly_is_caught(self):
        found = self.tree({
            'virt/driver.py': 'from nova import crashpoint\n'
                              'from nova.image import meta\n',
            'crashpoint.py': 'from nova.conf import CONF\n',
            'image/meta.py': 'from nova.image import sizes\n',
            # The configuration, two modules away from virt.
            'image/sizes.py': 'def f():\n    from nova import conf\n',
            'image/__init__.py': '',
            'conf/__init__.py': '',
        })
        self.assertEqual(
            ['crashpoint.py:1 imports nova.conf.CONF: virt reaches '
             'nova.conf.CONF through virt/driver.py:1',
             'image/sizes.py:2 imports nova.conf: virt reaches nova.conf '
             'through virt/driver.py:2 -> image/meta.py:1'],
            [v for v in found if 'reaches' in v])
        # crashpoint sits below the configuration: its import is refused
        # on its own too, not only as virt's way there.
        self.assertIn('crashpoint.py:1 crashpoint imports nova.conf.CONF, '
                      'above it', found)

    def test_a_package_reached_runs_its_init(self):
        self.assertEqual(
            ['image/__init__.py:1 imports nova.db.api: virt reaches '
             'nova.db.api through virt/driver.py:1'],
            [v for v in self.tree({
                'virt/driver.py': 'from nova.image import meta\n',
                # Not imported by name: Python runs it before image.meta.
                'image/__init__.py': 'import nova.db.api\n',
                'image/meta.py': '',
                'db/api.py': '',
            }) if 'reaches' in v])

    def test_only_the_binding_imports_libvirt(self):
        self.assertEqual(
            ['virt/libvirt/host.py:1 imports libvirt',
             'virt/libvirt/host.py:3 imports libvirt'],
            self.tree({
                'virt/libvirt/host.py': 'import libvirt\nimport importlib\n'
                                        "importlib.import_module('libvirt')\n",
                'virt/libvirt/binding.py': 'import libvirt\n',
            }))

    def test_every_way_to_name_a_deleter_is_caught(self):
        self.assertEqual(
            ['virt/journal.py:8 deletes with rmtree',
             'virt/journal.py:9 deletes with fileutils.delete_if_exists',
             'virt/journal.py:10 deletes with o.remove',
             'virt/journal.py:11 deletes with unlink',
             'virt/journal.py:12 deletes with path.unlink',
             'virt/journal.py:13 deletes with '
             'oslo_utils.fileutils.remove_path_on_error',
             'virt/journal.py:14 deletes with shutil.rmtree'],
            self.tree({'virt/journal.py': '''\
                import os as o
                import shutil
                from os import unlink
                from shutil import rmtree

                from oslo_utils import fileutils
                import oslo_utils.fileutils
                rmtree(p)
                fileutils.delete_if_exists(p)
                o.remove(p)
                callbacks.append(unlink)
                path.unlink()
                oslo_utils.fileutils.remove_path_on_error(p)
                shutil.rmtree(p)
                fileutils.ensure_tree(p)
                items.remove(p)
                '''}))

    def test_the_deleters_allowed_may(self):
        self.assertEqual([], self.tree({
            'virt/instancedir.py': 'import shutil\nshutil.rmtree(p)\n',
            'image/store.py': 'import os\nos.unlink(p)\n'}))

    def test_options_outside_conf_are_caught(self):
        self.assertEqual(
            ['compute/api.py:2 declares StrOpt',
             'compute/api.py:3 declares register_opts'],
            self.tree({'compute/api.py': 'from oslo_config import cfg\n'
                                         "cfg.StrOpt('x')\n"
                                         'CONF.register_opts([])\n'}))

    def test_downward_and_ground_imports_pass(self):
        self.assertEqual([], self.tree({
            'compute/manager.py': 'from nova.virt import driver\n'
                                  'from nova.model import vm_states\n'
                                  'from nova import exception\n'
                                  'from . import states\n',
            'model/vm_states.py': 'from nova import exception\n',
            'virt/libvirt/host.py': 'from nova.virt import event\n'
                                    'from . import guest\n',
            'virt/driver.py': 'import importlib\n'
                              "importlib.import_module('nova.virt.' + n)\n",
        }))

    def test_the_floors_refuse_an_upward_list(self):
        # Listing a unit above would not let the import through.
        floors = layering.Floors(FLOORS.floors)
        self.assertEqual('above it', floors.why_not('objects', 'compute'))
        self.assertEqual('beside it', floors.why_not('virt.fake',
                                                     'virt.libvirt'))
        with self.assertRaises(ValueError):
            layering.Floors(FLOORS.floors + (Floor(frozenset({'db'})),))
