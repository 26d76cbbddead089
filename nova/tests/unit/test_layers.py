"""The layers of the code, held by reading it (``ast``), not by running it.

Top calls down, never up (doc/source/contributor/internals.rst, "Layers").
For each package of the product, the packages of the project it may
import, directly or lazily inside a function; the vocabulary in
``nova/model`` at the bottom, importable by all. And four rules of the
cleanup contract and of the style:

* only ``nova/virt/libvirt/binding.py`` imports libvirt;
* only ``nova/virt/instancedir.py`` deletes files or directories (its
  paths are built from validated UUIDs and checked to stay inside
  ``instances_path``), besides the image store, which lives elsewhere,
  and ``nova/fileio.py``, which removes only its own temporary file;
* options are declared and registered only in ``nova/conf/``;
* nothing imports a test package.

The test harnesses (``nova/testing``) and the tests are not product code
and are not held to the table.
"""

import ast
import os
import unittest

import nova

ROOT = os.path.dirname(os.path.abspath(nova.__file__))

# Ground floor: importable from anywhere in the product.
GROUND = {'exception', 'fileio', 'model'}

# package -> the project's packages it may import (GROUND always).
ALLOWED = {
    'cmd': {'*'},
    'cli': {'api'},
    'api': {'compute', 'conf', 'context', 'image', 'objects'},
    'conductor': {'compute', 'conf', 'context', 'manager', 'objects', 'rpc',
                  'scheduler'},
    'service': {'conf', 'context', 'manager', 'objects', 'periodic',
                'rpc'},
    # Compute drives the virt drivers, the network and the image store,
    # and is the only layer that knows a driver's kind (its reaper reads
    # the libvirt image cache).
    'compute': {'conf', 'context', 'crashpoint', 'image', 'manager',
                'network', 'objects', 'periodic', 'rpc', 'scheduler',
                'virt'},
    'scheduler': {'conf', 'objects'},
    'network': {'conf', 'context', 'objects'},
    'objects': {'db'},
    'db': {'conf'},
    # Virt never reads the database or the global configuration (a driver
    # gets its host's settings) and knows nothing of the compute layer.
    'virt': {'crashpoint', 'image'},
    'image': {'conf'},
    'rpc': {'context'},
    'periodic': {'conf'},
    'crashpoint': {'conf'},
    'context': set(),
    'conf': set(),
    'manager': set(),
    'model': set(),
    'exception': set(),
    'fileio': set(),
    'rpc_inproc': set(),
    'version': set(),
}
NOT_PRODUCT = ('tests', 'testing')

DELETERS = {('os', 'remove'), ('os', 'unlink'), ('os', 'rmdir'),
            ('os', 'removedirs'), ('shutil', 'rmtree')}
MAY_DELETE = {'virt/instancedir.py',
              # Image metadata in the image store, outside instances_path.
              'image/store.py',
              # Only the temporary of a write that failed.
              'fileio.py'}
OPTION_CALLS = {'register_opt', 'register_opts', 'register_cli_opt',
                'register_cli_opts', 'register_group'}


def product_files():
    """(path relative to nova/, parsed module) of every product module."""
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel_dir = os.path.relpath(dirpath, ROOT)
        if rel_dir.split(os.sep)[0] in NOT_PRODUCT:
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if d != '__pycache__']
        for name in filenames:
            if name.endswith('.py'):
                path = os.path.normpath(os.path.join(rel_dir, name))
                with open(os.path.join(ROOT, path)) as f:
                    yield path, ast.parse(f.read(), path)


def package_of(path: str) -> str:
    """The layer of a module (``compute/api.py`` -> ``compute``)."""
    first = path.split(os.sep)[0]
    return first[:-3] if first.endswith('.py') else first


def imported_modules(tree):
    """(line, dotted module name) of every import, top-level or lazy."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.level == 0:
            for alias in node.names:
                yield node.lineno, '%s.%s' % (node.module, alias.name)


def layer_violations(path, tree):
    """The imports of ``path`` its layer may not make."""
    package = package_of(path)
    allowed = ALLOWED[package] | GROUND | {package}
    found = []
    for line, module in imported_modules(tree):
        parts = module.split('.')
        if parts[0] != 'nova' or len(parts) < 2:
            continue
        target = parts[1]
        if target in NOT_PRODUCT:
            found.append('%s:%d imports the test package %s'
                         % (path, line, module))
        elif '*' not in allowed and target not in allowed:
            found.append('%s:%d: %s imports %s' % (path, line, package,
                                                   module))
    return found


class LayersTest(unittest.TestCase):

    def test_every_package_has_a_row(self):
        packages = {package_of(path) for path, _tree in product_files()}
        self.assertEqual(set(), packages - set(ALLOWED) - {'__init__'})

    def test_nothing_imports_upward(self):
        found = []
        for path, tree in product_files():
            if package_of(path) != '__init__':
                found.extend(layer_violations(path, tree))
        self.assertEqual([], found)

    def test_only_the_binding_imports_libvirt(self):
        found = [
            '%s:%d' % (path, line)
            for path, tree in product_files()
            for line, module in imported_modules(tree)
            if module.split('.')[0] == 'libvirt'
            and path != os.path.join('virt', 'libvirt', 'binding.py')]
        self.assertEqual([], found)

    def test_only_instancedir_deletes(self):
        found = []
        for path, tree in product_files():
            if path in MAY_DELETE:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(
                        node.func, ast.Attribute):
                    owner = node.func.value
                    name = (owner.id if isinstance(owner, ast.Name)
                            else None, node.func.attr)
                    if name in DELETERS or node.func.attr == 'unlink':
                        found.append('%s:%d %s' % (path, node.lineno,
                                                   ast.unparse(node.func)))
        self.assertEqual([], found)

    def test_options_live_in_conf(self):
        found = []
        for path, tree in product_files():
            if package_of(path) == 'conf':
                continue
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else \
                    getattr(func, 'id', '')
                if name in OPTION_CALLS or (name.endswith('Opt') and
                                            name[:1].isupper()):
                    found.append('%s:%d %s' % (path, node.lineno, name))
        self.assertEqual([], found)


class TheCheckCanFail(unittest.TestCase):
    """The checks above, shown failing on code written to break them."""

    def violations(self, path, source):
        return layer_violations(path, ast.parse(source))

    def test_an_upward_import_is_caught(self):
        self.assertEqual(
            ['virt/driver.py:1: virt imports nova.objects.instance'],
            self.violations('virt/driver.py',
                            'from nova.objects import instance\n'))
        self.assertEqual(
            ['objects/instance.py:2: objects imports nova.compute.states'],
            self.violations('objects/instance.py',
                            'import os\nfrom nova.compute import states\n'))
        self.assertEqual(
            ['network/agent.py:1 imports the test package '
             'nova.tests.base'],
            self.violations('network/agent.py',
                            'import nova.tests.base\n'))

    def test_a_lazy_import_is_caught_too(self):
        self.assertEqual(
            ['network/events.py:3: network imports nova.compute.rpcapi'],
            self.violations('network/events.py',
                            'def sender():\n    x = 1\n'
                            '    from nova.compute import rpcapi\n'))

    def test_downward_and_ground_imports_pass(self):
        self.assertEqual([], self.violations(
            'compute/manager.py',
            'from nova.virt import driver\nfrom nova.model import '
            'vm_states\nfrom nova import exception\n'))
