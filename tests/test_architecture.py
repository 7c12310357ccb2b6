"""The library's layers (docs/architecture.md): no module imports a layer above its own, and
the module-level imports form no cycle.  Read from the source with ``ast`` (nothing imported).
docs/architecture.md lists every module under its layer, and names what Snakemake's parse
imports."""
import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO / "workflow" / "milbench"
DOC = REPO / "docs" / "architecture.md"

# layer of a module, by the longest matching prefix (docs/architecture.md's table)
LAYERS = {
    "milbench.utils": 0,
    "milbench.data": 1,
    "milbench.registry": 1,       # a table of 'module:Class' strings, imported only when asked
    "milbench.chains": 2,
    "milbench.base": 2,
    "milbench.preprocessing": 2,
    "milbench.classifiers": 2,
    "milbench.selectors": 2,
    "milbench.testing": 3,
    "milbench.mil_assumption": 3,
    "milbench.experiment": 4,
    "milbench.report": 5,
}


def layer(name):
    best = max((p for p in LAYERS if name == p or name.startswith(p + ".")), key=len, default=None)
    return None if best is None else LAYERS[best]


def modules():
    for path in sorted(ROOT.rglob("*.py")):
        parts = ("milbench",) + path.relative_to(ROOT).with_suffix("").parts
        yield ".".join(p for p in parts if p != "__init__"), path


