"""Reruns follow the code (issue #10): run_method's `params: code=code_version` hashes the core
library modules plus the run's selector and classifier modules, so editing one method's module
reruns that method's jobs only (Snakemake's default rerun triggers include params).

Works on a temporary COPY of the workflow (Snakefile, workflow/, resources/, config/, envs/), so
modules can be edited safely: one tiny real run, then dry runs only.
"""
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, tiny_config

TARGET = "results/tiny/scores.parquet"


def smk(copy, *args):
    cmd = [sys.executable, "-m", "snakemake", "-s", str(copy / "Snakefile"), "-d", str(copy),
           "--configfile", str(copy / "tiny.yaml"), *args, TARGET]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=copy)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res.stdout + res.stderr


def planned_runs(out):
    """Classifier ids of the method jobs a dry run plans, and {rule: count} of its job table."""
    runs = re.findall(r"output: results/tiny/runs/musk1/[^/\s]+/([^/\s]+)\.parquet", out)
    table = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", out, re.M)}
    table.pop("total", None)
    return sorted(runs), table


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo-copy")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copy(REPO / "Snakefile", root / "Snakefile")
    for d in ("workflow", "resources", "config", "envs"):
        if (REPO / d).exists():
            shutil.copytree(REPO / d, root / d, ignore=ignore)
    (root / "tiny.yaml").write_text(yaml.safe_dump(tiny_config()))
    smk(root, "--cores", "2", "--quiet=rules")
    assert (root / TARGET).exists()
    return root


def _append(path, text):
    with open(path, "a") as f:
        f.write(text)


def test_unchanged_code_nothing_to_do(copy):
    assert "Nothing to be done" in smk(copy, "-n")


def test_method_module_edit_reruns_only_that_method(copy):
    lib = copy / "workflow" / "milbench"
    _append(lib / "classifiers" / "simple.py", "\n# edited by tests/test_reruns.py\n")
    out = smk(copy, "-n")
    runs, rules = planned_runs(out)
    assert runs == ["mi-simple"], runs  # no milr job
    assert rules == {"run_method": 1, "scores": 1}, rules  # data and folds untouched
    assert "Params have changed since last execution" in out


def test_core_module_edit_reruns_every_method(copy):
    _append(copy / "workflow" / "milbench" / "bags.py", "\n# edited by tests/test_reruns.py\n")
    runs, rules = planned_runs(smk(copy, "-n"))
    assert rules["run_method"] == 2, rules
    assert sorted(r.split(".")[0] for r in runs) == ["mi-simple", "milr"], runs
