"""Rerun triggers from source code: the import closure of a job's modules inside the library.

A method job runs the core modules plus its selector's and classifier's modules, and whatever
those import from the library, at module level or inside a function (``from ..distances import
...`` in a method body runs when the method runs). :func:`import_closure` follows those imports
through the source (``ast``, nothing is imported), so editing a shared helper such as
``distances.py`` or ``classifiers/wrapper.py`` reruns exactly the jobs that import it.
"""
from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

PACKAGE = "milbench"
ROOT = Path(__file__).resolve().parent          # workflow/milbench


def module_path(name):
    """Source file of a library module name (``milbench.a.b``), or None outside the library."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = ROOT.joinpath(*parts[1:])
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def _module_name(path):
    rel = Path(path).resolve().relative_to(ROOT).with_suffix("")
    parts = [PACKAGE, *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def direct_imports(path):
    """Library modules a source file imports anywhere in its body (names, sorted)."""
    path = Path(path)
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)   # `from . import stages`
    return sorted(m for m in found if module_path(m) is not None)


def _with_parents(name):
    """A module and the packages whose ``__init__`` importing it runs."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def import_closure(*names):
    """Source files of the library modules ``names`` execute: themselves, their packages'
    ``__init__`` files and, transitively, every library module they import."""
    todo = [p for n in names for p in _with_parents(n)]
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen or module_path(name) is None:
            continue
        seen.add(name)
        todo += [p for m in direct_imports(module_path(name)) for p in _with_parents(m)]
    return sorted({module_path(n) for n in seen})


@functools.cache
def code_hash(*names):
    """Short hash over the sources of :func:`import_closure` (a job's rerun trigger)."""
    h = hashlib.sha1()
    for p in import_closure(*names):
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:12]


def spec_modules(spec):
    """Library modules a config entry names through the registry: its own ``name`` and every
    registry name nested in its parameters (an ensemble's ``base``, HyDR-MI's target)."""
    from .registry import CLASSIFIERS, SELECTORS

    tables = {**SELECTORS, **CLASSIFIERS}
    found = set()

    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, str) and v in tables:
            found.add(tables[v].split(":")[0])

    walk(spec)
    return sorted(found)
