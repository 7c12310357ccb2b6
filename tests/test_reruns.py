"""Reruns follow the code: run_method's `params: code=code_version` hashes the import closure of
the core library modules and of the run's selector and classifier (milbench.experiment.codehash), so
editing one method's module, or a helper only some methods import, reruns exactly those jobs
(Snakemake's default rerun triggers include params). Each edit is undone after its test.

Works on a temporary COPY of the workflow (Snakefile, workflow/, resources/, config/, envs/), so
modules can be edited safely: one tiny real run, then dry runs only.
"""
import contextlib
import os
import re
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import yaml

from conftest import copy_workflow, tiny_config
from milbench.experiment.finished_cells import (
    EARLIER_CPU,
    FinishedCells,
    attempt_key,
    cells_folder,
)
from milbench.report.reproduction_parts import file_digest

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
    root = copy_workflow(tmp_path_factory.mktemp("repo-copy"))
    cfg = tiny_config()
    cfg["experiments"]["tiny"]["classifiers"].append({"name": "citation-knn"})
    (root / "tiny.yaml").write_text(yaml.safe_dump(cfg))
    smk(root, "--cores", "2", "--quiet=rules")
    assert (root / TARGET).exists()
    return root


@contextlib.contextmanager
def edited(path, old=None, new=None):
    """Edit a library module for the duration of the block: replace ``old`` by ``new``, or
    append a statement (a comment or a docstring would trigger nothing)."""
    original = path.read_text()
    if old is None:
        path.write_text(original + "\n_EDITED_BY = 'tests/test_reruns.py'\n")
    else:
        assert old in original, f"{path.name} no longer holds {old!r}"
        path.write_text(original.replace(old, new, 1))
    try:
        yield
    finally:
        path.write_text(original)


def test_unchanged_code_nothing_to_do(copy):
    assert "Nothing to be done" in smk(copy, "-n")


@pytest.mark.parametrize("module, reruns", [
    ("classifiers/simple.py", ["mi-simple"]),            # a method's own module
    ("classifiers/distances.py", ["citation-knn"]),       # a helper only Citation-kNN imports
    ("classifiers/wrapper.py", []),                       # imported by mi-bagging, not run here
    ("report/stats.py", []),                              # read by the stats rule only
    ("data/bags.py", ["citation-knn", "mi-simple", "milr"]),  # core
])
def test_edit_reruns_exactly_the_importers(copy, module, reruns):
    with edited(copy / "workflow" / "milbench" / module):
        out = smk(copy, "-n")
    runs, rules = planned_runs(out)
    assert sorted(r.split(".")[0] for r in runs) == reruns, runs
    if reruns:
        assert rules == {"run_method": len(reruns), "check_runs": 1, "scores": 1}, rules
        assert "Params have changed since last execution" in out
    else:
        assert "Nothing to be done" in out
    assert "Nothing to be done" in smk(copy, "-n")        # the edit undone: nothing again


def test_new_registry_entry_comment_and_docstring_rerun_nothing(copy):
    lib = copy / "workflow" / "milbench"
    new_entry = '    "milr-2": "milbench.classifiers.milr:MILR",\n    "lcmf": '
    with edited(lib / "registry.py", '    "lcmf": ', new_entry), \
            edited(lib / "classifiers" / "simple.py", '"""MI-Simple', '# new\n"""Edited MI-Simple'):
        assert "Nothing to be done" in smk(copy, "-n")


def test_inner_folds_reruns_only_tuned_methods(copy):
    cfg = yaml.safe_load((copy / "tiny.yaml").read_text())
    original = yaml.safe_dump(cfg)
    cfg["experiments"]["tiny"]["inner_folds"] = 3
    (copy / "tiny.yaml").write_text(yaml.safe_dump(cfg))
    try:
        out = smk(copy, "-n")
    finally:
        (copy / "tiny.yaml").write_text(original)
    assert "Nothing to be done" in out                    # no method of tiny is tuned


