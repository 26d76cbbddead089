"""Reads a source tree's imports and deletions without running it (``ast``).

The mechanism behind ``test_layers``; the policy (the floors, who may
delete, the tolerated exceptions) lives there. Kept apart so the same
checker runs on the product and on small trees written to break it.

An import is seen however it is written: ``import a.b``, ``from a import
b``, relative (``from . import b``, ``from ..x import y``), lazily inside a
function, or through ``importlib`` / ``__import__`` / oslo's
``importutils`` with a name the code spells out (a constant, or a constant
prefix such as ``'nova.virt.' + name``, held to the unit the prefix names).
A name the code only computes at run time (read from a message, say) has no
layer to check and is not reported.

A deletion is seen through any name bound to a deleting function
(``from shutil import rmtree``, ``from oslo_utils import fileutils``,
``import os as o``), called or merely passed on, and through the methods
that delete whatever object they are called on (``Path.unlink``).
"""

import ast
import collections
import dataclasses
import os
import typing

PRODUCT = 'nova'

# Callables whose first argument names a module to import.
DYNAMIC_IMPORTERS = frozenset({
    'importlib.import_module', '__import__',
    'oslo_utils.importutils.import_module',
    'oslo_utils.importutils.import_class',
    'oslo_utils.importutils.import_object',
    'oslo_utils.importutils.try_import',
})
DELETERS = frozenset({
    'os.remove', 'os.unlink', 'os.rmdir', 'os.removedirs',
    'shutil.rmtree',
    'oslo_utils.fileutils.delete_if_exists',
    'oslo_utils.fileutils.remove_path_on_error',
})
# Deleting methods, whatever they are called on (pathlib, or a module
# under a name the checker could not follow).
DELETING_METHODS = frozenset({'unlink', 'rmdir', 'rmtree',
                              'delete_if_exists', 'remove_path_on_error'})


@dataclasses.dataclass(frozen=True)
class Module:
    name: str          # dotted: nova.virt.driver
    path: str          # relative to the product's directory: virt/driver.py
    tree: ast.Module
    is_package: bool


@dataclasses.dataclass(frozen=True)
class Import:
    line: int
    target: str        # absolute dotted name; may end with an attribute
    how: str           # 'import', 'relative' or 'dynamic'


@dataclasses.dataclass(frozen=True)
class Violation:
    rule: str          # 'layers', 'libvirt', 'deletes', 'reach', ...
    path: str
    line: int
    target: str        # the dotted name the rule objects to
    detail: str

    def __str__(self) -> str:
        return '%s:%d %s' % (self.path, self.line, self.detail)


@dataclasses.dataclass(frozen=True)
class Floor:
    """Units of the same height. ``sideways``: they may import each other
    (otherwise only floors below)."""
    units: frozenset[str]
    sideways: bool = False


@dataclasses.dataclass(frozen=True)
class Tolerated:
    """A violation the policy lets stand, and why. ``target`` matches the
    violation's target or any name under it."""
    rule: str
    path: str
    target: str
    why: str

    def covers(self, violation: Violation) -> bool:
        return (violation.rule == self.rule and violation.path == self.path
                and _under(violation.target, self.target))


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + '.')


# -- reading a tree -----------------------------------------------------------

def read_tree(product_dir: str, not_product: typing.Iterable[str] = ()
              ) -> dict[str, Module]:
    """Every module under ``product_dir`` by dotted name, skipping the
    top-level packages named in ``not_product``."""
    skipped = set(not_product)
    modules = {}
    for dirpath, dirnames, filenames in os.walk(product_dir):
        rel_dir = os.path.relpath(dirpath, product_dir)
        if rel_dir.split(os.sep)[0] in skipped:
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if d != '__pycache__')
        for filename in sorted(filenames):
            if not filename.endswith('.py'):
                continue
            path = os.path.normpath(os.path.join(rel_dir, filename))
            parts = [PRODUCT] + path[:-3].split(os.sep)
            is_package = parts[-1] == '__init__'
            if is_package:
                parts.pop()
            with open(os.path.join(product_dir, path)) as f:
                tree = ast.parse(f.read(), path)
            name = '.'.join(parts)
            modules[name] = Module(name, path, tree, is_package)
    return modules


def _package_of(module: Module) -> str:
    """The package relative imports start from."""
    if module.is_package:
        return module.name
    return module.name.rpartition('.')[0]


def _resolve_relative(module: Module, level: int, name: str | None) -> str:
    base = _package_of(module).split('.')
    if level > 1:
        base = base[:-(level - 1)]
    return '.'.join(base + ([name] if name else []))


def bound_names(module: Module) -> dict[str, str]:
    """Local name -> the dotted name an import bound it to, for every
    import of the module (lazy ones too: a name is rarely reused)."""
    names = {}
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    first = alias.name.split('.')[0]
                    names[first] = first
        elif isinstance(node, ast.ImportFrom):
            source = (_resolve_relative(module, node.level, node.module)
                      if node.level else node.module or '')
            for alias in node.names:
                local = alias.asname or alias.name
                names[local] = '%s.%s' % (source, alias.name)
    return names


