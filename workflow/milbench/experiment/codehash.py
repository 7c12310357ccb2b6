"""Rerun triggers from source code: the import closure of a job's project modules.

A method job runs the core modules plus its selector's and classifier's modules (a user's own
'module:Class' method included), and whatever those import from the project, at module level
or inside a function (``from ..distances import ...`` in a method body runs when the method
runs). :func:`import_closure` follows those imports through the source (``ast``: the library is
read, never imported), so editing a shared helper such as ``distances.py`` or
``classifiers/wrapper.py`` reruns exactly the jobs that import it.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import json
import sysconfig
from pathlib import Path

from milbench.registry import CLASSIFIERS, SELECTORS

PACKAGE = "milbench"
ROOT = Path(__file__).resolve().parents[1]      # workflow/milbench
_INSTALLED = {Path(sysconfig.get_paths()[k]).resolve() for k in ("stdlib", "purelib", "platlib")}


@functools.cache
def module_path(name):
    """Source file of a project module: the library (found without importing) or a user's own
    module (a 'module:Class' method, from a `code:` directory or an editable install). None for
    the standard library, installed packages and what cannot be found."""
    parts = name.split(".")
    if parts[0] == PACKAGE:
        base = ROOT.joinpath(*parts[1:])
        for p in (base.with_suffix(".py"), base / "__init__.py"):
            if p.is_file():
                return p
        return None
    try:
        top = importlib.util.find_spec(parts[0])    # a top-level lookup imports nothing
        if top is None or not _is_project(top.origin):
            return None
        spec = top if len(parts) == 1 else importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    return Path(spec.origin).resolve() if spec is not None and _is_project(spec.origin) else None


def _is_project(origin):
    if not origin or not origin.endswith(".py"):
        return False
    p = Path(origin).resolve()
    return not any(p.is_relative_to(d) for d in _INSTALLED)


@functools.cache
def direct_imports(name):
    """Project modules that module ``name`` imports anywhere in its body (names, sorted)."""
    path = module_path(name)
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
    return sorted(m for m in found if m and module_path(m) is not None)


def _with_parents(name):
    """A module and the packages whose ``__init__`` importing it runs."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def import_closure(*names):
    """Source files of the project modules ``names`` execute: themselves, their packages'
    ``__init__`` files and, transitively, every project module they import."""
    todo = [p for n in names for p in _with_parents(n)]
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen or module_path(name) is None:
            continue
        seen.add(name)
        todo += [p for m in direct_imports(name) for p in _with_parents(m)]
    return sorted({module_path(n) for n in seen})


@functools.cache
def code_hash(*names):
    """Short hash over the sources of :func:`import_closure` (a job's rerun trigger)."""
    h = hashlib.sha1()
    for p in import_closure(*names):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:12]


#: the modules every method job runs; with its selector's and classifier's own modules, the
#: roots of the import closure whose hash is a method job's rerun trigger (``params: code``)
CORE_MODULES = ("milbench.data.bags", "milbench.base", "milbench.experiment.grid",
                "milbench.experiment.fold", "milbench.experiment.scoring",
                "milbench.preprocessing", "milbench.data.folds", "milbench.data.store",
                "milbench.experiment.runner", "milbench.experiment.stages")
#: key of a method file's ``DataFrame.attrs`` (kept in its Parquet metadata) holding
#: :func:`job_digest`
JOB_DIGEST = "milbench_job"


def method_code(method):
    """A method job's code hash: the import closure of the core and of its selector's and
    classifier's modules."""
    return code_hash(*CORE_MODULES, *spec_modules(method["selector"]),
                     *spec_modules(method["classifier"]))


def selector_code(selector):
    """A fold-stage job's code hash: the import closure of the core and of its selector."""
    return code_hash(*CORE_MODULES, *spec_modules(selector))


def job_digest(method, settings, cells, code):
    """Short hash of everything a method file is computed from besides its input files (the
    run rule's params: method, settings, cells, code): two files with equal digests of the same
    data set and folds hold the same rows."""
    blob = json.dumps([method, settings, [list(c) for c in cells], code], sort_keys=True,
                      default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def spec_modules(spec):
    """Modules a config entry names: through the registry, its own ``name`` and every registry
    name nested in its parameters (an ensemble's ``base``, HyDR-MI's target); a user's
    'module:Class' name gives its module."""
    tables = {**SELECTORS, **CLASSIFIERS}
    found = set()

    def walk(v, key=None):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, k)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x, key)
        elif isinstance(v, str) and v in tables:
            found.add(tables[v].split(":")[0])
        elif isinstance(v, str) and key == "name" and ":" in v:
            found.add(v.split(":")[0])

    walk(spec)
    return sorted(found)