def test_killed_run_resumes_to_the_same_scores(copy, tmp_path):
    """SIGKILL the whole workflow after the first method job finished, `--unlock`, rerun: the
    methods Snakemake had finished are not redone and scores equal the uninterrupted run's."""
    base = [sys.executable, "-m", "snakemake", "-s", str(copy / "Snakefile"), "-d", str(tmp_path),
            "--configfile", str(copy / "tiny.yaml")]
    proc = subprocess.Popen(base + ["--cores", "1", TARGET], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    logs = tmp_path / "results/logs/tiny/runs/musk1/none"
    deadline = time.time() + 300
    while not any("cells: accuracy" in f.read_text() for f in logs.glob("*.log")):
        assert proc.poll() is None and time.time() < deadline, "no method finished in time"
        time.sleep(0.2)
    time.sleep(2)                                        # let Snakemake record the finished job
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / TARGET).exists()
    subprocess.run(base + ["--unlock"], check=True, capture_output=True)
    base.append("--rerun-incomplete")                   # the job running at the kill
    dry = subprocess.run(base + ["-n", TARGET], check=True, capture_output=True, text=True)
    planned = set(planned_runs(dry.stdout + dry.stderr)[0])
    runs = tmp_path / "results/tiny/runs/musk1/none"
    kept = {f.name: f.stat().st_mtime_ns for f in runs.glob("*.parquet")
            if f.stem not in planned}
    assert kept, planned                                 # at least the first method survives
    subprocess.run(base + ["--cores", "1", TARGET], check=True, capture_output=True)
    assert {f: (runs / f).stat().st_mtime_ns for f in kept} == kept
    timing = ["fit_seconds", "fit_cpu_seconds", "predict_seconds", "predict_cpu_seconds"]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / TARGET).drop(columns=timing),
                                  pd.read_parquet(copy / TARGET).drop(columns=timing))



def test_stopped_method_job_resumes_from_its_finished_cells(copy):
    """A method job's first cell kept by an attempt that did not finish (planted here: the
    first of MILR's two cells, marked by its CPU figure) is read back by the next attempt, which
    runs only the second cell and removes the kept cells once the method file is written."""
    runs = copy / "results/tiny/runs/musk1/none"
    method_file = next(runs.glob("milr.*.parquet"))
    rows = pd.read_parquet(method_file)
    inputs = [copy / "results/bags/musk1/meta.json", copy / "results/tiny/folds/musk1.parquet"]
    finished = FinishedCells(cells_folder(method_file),
                             attempt_key(file_digest(method_file), inputs))
    first = rows.iloc[:1].assign(fit_cpu_seconds=1234.5)
    finished.save((int(first.repeat.iloc[0]), int(first.fold.iloc[0])), first)
    method_file.unlink()
    (copy / TARGET).unlink()        # Snakemake remakes a missing method file its target needs
    smk(copy, "--cores", "1")
    log = copy / "results/logs/tiny/runs/musk1/none" / f"{method_file.stem}.log"
    assert "1 of 2 cells finished by an earlier attempt of this job" in log.read_text()
    again = pd.read_parquet(method_file)
    assert again.fit_cpu_seconds.iloc[0] == 1234.5 and again.fit_cpu_seconds.iloc[1] < 1234.5
    assert 1234.5 <= again.attrs[EARLIER_CPU] < 1240      # the kept cell's CPU, not benchmarked
    timing = ["fit_seconds", "fit_cpu_seconds", "predict_seconds", "predict_cpu_seconds"]
    pd.testing.assert_frame_equal(again.drop(columns=timing), rows.drop(columns=timing))
    assert not cells_folder(method_file).exists()
    assert "Nothing to be done" in smk(copy, "-n")


def test_deleted_method_file_is_remade_by_the_default_target(copy):
    """A truncated method file stops the run at check_runs with a message, on the console,
    naming the file and the commands that recompute it; running them (delete, then the default
    target) reruns that method's job and no other, and the scores come back equal."""
    base = [sys.executable, "-m", "snakemake", "-s", str(copy / "Snakefile"), "-d", str(copy),
            "--configfile", str(copy / "tiny.yaml")]
    method = "results/tiny/runs/musk1/none/mi-simple.parquet"
    before = pd.read_parquet(copy / TARGET)
    good = (copy / method).read_bytes()
    (copy / method).write_bytes(good[:100])
    try:
        res = subprocess.run(base + ["--cores", "1"], capture_output=True, text=True, cwd=copy)
        console = res.stdout + res.stderr
        assert res.returncode != 0
        hint = f"to recompute that method: rm {method} && snakemake --cores N"
        assert console.count(f"{method}: cannot read the method's rows") == 1, console[-3000:]
        assert hint in console
        (copy / method).unlink()
        dry = subprocess.run(base + ["-n"], capture_output=True, text=True, cwd=copy)
        assert planned_runs(dry.stdout + dry.stderr)[0] == ["mi-simple"], dry.stdout[-3000:]
        subprocess.run(base + ["--cores", "1"], check=True, capture_output=True, cwd=copy)
    finally:
        if not (copy / method).is_file() or (copy / method).stat().st_size == 100:
            (copy / method).write_bytes(good)
    timing = ["fit_seconds", "fit_cpu_seconds", "predict_seconds", "predict_cpu_seconds"]
    pd.testing.assert_frame_equal(pd.read_parquet(copy / TARGET).drop(columns=timing),
                                  before.drop(columns=timing))
    again = subprocess.run(base + ["-n"], capture_output=True, text=True, cwd=copy)
    assert "Nothing to be done" in again.stdout + again.stderr