def qualify(node: ast.expr, names: dict[str, str]) -> str | None:
    """The dotted name an expression stands for (``rmtree`` ->
    ``shutil.rmtree``), or None if it is not a plain name."""
    if isinstance(node, ast.Name):
        return names.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        owner = qualify(node.value, names)
        return None if owner is None else '%s.%s' % (owner, node.attr)
    return None


def _string_constants(tree: ast.Module) -> dict[str, str | None]:
    """Names only ever assigned one string constant (None if ambiguous)."""
    found: dict[str, str | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    value = node.value
                    text = value.value if isinstance(
                        value, ast.Constant) and isinstance(
                        value.value, str) else None
                    seen = found.get(target.id, text)
                    found[target.id] = text if seen == text else None
    return found


def _spelled_name(node: ast.expr, constants: dict[str, str | None]
                  ) -> tuple[str, bool] | None:
    """(text, complete) of a module name as the code spells it: complete
    for a constant, a prefix for ``'a.' + x``, ``'a.%s' % x``,
    ``f'a.{x}'`` or ``'a.{}'.format(x)``; None if nothing is spelled."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, True
    if isinstance(node, ast.Name) and constants.get(node.id):
        return typing.cast(str, constants[node.id]), True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _spelled_name(node.left, constants)
        return None if left is None else (left[0], False)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = _spelled_name(node.left, constants)
        return None if left is None else (left[0].split('%')[0], False)
    if isinstance(node, ast.JoinedStr) and node.values:
        first = _spelled_name(node.values[0], constants)
        return None if first is None else (
            first[0], first[1] and len(node.values) == 1)
    if isinstance(node, ast.Call) and isinstance(
            node.func, ast.Attribute) and node.func.attr == 'format':
        left = _spelled_name(node.func.value, constants)
        return None if left is None else (left[0].split('{')[0], False)
    return None


def _dynamic_target(call: ast.Call, module: Module,
                    constants: dict[str, str | None]) -> str | None:
    if not call.args:
        return None
    spelled = _spelled_name(call.args[0], constants)
    if spelled is None:
        return None
    text, complete = spelled
    if not complete:
        # Only the whole components of a prefix are known.
        text = text.rpartition('.')[0]
    if text.startswith('.'):
        # importlib.import_module('.x', package='a.b')
        package = ([kw.value for kw in call.keywords
                    if kw.arg == 'package'] + call.args[1:2])
        anchor = _spelled_name(package[0], constants) if package else None
        if anchor is None or not anchor[1]:
            return None
        level = len(text) - len(text.lstrip('.'))
        base = anchor[0].split('.')
        base = base[:len(base) - (level - 1)] if level > 1 else base
        text = '.'.join(base + ([text.lstrip('.')]
                                if text.lstrip('.') else []))
    return text or None


def imports_of(module: Module) -> list[Import]:
    """Every import the module makes, however it is written."""
    names = bound_names(module)
    constants = _string_constants(module.tree)
    found: list[Import] = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import):
            found.extend(Import(node.lineno, alias.name, 'import')
                         for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                source = _resolve_relative(module, node.level, node.module)
                how = 'relative'
            else:
                source, how = node.module or '', 'import'
            found.extend(Import(node.lineno, '%s.%s' % (source, alias.name),
                                how)
                         for alias in node.names)
        elif isinstance(node, ast.Call) and \
                qualify(node.func, names) in DYNAMIC_IMPORTERS:
            target = _dynamic_target(node, module, constants)
            if target:
                found.append(Import(node.lineno, target, 'dynamic'))
    return sorted(found, key=lambda i: (i.line, i.target))


# -- the rules ----------------------------------------------------------------

class Floors:
    """An ordered list of floors, bottom first: a unit may import its own
    unit, the ground floor (the first), any unit on a floor below, and its
    own floor's units if that floor is ``sideways``. A unit is a dotted
    name under the product (``compute``, ``virt.libvirt``); a module
    belongs to the longest unit its name falls under."""

    def __init__(self, floors: typing.Sequence[Floor]):
        self.floors = tuple(floors)
        self.height: dict[str, int] = {}
        for height, floor in enumerate(self.floors):
            for unit in floor.units:
                if unit in self.height:
                    raise ValueError('%s is on two floors' % unit)
                self.height[unit] = height

    def unit_of(self, dotted: str) -> str | None:
        if not _under(dotted, PRODUCT) or dotted == PRODUCT:
            return None
        rel = dotted[len(PRODUCT) + 1:]
        units = [u for u in self.height if _under(rel, u)]
        return max(units, key=len) if units else None

    def why_not(self, source: str, target: str) -> str | None:
        """Why ``source`` may not import ``target`` by the floors alone;
        None if it may."""
        if source == target:
            return None
        below, above = self.height[target], self.height[source]
        if below < above or below == 0:
            return None
        if below == above:
            return None if self.floors[above].sideways else 'beside it'
        return 'above it'


def layer_violations(modules: dict[str, Module], floors: Floors,
                     may_import: dict[str, typing.AbstractSet[str]],
                     not_product: typing.Iterable[str]) -> list[Violation]:
    """Imports that go up or sideways, beyond a unit's own list (when it
    has one), into a test package, or to no floor at all."""
    tests = tuple('%s.%s' % (PRODUCT, p) for p in not_product)
    ground = floors.floors[0].units
    found = []
    for module in modules.values():
        source = floors.unit_of(module.name)
        for imp in imports_of(module):
            if not _under(imp.target, PRODUCT):
                continue
            if any(_under(imp.target, t) for t in tests):
                found.append(Violation(
                    'tests', module.path, imp.line, imp.target,
                    'imports the test package %s' % imp.target))
                continue
            if source is None or imp.target == PRODUCT:
                continue
            target = floors.unit_of(imp.target)
            why: str | None
            if target is None:
                why = 'which is on no floor'
            else:
                why = floors.why_not(source, target)
                listed = may_import.get(source)
                if why is None and listed is not None and \
                        target not in listed | ground | {source}:
                    why = 'not in its list'
            if why:
                found.append(Violation(
                    'layers', module.path, imp.line, imp.target,
                    '%s imports %s, %s' % (source, imp.target, why)))
    return found


def _module_for(modules: dict[str, Module], dotted: str) -> str | None:
    """The module an import of ``dotted`` runs (``nova.conf.CONF`` ->
    ``nova.conf``)."""
    while dotted and dotted not in modules:
        dotted = dotted.rpartition('.')[0]
    return dotted or None


def _loaded_by(modules: dict[str, Module], imp: Import) -> list[str]:
    """The module an import runs and the packages above it, which Python
    runs first."""
    module = _module_for(modules, imp.target)
    loaded = []
    while module:
        if module in modules:
            loaded.append(module)
        module = module.rpartition('.')[0]
    return loaded


def reach_violations(modules: dict[str, Module], floors: Floors,
                     layer: str, never: typing.AbstractSet[str]
                     ) -> list[Violation]:
    """Imports through which the units under ``layer`` reach a unit in
    ``never``, however many modules lie between: each reported at the
    import that enters the forbidden unit, with one path from the layer."""
    def forbidden(module_name):
        unit = floors.unit_of(module_name)
        return unit is not None and unit.split('.')[0] in never

    # Breadth first from every module of the layer: the shortest path.
    came_from: dict[str, tuple[str, int] | None] = {}
    queue: collections.deque[str] = collections.deque()
    for name in modules:
        unit = floors.unit_of(name)
        if unit is not None and _under(unit, layer):
            came_from[name] = None
            queue.append(name)
    found: dict[tuple[str, int, str], str] = {}
    while queue:
        name = queue.popleft()
        module = modules[name]
        for imp in imports_of(module):
            for loaded in _loaded_by(modules, imp):
                if forbidden(loaded):
                    key = (module.path, imp.line, imp.target)
                    found.setdefault(key, _chain(modules, came_from, name))
                elif loaded not in came_from:
                    came_from[loaded] = (name, imp.line)
                    queue.append(loaded)
    return [Violation('reach', path, line, target,
                      'imports %s: %s reaches %s through %s'
                      % (target, layer, target, chain))
            for (path, line, target), chain in sorted(found.items())]


def _chain(modules, came_from, name: str) -> str:
    hops = []
    while came_from[name] is not None:
        previous, line = came_from[name]
        hops.append('%s:%d' % (modules[previous].path, line))
        name = previous
    return ' -> '.join(reversed(hops)) or 'itself'


def libvirt_violations(modules: dict[str, Module], binding: str
                       ) -> list[Violation]:
    """Imports of libvirt outside the one module allowed to make them."""
    return [Violation('libvirt', module.path, imp.line, imp.target,
                      'imports %s' % imp.target)
            for module in modules.values() if module.path != binding
            for imp in imports_of(module) if _under(imp.target, 'libvirt')]


def deletion_violations(modules: dict[str, Module],
                        may_delete: typing.AbstractSet[str]
                        ) -> list[Violation]:
    """Every use of a deleting function or method outside ``may_delete``."""
    found = []
    for module in modules.values():
        if module.path in may_delete:
            continue
        names = bound_names(module)
        for node in ast.walk(module.tree):
            if not isinstance(node, (ast.Name, ast.Attribute)) or \
                    not isinstance(node.ctx, ast.Load):
                continue
            name = qualify(node, names)
            method = node.attr if isinstance(node, ast.Attribute) else None
            if name in DELETERS or method in DELETING_METHODS:
                target = name if name in DELETERS else str(method)
                found.append(Violation(
                    'deletes', module.path, node.lineno, target,
                    'deletes with %s' % ast.unparse(node)))
    return found


def option_violations(modules: dict[str, Module], home: str,
                      option_calls: typing.AbstractSet[str]
                      ) -> list[Violation]:
    """Options declared or registered outside the ``home`` package."""
    found = []
    for module in modules.values():
        if module.path.split(os.sep)[0] == home:
            continue
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else \
                getattr(func, 'id', '')
            if name in option_calls or (name.endswith('Opt') and
                                        name[:1].isupper()):
                found.append(Violation('options', module.path, node.lineno,
                                       name, 'declares %s' % name))
    return found
