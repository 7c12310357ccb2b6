"""A run in parts (milbench.report.reproduction_parts): the finished method files of an unfinished
run kept in the repository, and put back into a later session's results/ only where the config
and the code still give them, so the workflow reruns exactly the rest.

Works on a temporary copy of the workflow (as tests/test_reruns.py): one tiny real run, then
keep / restore through the command line (PYTHONPATH = the copy, so editing its library counts).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import copy_workflow, tiny_config
from milbench.experiment.finished_cells import FinishedCells, attempt_key, cells_folder
from milbench.report.reproduction_docs import pages
from milbench.report.reproduction_archive import IDLE_GAP, add_span, job_spans, run_wall
from milbench.report.reproduction_parts import file_digest

EXP = "midr-parts"          # a name the midr targets claim (parts live under a paper)
TARGET = f"results/{EXP}/scores.parquet"
KEPT = f"resources/reproductions/midr/parts/{EXP}"   # the copy's archive (its default)
RUNS = [f"runs/musk1/none/{c}.parquet" for c in ("mi-simple", "milr.b283fe13")]
TIMING = ["fit_seconds", "fit_cpu_seconds", "predict_seconds", "predict_cpu_seconds"]


def smk(copy, *args, config="parts.yaml"):
    cmd = [sys.executable, "-m", "snakemake", "-s", str(copy / "Snakefile"), "-d", str(copy),
           "--configfile", str(copy / config), *args, TARGET]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=copy)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res.stdout + res.stderr


def cli(copy, *args, config="parts.yaml"):
    res = subprocess.run([sys.executable, "-m", "milbench.report.reproduction", *args,
                          "--config", config], cwd=copy, text=True,
                         capture_output=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(copy / "workflow")})
    return res.returncode, res.stdout + res.stderr


def planned_methods(out):
    return sorted(re.findall(rf"output: results/{EXP}/(runs/\S+\.parquet)", out))


def forget_runs(copy):
    """A later session's results/: the data and folds are built again, nothing else is there."""
    for p in (copy / "results" / EXP).iterdir():
        if p.name != "folds":
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    shutil.rmtree(copy / "results" / "benchmarks" / EXP, ignore_errors=True)


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    root = copy_workflow(tmp_path_factory.mktemp("repo-copy"))
    exp = tiny_config()["experiments"]["tiny"]
    exp["classifiers"][0] = {"name": "milr", "tune": {"C": [0.1, 1.0]}}
    exp["inner_folds"] = 2
    cfg = {"offline": True, "experiments": {EXP: exp}}
    (root / "parts.yaml").write_text(yaml.safe_dump(cfg))
    reseeded = yaml.safe_load(yaml.safe_dump(cfg))
    reseeded["experiments"][EXP]["protocol"]["seed"] = 1
    (root / "reseeded.yaml").write_text(yaml.safe_dump(reseeded))
    smk(root, "--cores", "2", "--quiet=rules")
    assert sorted(p.relative_to(root / "results" / EXP).as_posix()
                  for p in (root / "results" / EXP / "runs").rglob("*.parquet")) == RUNS
    return root


def test_keep_then_restore_reruns_only_what_is_missing(copy):
    rc, out = cli(copy, "keep", f"results/{EXP}")
    assert rc == 0 and "2 method files kept, 0 not" in out, out
    part = copy / KEPT
    listing = yaml.safe_load((part / "parts.yaml").read_text())
    assert sorted(listing["files"]) == RUNS and listing["cpu_seconds"] > 0
    assert len(listing["walls"]) == 1 and next(iter(listing["walls"].values())) > 0
    assert all((part / "benchmarks" / r).with_suffix(".tsv").is_file() for r in RUNS)
    index = pages(archive_dir=copy / "resources" / "reproductions")["index.md"]   # lists it
    assert f"| midr | `{EXP}` | 2 of 2 |" in index

    forget_runs(copy)                                    # a later session: a fresh results/
    assert planned_methods(smk(copy, "-n")) == RUNS
    rc, out = cli(copy, "restore", EXP)
    assert rc == 0 and "2 method files restored, 0 not" in out, out
    assert planned_methods(smk(copy, "-n")) == []        # only the aggregation is left
    rc, out = cli(copy, "restore", EXP)
    assert "already in results/" in out and "0 method files restored" in out


