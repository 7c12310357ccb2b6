"""benchmarks/{methods,workflow,parity}: every script starts as
``python benchmarks/<folder>/<script>.py`` from the repository root, with nothing on PYTHONPATH
(its folder's ``_paths`` finds milbench and the shared ``_timing``)."""
import os
import subprocess
import sys

import pytest

from conftest import REPO

FOLDERS = ("methods", "workflow", "parity")
SCRIPTS = sorted(p.relative_to(REPO) for f in FOLDERS
                 for p in (REPO / "benchmarks" / f).glob("*.py") if not p.name.startswith("_"))


def test_every_benchmark_sits_in_a_purpose_folder():
    top = sorted(p.name for p in (REPO / "benchmarks").glob("*.py"))
    assert top == ["_timing.py"], "benchmark scripts go in benchmarks/methods, workflow or parity"
    assert len(SCRIPTS) >= 15


def test_paths_modules_are_one_file():
    texts = {(REPO / "benchmarks" / f / "_paths.py").read_text() for f in FOLDERS}
    assert len(texts) == 1


@pytest.mark.parametrize("script", SCRIPTS, ids=str)
def test_help_runs_from_the_repo_root(script):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, str(script), "--help"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.startswith("usage: ")