def imports(path, top_only=False):
    """Absolute milbench modules imported by a file (``from milbench.x import y`` counts
    ``milbench.x.y`` when that is a module)."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_only else ast.walk(tree)
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("milbench"):
            assert node.level == 0, f"{path}: relative import"
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names
                         if (ROOT.joinpath(*node.module.split(".")[1:], a.name + ".py")).is_file())
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("milbench"))
    return found


def test_every_module_has_a_layer():
    assert [name for name, _ in modules() if name != "milbench" and layer(name) is None] == []


@pytest.mark.parametrize("name, path", list(modules()), ids=lambda v: str(v)[-40:])
def test_no_upward_import(name, path):
    if name == "milbench":
        return
    up = sorted(m for m in imports(path) if layer(m) is not None and layer(m) > layer(name))
    assert up == [], f"{name} (layer {layer(name)}) imports a layer above it: {up}"


def test_no_import_cycle():
    graph = {name: {m for m in imports(path, top_only=True) if m != name}
             for name, path in modules()}
    state = {}

    def visit(node, trail):
        state[node] = "open"
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == "open":
                raise AssertionError("import cycle: " + " -> ".join(trail + [node, dep]))
            if dep in graph and dep not in state:
                visit(dep, trail + [node])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])


def documented():
    """{path relative to workflow/milbench: layer} of the module rows of docs/architecture.md's
    per-layer tables (``### Layer N: ...`` headings, rows ``| `path.py` | ... |``)."""
    rows, current = {}, None
    for line in DOC.read_text().splitlines():
        heading = re.match(r"### Layer (\d+)\b", line)
        if heading:
            current = int(heading.group(1))
        elif line.startswith("## "):
            current = None
        else:
            row = re.match(r"\| `([\w/]+\.py)` \|", line)
            if row and current is not None:
                assert row.group(1) not in rows, f"{row.group(1)} listed twice"
                rows[row.group(1)] = current
    return rows


def holds_code(path):
    """False for a module that is only a docstring (a package's ``__init__.py``)."""
    body = ast.parse(path.read_text()).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return bool(body)


def test_every_module_is_in_the_architecture_doc():
    on_disk = {str(path.relative_to(ROOT)) for _, path in modules() if holds_code(path)}
    listed = documented()
    missing, unknown = sorted(on_disk - set(listed)), sorted(set(listed) - on_disk)
    assert not missing, f"modules missing from docs/architecture.md: {missing}"
    assert not unknown, f"docs/architecture.md names modules that do not exist: {unknown}"


def test_architecture_doc_puts_each_module_in_its_layer():
    names = {str(path.relative_to(ROOT)): name for name, path in modules()}
    wrong = {p: (doc_layer, layer(names[p])) for p, doc_layer in documented().items()
             if p in names and layer(names[p]) != doc_layer}
    assert not wrong, f"{{module: (layer in docs/architecture.md, in LAYERS)}}: {wrong}"


def test_parse_imports_what_the_doc_names():
    """The modules common.smk imports, in a fresh interpreter, load exactly the library modules
    docs/architecture.md names for Snakemake's parse, and never the Parquet store."""
    smk = (REPO / "workflow" / "rules" / "common.smk").read_text()
    roots = re.findall(r"^from (milbench[\w.]*) import", smk, re.M)
    assert "milbench.experiment.grid" in roots
    code = ("import json, sys\n" + "".join(f"import {m}\n" for m in roots)
            + "print(json.dumps(sorted(sys.modules)))")
    env = dict(os.environ, PYTHONPATH=str(REPO / "workflow"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout
    loaded = set(json.loads(out))
    packages = {n for n, p in modules() if p.name == "__init__.py"}
    ours = {m for m in loaded if m.startswith("milbench.") and m not in packages}
    section = DOC.read_text().split("## What Snakemake's parse imports")[1].split("\n## ")[0]
    named = set(re.findall(r"`(milbench\.[\w.]+)`", section))
    omitted, skipped = sorted(ours - named), sorted(named - ours)
    assert not omitted, f"the parse imports modules docs/architecture.md omits: {omitted}"
    assert not skipped, f"docs/architecture.md names modules the parse does not import: {skipped}"
    assert "pyarrow.parquet" not in loaded


def registry_modules():
    """Modules of the estimators named in ``milbench/registry.py``'s tables (read with ast)."""
    tree = ast.parse((ROOT / "registry.py").read_text())
    found = set()
    for node in tree.body:
        names = {getattr(t, "id", None) for t in getattr(node, "targets", ())}
        if isinstance(node, ast.Assign) and names & {"SELECTORS", "CLASSIFIERS"}:
            found.update(v.value.split(":")[0] for v in node.value.values)
    return found


METHOD_MODULES = registry_modules()

# a method module may import another only when that method is part of what it is: (importer,
# imported) -> why.  Shared code (kernels, segment reductions, thresholds, base classes) lives
# in modules that define no registry estimator.
METHOD_COMPOSITION = {
    ("milbench.selectors.hydr", "milbench.selectors.relieff"):
        "HyDR-MI's first stage is ReliefF-MI (Zafra et al. 2013, §3.2), with its parameters",
    ("milbench.classifiers.ensembles", "milbench.classifiers.wrapper"):
        "an ensemble's default member is MI-Wrapper around a tree (Zafra et al. 2013, §4.1.2)",
    ("milbench.selectors.cvfs", "milbench.selectors.view_baselines"):
        "CVFS is a view-aware selector: it subclasses ViewSelector, the view selectors' base "
        "class, and takes their view parameters (VIEW_CONSTRAINTS), defined with BIG/IIG/FS",
}


def test_registry_modules_are_found():
    assert {"milbench.classifiers.miordm", "milbench.selectors.relieff"} <= METHOD_MODULES
    assert all(ROOT.joinpath(*m.split(".")[1:]).with_suffix(".py").is_file()
               for m in METHOD_MODULES)


@pytest.mark.parametrize("name", sorted(METHOD_MODULES))
def test_method_modules_do_not_import_one_another(name):
    path = ROOT.joinpath(*name.split(".")[1:]).with_suffix(".py")
    other = sorted(m for m in imports(path) if m in METHOD_MODULES and m != name
                   and (name, m) not in METHOD_COMPOSITION)
    assert other == [], (f"{name} defines a registry method and imports other methods' "
                         f"modules {other}: move the shared code to a module that defines no "
                         f"registry estimator, or compose through milbench.registry.make")


def test_method_composition_exceptions_are_current():
    stale = [pair for pair in METHOD_COMPOSITION
             if pair[1] not in imports(ROOT.joinpath(*pair[0].split(".")[1:]).with_suffix(".py"))]
    assert stale == []
