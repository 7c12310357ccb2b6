"""benchmarks/: a package whose scripts run as modules from the repository root,
``python -m benchmarks.<folder>.<script>``, with milbench from the environment (the README's
``pip install -e .``); no script changes ``sys.path``."""
import ast
import subprocess
import sys

import pytest

from conftest import REPO

FOLDERS = ("methods", "workflow", "parity")
SCRIPTS = sorted(p.relative_to(REPO) for f in FOLDERS
                 for p in (REPO / "benchmarks" / f).glob("*.py") if not p.name.startswith("_"))


def module(script):
    return ".".join(script.with_suffix("").parts)


def test_every_benchmark_sits_in_a_purpose_folder():
    top = sorted(p.name for p in (REPO / "benchmarks").glob("*.py"))
    assert top == ["__init__.py", "_timing.py"], \
        "benchmark scripts go in benchmarks/methods, workflow or parity"
    assert all((REPO / "benchmarks" / f / "__init__.py").is_file() for f in FOLDERS)
    assert len(SCRIPTS) >= 15


@pytest.mark.parametrize("script", SCRIPTS, ids=str)
def test_no_script_changes_the_import_path(script):
    """One way to find the package: the repository root (``-m``) and the installed milbench."""
    tree = ast.parse((REPO / script).read_text())
    siblings = {p.stem for p in (REPO / "benchmarks").rglob("*.py")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path" and \
                isinstance(node.value, ast.Name) and node.value.id == "sys":
            pytest.fail(f"{script} touches sys.path (line {node.lineno})")
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        for name in names:
            if name and name.split(".")[0] in siblings:
                pytest.fail(f"{script} imports {name} as a top-level module; use benchmarks.…")


@pytest.mark.parametrize("script", SCRIPTS, ids=str)
def test_help_runs_as_a_module_from_the_repo_root(script):
    res = subprocess.run([sys.executable, "-m", module(script), "--help"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.startswith("usage: ")
