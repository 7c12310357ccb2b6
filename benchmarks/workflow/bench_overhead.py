"""Workflow overhead per cell: CPU of snakemake and all its jobs minus the fits' own CPU, per cell.

What the workflow costs beyond the methods' own work; optionally against another revision.

    OMP_NUM_THREADS=1 python -m benchmarks.workflow.bench_overhead [--cores 2] [--repeats 5]
        [--baseline REV]     # also run the workflow of git revision REV on the same config
        [--times N]          # N runs of each, alternating; the least overhead of each compared

A config of cheap methods (MI-Simple, Citation-kNN, MILR) on musk1 + elephant (offline copies),
``--repeats`` × 10-fold (5 × 10 × 2 × 3 = 300 cells). The data and fold jobs run first (not
counted); then ``snakemake --cores N`` builds the scores in a fresh temp dir, and

    overhead per cell = (CPU of snakemake and all its jobs − Σ fit + predict CPU) / cells

where the CPU of Snakemake and every process it started (job scripts, their forked workers)
is this process's RUSAGE_CHILDREN, and Σ fit + predict comes from scores.parquet
(fit_cpu_seconds + predict_cpu_seconds).  That overhead is split into what the jobs spend (Σ
``cpu_time`` of the run's benchmark files: these jobs last a few seconds, which Snakemake
samples every 0.5 s) and the scheduler's own CPU (the rest); the jobs' share, less one
interpreter start per job (:func:`milbench.experiment.plan.fixed_job_cpu`, measured here), per
cell is the planner's ``CELL_OVERHEAD``: the plan counts job starts per job and the scheduler
not at all.  ``--baseline`` runs another revision's Snakefile (e.g. the per-fold design,
43dde0d) from a temporary git worktree on the same config, in this run, and prints the ratio;
``--times N`` alternates N runs of each and compares the least overhead per cell of each (on a
shared machine, the run least disturbed by other work).
"""
from __future__ import annotations

from benchmarks import REPO
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from milbench.experiment.plan import fixed_job_cpu

ENV = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")


def config(repeats):
    return {"offline": True, "experiments": {"overhead": {
        "datasets": ["musk1", "elephant"],
        "protocol": {"kind": "kfold", "folds": 10, "repeats": repeats, "seed": 0},
        "selectors": [{"name": "none"}],
        "classifiers": [{"name": "mi-simple"}, {"name": "citation-knn", "references": 2,
                                                "citers": 4}, {"name": "milr", "C": 1.0}],
    }}}


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def snakemake(snakefile, workdir, *args):
    cmd = [sys.executable, "-m", "snakemake", "-s", str(snakefile), "-d", str(workdir),
           "--configfile", str(workdir / "config.yaml"), "--quiet", "all", *args]
    c, t = children_cpu(), time.perf_counter()
    lib = str(Path(snakefile).parent / "workflow")      # that revision's library, not ours
    res = subprocess.run(cmd, capture_output=True, text=True, env=dict(ENV, PYTHONPATH=lib))
    if res.returncode:
        raise SystemExit(f"snakemake failed in {workdir}:\n{res.stderr[-3000:]}")
    return children_cpu() - c, time.perf_counter() - t


def measure(root, cfg, cores):
    """(cells, total CPU, Σ fit+predict CPU, wall, Σ jobs' benchmark CPU, jobs) of the method
    stage of one workflow."""
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        wd = Path(tmp)
        (wd / "config.yaml").write_text(yaml.safe_dump(cfg))
        data = [f"results/overhead/folds/{ds}.parquet" for ds in ("musk1", "elephant")]
        snakemake(root / "Snakefile", wd, "--cores", str(cores), *data)
        cpu, wall = snakemake(root / "Snakefile", wd, "--cores", str(cores),
                              "results/overhead/scores.parquet")
        scores = pd.read_parquet(wd / "results/overhead/scores.parquet")
        bench = [pd.read_csv(p, sep="\t").cpu_time.iloc[-1]
                 for p in (wd / "results/benchmarks/overhead").rglob("*.tsv")
                 if "folds" not in p.parts]
    work = float((scores.fit_cpu_seconds + scores.predict_cpu_seconds).sum())
    return len(scores), cpu, work, wall, float(sum(bench)), len(bench)


def report(name, cells, cpu, work, wall, jobs_cpu, jobs, start):
    per = (cpu - work) / cells
    in_jobs = (jobs_cpu - work - jobs * start) / cells
    print(f"{name:<22} {cells:6d} {cpu:9.1f} {work:9.1f} {cpu - work:10.1f} {per:9.3f} "
          f"{100 * (cpu - work) / cpu:7.1f} {wall:8.1f}")
    print(f"{'':<22} of it in {jobs} jobs {jobs_cpu - work:.1f} s (starts {jobs} x {start:.2f} s), "
          f"scheduler {cpu - jobs_cpu:.1f} s; per cell in the jobs beyond fits and starts "
          f"(the plan's CELL_OVERHEAD) {in_jobs:.4f} s")
    return per


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--baseline", help="git revision to compare (run from a temp worktree)")
    ap.add_argument("--times", type=int, default=1, help="runs of each workflow (least taken)")
    a = ap.parse_args()
    cfg = config(a.repeats)
    start = fixed_job_cpu()
    print(f"snakemake --cores {a.cores}; CPU seconds (user + sys) of snakemake and all its jobs")
    print(f"{'workflow':<22} {'cells':>6} {'CPU':>9} {'fit+pred':>9} {'overhead':>10} "
          f"{'s/cell':>9} {'% CPU':>7} {'wall s':>8}")
    with tempfile.TemporaryDirectory(prefix="bench-overhead-rev-") as tmp:
        roots = {"this checkout": REPO}
        if a.baseline:
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", tmp,
                            a.baseline], check=True, capture_output=True)
            roots[f"baseline {a.baseline[:12]}"] = Path(tmp)
        try:
            per = {name: [] for name in roots}
            for _ in range(a.times):          # alternating, so both see the same load
                for name, root in roots.items():
                    per[name].append(report(name, *measure(root, cfg, a.cores), start))
        finally:
            if a.baseline:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", tmp],
                               check=True, capture_output=True)
    if a.baseline:
        ours, base = (min(v) for v in per.values())
        print(f"overhead per cell (least of {a.times}): {ours:.3f} s vs {base:.3f} s = "
              f"{ours / base:.3f}x ({base / ours:.1f}x less)")


if __name__ == "__main__":
    main()
