"""What the README's two commands cost: the default run and, optionally, the test suite.

    python -m benchmarks.workflow.bench_setup [--dir DIR] [--tests] [--out resources/costs.json]

Runs ``snakemake --cores 2`` (the embedded default, ``config/config.yaml``) in a fresh copy of
the workflow (``Snakefile``, ``workflow/``, ``resources/``, ``config/``, ``envs/``, as
tests/conftest.py ``copy_workflow``) or in ``--dir``, and with ``--tests`` then
``python -m pytest`` in the repository.  For each it records the CPU of every process it
started (this process's RUSAGE_CHILDREN, user + system: steadier than wall on a shared machine),
the wall time and the load average before and after; for the run its jobs (per rule), cells
(``scores.parquet``'s data set × method × ratio × repeat × fold) and each ``summary.csv``'s
metric means (``results``); for the suite its passed, skipped and failed tests; how many
tests of the default selection skip in a clone without ``../shared``; and the machine (cores,
CPU model, date, commit).  All go to ``--out``, written as each stage ends.  The README's cost paragraph and docs/usage.md's
threshold table quote that file; tests/test_costs_doc.py checks they do.
"""
from __future__ import annotations

from benchmarks import REPO
import argparse
import contextlib
import datetime
import io
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

CELL = ["dataset", "method", "train_ratio", "repeat", "fold"]
COPIED = ("Snakefile", "workflow", "resources", "config", "envs")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def machine():
    model = next((line.split(":", 1)[1].strip() for line in
                  Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "unknown")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    return {"cores": os.cpu_count(), "cpu_model": model, "commit": commit,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")}


def measured(cmd, cwd, env=None, check=True):
    """Run ``cmd``; its output, CPU seconds (all its processes) and wall seconds; with
    ``check``, stop on its failure."""
    load = os.getloadavg()[0]
    c, t = children_cpu(), time.perf_counter()
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t, children_cpu() - c
    if res.returncode != 0:
        tail = f"{' '.join(cmd)} in {cwd} exited {res.returncode}:\n{(res.stdout + res.stderr)[-3000:]}"
        if check:
            sys.exit(tail)
        print(tail, file=sys.stderr)
    return res.stdout + res.stderr, {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1),
                                     "load_before": round(load, 2),
                                     "load_after": round(os.getloadavg()[0], 2)}


def copy_workflow(root: Path):
    for name in COPIED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, root / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif src.exists():
            shutil.copy(src, root / name)
    return root


def job_counts(log):
    """Snakemake's job-stats table (``rule  count``) -> {rule: count}, with ``total``."""
    table = log.split("Job stats:")[-1]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.M)}


def scores_of(summary):
    """A summary.csv's metric means per data set × method (its timings are this run's noise)."""
    keep = ["dataset", "method"] + [c for c in summary.columns if c.endswith("_mean")
                                    and "seconds" not in c and c != "n_features_mean"]
    return summary[keep].to_dict(orient="records")


def default_run(root: Path, cores: int):
    env = dict(os.environ, PYTHONPATH=str(root / "workflow"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    log, cost = measured([sys.executable, "-m", "snakemake", "--cores", str(cores)], root, env)
    jobs = job_counts(log)
    cells = sum(len(pd.read_parquet(p, columns=CELL).drop_duplicates())   # seeds: one cell
                for p in (root / "results").glob("*/scores.parquet"))
    summaries = {p.parent.name: scores_of(pd.read_csv(p))
                 for p in sorted((root / "results").glob("*/summary.csv"))}
    return {"command": f"snakemake --cores {cores}", **cost, "jobs": jobs.get("total"),
            "jobs_per_rule": {k: v for k, v in jobs.items() if k != "total"},
            "cells": cells}, summaries


def test_suite():
    log, cost = measured([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], REPO,
                         check=False)
    last = log.strip().splitlines()[-1]
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|skipped|failed|xfailed)", last)}
    return {"command": "python -m pytest", **cost, "passed": counts.get("passed", 0),
            "skipped": counts.get("skipped", 0), "failed": counts.get("failed", 0),
            "summary": last.strip("= ")}


class _NeedsShared:
    """Counts the collected tests that skip without ``../shared``: those using the
    ``shared_data`` fixture (directly or through another fixture) and the paper-text checks."""
    count = 0

    def pytest_collection_finish(self, session):
        self.count = sum("shared_data" in item.fixturenames or
                         item.originalname == "test_every_number_is_printed_in_its_table"
                         for item in session.items)


def needs_shared():
    """How many tests of the default selection skip in a clone without ``../shared``."""
    import pytest

    counter = _NeedsShared()
    with contextlib.redirect_stdout(io.StringIO()):
        pytest.main(["--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider",
                     "--rootdir", str(REPO), str(REPO / "tests")], plugins=[counter])
    return counter.count


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, help="run in this workflow directory instead of a copy")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--tests", action="store_true", help="also time the test suite")
    ap.add_argument("--out", type=Path, default=REPO / "resources" / "costs.json")
    args = ap.parse_args(argv)
    out = {"machine": machine()}
    if args.dir:
        out["default_run"], summaries = default_run(args.dir.resolve(), args.cores)
    else:
        with tempfile.TemporaryDirectory(prefix="milbench-setup-") as tmp:
            out["default_run"], summaries = default_run(copy_workflow(Path(tmp)), args.cores)
    out["results"] = summaries
    out["tests_reading_shared"] = needs_shared()
    write(args.out, out)
    if args.tests:
        out["test_suite"] = test_suite()
        write(args.out, out)


def write(path, out):
    """``out`` into ``path`` (sections in a fixed order), as each stage ends."""
    order = ("machine", "default_run", "test_suite", "tests_reading_shared", "results")
    path.write_text(json.dumps({k: out[k] for k in order if k in out}, indent=1) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "results"}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
