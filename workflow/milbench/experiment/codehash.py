"""Rerun triggers from source code: the import closure of a job's project modules, hashed in a
normal form, and the registry entries the job resolves.

A method job runs the core modules plus its selector's and classifier's modules (a user's own
'module:Class' method included), and whatever those import from the project, at module level
or inside a function (``from ..distances import ...`` in a method body runs when the method
runs). :func:`import_closure` follows those imports through the source (``ast``: the library is
read, never imported), so editing a shared helper such as ``distances.py`` or
``classifiers/wrapper.py`` reruns exactly the jobs that import it.

What is hashed is what runs: each module's parse tree without its docstrings and other bare
string statements (:func:`normal_tree`), so comments, docstrings and formatting trigger nothing,
and of ``milbench/registry.py`` its functions but not its tables: a job's hash covers only the
registry entries it resolves (:func:`spec_entries`: the names in its config entry, nested ones
included, and in the literal ``__init__`` defaults of the parameters it leaves out, such as
View-Ensemble's ``base="milr"``), so adding a method to the registry reruns nothing.  A
registry name chosen inside a method body (HyDR-MI's ``classifier=None`` meaning MILR) is not
seen: name it in the config.  The normal form is ``ast.dump``'s, which may differ between
Python versions: a new interpreter can change every hash once (hashes are per environment, as
the results are).
"""
from __future__ import annotations

import ast
import contextlib
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
#: the registry module and its tables of 'module:Class' entries, hashed entry by entry
REGISTRY = "milbench.registry"
REGISTRY_TABLES = ("SELECTORS", "CLASSIFIERS")


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


def _is_string_statement(node):
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _normalise(tree, registry=False):
    """Strip ``tree`` in place to :func:`normal_tree`'s form; returns its import statements
    (one pass)."""
    if registry:
        for stmt in tree.body:
            targets = (stmt.targets if isinstance(stmt, ast.Assign) else
                       [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
            if (any(isinstance(t, ast.Name) and t.id in REGISTRY_TABLES for t in targets)
                    and isinstance(stmt.value, ast.Dict)):
                stmt.value = ast.Dict(keys=[], values=[])
    imports, todo = [], [tree]
    while todo:             # statements only: no statement sits inside an expression
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
            continue
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                stmts = [s for s in stmts if not _is_string_statement(s)]
                setattr(node, field, stmts)
                todo += stmts
        todo += [*getattr(node, "handlers", ()), *getattr(node, "cases", ())]   # except, case
    return imports


def normal_tree(source, registry=False):
    """Parse tree of ``source`` without what cannot change a run: docstrings and every other
    bare string statement (comments and formatting are not in a parse tree); ``registry``: the
    module's top-level ``SELECTORS`` / ``CLASSIFIERS`` dicts emptied (their entries are hashed
    where a job resolves them)."""
    tree = ast.parse(source)
    _normalise(tree, registry)
    return tree


@functools.cache
def _module(path):
    """(hash of the normal tree's ``ast.dump``, positions left out; its import statements;
    the tree) of a source file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    imports = _normalise(tree, registry=path == module_path(REGISTRY))
    return hashlib.sha1(ast.dump(tree).encode()).digest(), imports, tree


@functools.cache
def direct_imports(name):
    """Project modules that module ``name`` imports anywhere in its body (names, sorted)."""
    path = module_path(name)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _module(path)[1]:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        else:
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)   # `from . import stages`
    return sorted(m for m in found if m and module_path(m) is not None)


def _registry():
    return {**SELECTORS, **CLASSIFIERS}


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
def code_hash(*names, entries=()):
    """Short hash over the normal forms of the import closure of modules ``names`` and of the
    modules of ``entries`` ((registry name, 'module:Class') pairs), and over those entries: a
    job's rerun trigger."""
    h = hashlib.sha1()
    for p in import_closure(*names, *(t.split(":")[0] for _, t in entries)):
        h.update(p.name.encode() + b"\0" + _module(p)[0])
    h.update(json.dumps(sorted(entries)).encode())
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


def _spec_code(*specs):
    entries, own = set(), set()
    for spec in specs:
        e, o = _spec_names(spec)
        entries |= e
        own |= o
    return code_hash(*CORE_MODULES, *sorted(own), entries=tuple(sorted(entries)))


def method_code(method):
    """A method job's code hash: the core and its selector's and classifier's registry entries
    and modules (:func:`code_hash`)."""
    return _spec_code(method["selector"], method["classifier"])


def selector_code(selector):
    """A fold-stage job's code hash: the core and its selector's entries and modules."""
    return _spec_code(selector)


def job_digest(method, settings, cells, code):
    """Short hash of everything a method file is computed from besides its input files (the
    run rule's params: method, settings, cells, code): two files with equal digests of the same
    data set and folds hold the same rows."""
    blob = json.dumps([method, settings, [list(c) for c in cells], code], sort_keys=True,
                      default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


@functools.cache
def init_defaults(target):
    """{parameter: default} of the literal defaults (strings, dicts, ...) of the ``__init__``
    of a 'module:Class' (read from its source; {} when not found): the parameters a config
    entry that leaves them out runs with, such as View-Ensemble's ``base="milr"``."""
    mod, _, cls = target.partition(":")
    path = module_path(mod)
    tree = _module(path)[2] if path is not None else ast.Module(body=[])
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name == cls):
            continue
        for f in node.body:
            if isinstance(f, ast.FunctionDef) and f.name == "__init__":
                a = f.args
                pos = a.posonlyargs + a.args
                pairs = [*zip(pos[len(pos) - len(a.defaults):], a.defaults),
                         *((k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None)]
                out = {}
                for arg, d in pairs:
                    with contextlib.suppress(ValueError, TypeError):   # not a literal
                        out[arg.arg] = ast.literal_eval(d)
                return out
    return {}


def _spec_names(spec):
    """({(registry name, 'module:Class')}, {user module}) of a config entry: its own ``name``,
    every registry name nested in its parameters (an ensemble's ``base``, HyDR-MI's target) and
    in the ``__init__`` defaults of the parameters an entry leaves out (:func:`init_defaults`);
    a user's 'module:Class' name gives its module."""
    table = _registry()
    entries, own, done = set(), set(), set()

    def named(name, params):
        if name in table:
            target = table[name]
            entries.add((name, target))
        elif ":" in name:
            target = name
            own.add(name.split(":")[0])
        else:
            return
        for k, d in init_defaults(target).items():
            if k not in params and (target, k) not in done:
                done.add((target, k))
                walk(d, k)

    def walk(v, key=None):
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "name" and isinstance(x, str):
                    named(x, v)
                else:
                    walk(x, k)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x, key)
        elif isinstance(v, str) and v in table:
            named(v, {})

    walk(spec)
    return entries, own


def spec_entries(spec):
    """Registry entries a config entry resolves, nested ones and defaults included
    (:func:`_spec_names`): sorted (name, 'module:Class') pairs."""
    return sorted(_spec_names(spec)[0])


def spec_modules(spec):
    """Modules a config entry runs by name: those of its registry entries (:func:`spec_entries`)
    and of a user's 'module:Class' names."""
    entries, own = _spec_names(spec)
    return sorted({t.split(":")[0] for _, t in entries} | own)