def test_changed_code_or_settings_are_not_restored(copy):
    forget_runs(copy)
    simple = copy / "workflow" / "milbench" / "classifiers" / "simple.py"
    original = simple.read_bytes()
    simple.write_bytes(original + b"\n_EDITED_BY = 'tests/test_reproduction_parts.py'\n")
    try:
        rc, out = cli(copy, "restore", EXP)
    finally:
        simple.write_bytes(original)
    assert rc == 0 and "1 method file restored, 1 not" in out, out
    assert re.search(r"not restored runs/musk1/none/mi-simple.parquet: .*code changed", out)
    assert planned_methods(smk(copy, "-n")) == [RUNS[0]]

    forget_runs(copy)
    rc, out = cli(copy, "restore", EXP, config="reseeded.yaml")   # other folds: nothing fits
    assert "0 method files restored, 2 not" in out, out


def test_restore_waits_for_the_inputs_and_keep_for_finished_jobs(copy):
    forget_runs(copy)
    folds = copy / "results" / EXP / "folds" / "musk1.parquet"
    saved = folds.read_bytes()
    folds.unlink()
    try:
        rc, out = cli(copy, "restore", EXP)
    finally:
        folds.write_bytes(saved)
    assert rc == 2 and f"results/{EXP}/folds/musk1.parquet" in out and "snakemake" in out, out

    assert cli(copy, "restore", EXP)[0] == 0
    (copy / "results" / "benchmarks" / EXP / RUNS[1]).with_suffix(".tsv").unlink()
    rc, out = cli(copy, "keep", f"results/{EXP}")
    assert "1 method file kept, 1 not" in out and "has not finished" in out, out
    rc, out = cli(copy, "keep", f"results/{EXP}", "--drop")
    assert rc == 0 and not (copy / KEPT).exists()


def test_finished_cells_of_an_unfinished_job_are_kept_and_restored(copy):
    """A job stopped after its first cell (planted: MILR's first cell, marked by its CPU
    figure): `keep` keeps that cell, `restore` puts it back (not where the bag store's bytes
    differ: the job would discard it), the next run computes only the other cell; once the job
    has finished, `keep` replaces the cells by its method file."""
    forget_runs(copy)
    smk(copy, "--cores", "2", "--quiet=rules")
    runs = copy / "results" / EXP
    method_file = runs / RUNS[1]
    rows = pd.read_parquet(method_file)
    inputs = [copy / "results/bags/musk1/meta.json", runs / "folds/musk1.parquet"]
    FinishedCells(cells_folder(method_file), attempt_key(file_digest(method_file), inputs)).save(
        (0, 0), rows.iloc[:1].assign(fit_cpu_seconds=1234.5))
    method_file.unlink()
    (copy / "results" / "benchmarks" / EXP / RUNS[1]).with_suffix(".tsv").unlink()
    rc, out = cli(copy, "keep", f"results/{EXP}")
    assert rc == 0 and f"kept 1 finished cell of the unfinished job of {RUNS[1]}" in out, out
    listing = yaml.safe_load((copy / KEPT / "parts.yaml").read_text())
    assert listing["cells"][RUNS[1]]["cells"] == 1
    assert listing["cells"][RUNS[1]]["cpu_seconds"] >= 1234.5
    index = pages(archive_dir=copy / "resources" / "reproductions")["index.md"]
    assert f"| midr | `{EXP}` | 1 of 2 | 1 of `milr` on musk1 |" in index

    forget_runs(copy)                        # the same bag store, its bytes rebuilt otherwise
    meta = copy / "results/bags/musk1/meta.json"
    saved, stat = meta.read_bytes(), meta.stat()
    meta.write_bytes(saved + b"\n")
    try:
        rc, out = cli(copy, "restore", EXP)
    finally:
        meta.write_bytes(saved)
        os.utime(meta, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert rc == 0 and f"not restored {RUNS[1]} (1 cells): kept on inputs whose bytes differ" \
        in out and "finished cell of" not in out, out

    forget_runs(copy)
    rc, out = cli(copy, "restore", EXP)
    assert f"restored 1 finished cell of the unfinished job of {RUNS[1]}" in out, out
    smk(copy, "--cores", "1", "--quiet=rules")
    again = pd.read_parquet(method_file)
    assert again.fit_cpu_seconds.iloc[0] == 1234.5 and again.fit_cpu_seconds.iloc[1] < 1234.5
    pd.testing.assert_frame_equal(again.drop(columns=TIMING), rows.drop(columns=TIMING))
    rc, out = cli(copy, "keep", f"results/{EXP}")
    assert "2 method files kept, 0 not" in out, out
    listing = yaml.safe_load((copy / KEPT / "parts.yaml").read_text())
    assert "cells" not in listing and listing["cpu_seconds"] > 1234.5   # benchmarks + kept cell
    assert not (copy / KEPT / "cells" / RUNS[1]).with_name(method_file.name + ".cells").exists()


def test_a_runs_wall_spans_its_jobs_and_adds_the_sessions_its_parts_recorded(tmp_path):
    """Wall: from the earliest job start (end time less its wall ``s``) to the latest end,
    without the benchmarks of restored files (their times are the copy's), plus each earlier
    session's span as its kept part recorded it; a part without one makes a lower bound."""
    def job(rel, end, wall):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\tcpu_time\n{wall}\t{wall}\n")
        os.utime(path, (end, end))

    job("runs/a/none/x.tsv", 1000.0, 100.0)       # ran 900-1000
    job("runs/a/none/y.tsv", 1300.0, 250.0)       # ran 1050-1300
    job("runs/a/none/kept.tsv", 5000.0, 4000.0)   # restored: copied at 5000
    restored = {"runs/a/none/kept.parquet": "d"}
    [(start, seconds)] = job_spans(tmp_path, {Path("runs/a/none/kept.tsv")})
    assert seconds == 400.0 and start.startswith("1970-01-01T00:15:00")
    assert [w for _, w in job_spans(tmp_path)] == [4100.0] and job_spans(tmp_path / "none") == []

    earlier = {"walls": {"1969-12-31T00:00:00+00:00": 600.0}, "files": restored}
    assert run_wall(tmp_path, earlier) == (1000.0, None)
    again = {"walls": {start: 400.0, **earlier["walls"]}, "files": restored}
    assert run_wall(tmp_path, again) == (1000.0, None)       # this session counted once
    wall, note = run_wall(tmp_path, {"files": restored})     # a part kept without its span
    assert wall == 400.0 and "lower bound" in note
    assert run_wall(tmp_path / "none", None) == (None, None)


def test_a_later_session_in_the_same_results_adds_its_own_span(tmp_path):
    """A results folder that ran an earlier part keeps that part's job files: the jobs that
    ended within a recorded span are left out, so the idle hours between two sessions are not
    counted; a second keep in one session extends that session's span."""
    def job(rel, end, wall):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\tcpu_time\n{wall}\t{wall}\n")
        os.utime(path, (end, end))

    job("folds/a.tsv", 1000.0, 100.0)             # the first session: 900-1000
    [first] = job_spans(tmp_path)
    assert first[1] == 100.0
    job("runs/a/none/x.tsv", 20000.0, 500.0)      # the next session: 19500-20000
    walls = {first[0]: first[1]}
    assert run_wall(tmp_path, {"walls": walls, "files": {}}) == (600.0, None)
    [span] = job_spans(tmp_path, walls=walls)
    walls = add_span(walls, span)
    job("runs/a/none/y.tsv", 20300.0, 400.0)      # ran 19900-20300, kept again
    [span] = job_spans(tmp_path, walls=walls)
    walls = add_span(walls, span)
    assert sorted(walls.values()) == [100.0, 800.0]
    # a job stopped mid-run writes no benchmark file: its last journalled cell ends the span
    assert job_spans(tmp_path, walls=walls, cell_ends=[20600.0]) == []   # within a record
    assert [w for _, w in job_spans(tmp_path, walls={first[0]: first[1]},
                                    cell_ends=[20600.0])] == [1100.0]
    assert [w for _, w in job_spans(tmp_path, walls={first[0]: first[1]},
                                    cell_ends=[950.0])] == [800.0]


def test_a_folder_reused_across_sittings_without_parts_counts_each_sitting(tmp_path):
    """Jobs reused from an earlier sitting in the same results folder (their code unchanged),
    no part kept between: each sitting is the span of its jobs, joined where the gap between
    one job's end and the next's start is under IDLE_GAP; the idle hours between are not
    counted (milsd-protein: LC-MF at 09:04, the rest from 11:38 on)."""
    def job(rel, end, wall):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\tcpu_time\n{wall}\t{wall}\n")
        os.utime(path, (end, end))

    job("folds/a.tsv", 1000.0, 2.0)                 # 998-1000
    job("runs/p/none/lcmf.tsv", 1009.0, 6.6)        # 1002.4-1009
    job("runs/p/none/milsd.tsv", 10100.0, 100.0)    # 10000-10100, hours later
    job("runs/p/none/mi-svm.tsv", 10260.0, 162.0)   # 10098-10260, beside it
    job("runs/p/none/MI-svm.tsv", 10260.0 + IDLE_GAP - 1, 150.0)   # after a short pause
    spans = job_spans(tmp_path)
    assert [w for _, w in spans] == [11.0, 10260.0 + IDLE_GAP - 1 - 10000.0]
    assert run_wall(tmp_path, None) == (sum(w for _, w in spans), None)
    # a journalled cell of an unfinished job extends the sitting it follows
    assert [w for _, w in job_spans(tmp_path, cell_ends=[1500.0])] == [502.0, spans[1][1]]
