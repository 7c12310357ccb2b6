"""``python -m milbench.experiment.plan <config> [--cores N]``: the plan as a table, JSON
(``--json``) or one CSV row per family and data set (``--csv``); docs/budget.md.  A data set
that is not the configuration's real data gets a WARNING line and the total says what it rests
on; ``--strict`` refuses to time such a plan (exit 2)."""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from milbench.experiment.config import load_config
from milbench.experiment.plan.counting import shorten
from milbench.experiment.plan.estimate import CELL_OVERHEAD, plan, warning
from milbench.experiment.slurm import preflight, query_partition
from milbench.registry import add_code_dirs

def fmt_cpu(s):
    if s is None:
        return "-"
    if s >= 2 * 86400:
        return f"{s / 86400:,.1f} d"
    if s >= 3600:
        return f"{s / 3600:,.2f} h"
    return f"{s / 60:,.1f} min" if s >= 60 else f"{s:.1f} s"


def _fits_cell(fam):
    return "-" if fam["fits_per_cell"] is None else f"{fam['fits_per_cell']:,}"


def rows(result):
    """Flat rows (one per family and data set) for --csv; ``experiment_cpu`` is the family's
    experiment's whole estimate (its families, fold stages, job starts and workflow), repeated
    on each of its rows."""
    out = []
    for e in result["experiments"]:
        for f in e["families"]:
            fc = f.get("fit_cpu") or {}
            out.append({"experiment": e["experiment"], "dataset": f["dataset"],
                        "methods": f["label"], "kind": f["kind"], "cells": f["cells"],
                        "fits_per_cell": f["fits_per_cell"], "fits_how": f["fits_how"],
                        "cpu_per_fit_mean": fc.get("mean"), "cpu_per_fit_min": fc.get("min"),
                        "cpu_per_fit_max": fc.get("max"), "fits_timed": fc.get("n", 0),
                        "draws": len(f["draws"]), "cell_cpu": f.get("cell_cpu"),
                        "cpu": f.get("cpu"), "lower_bound": f.get("lower"),
                        "skipped": f.get("skipped"),
                        "data": result.get("data_status", {}).get(f["dataset"], {})
                        .get("status"),
                        "failed_draws": len(f.get("failed", [])),
                        "failure": f["failed"][0]["error"] if f.get("failed") else None,
                        "threads": e["threads"], "mem_mb": e["mem_mb"], "runtime": e["runtime"],
                        "experiment_cpu": e.get("cpu"),
                        "total_rests_on": "; ".join(result.get("caveats") or [])
                        or ("real data" if result.get("cpu") is not None else None)})
    return out


def report(result, cores, write=print):
    """The human-readable table; the total names what it rests on (:func:`caveats`)."""
    status = result.get("data_status", {})
    wl = max([52] + [len(f["label"]) + 2 for e in result["experiments"]
                     for f in e["families"]])
    wl = min(wl, 72)
    wd = max([15] + [len(d) + 2 for e in result["experiments"] for d in e["datasets"]])
    for e in result["experiments"]:
        ge = ">= " if e.get("lower") else ""
        write(f"\n== {e['experiment']}: {e['cells']:,} cells in {e['method_jobs']:,} method jobs "
              f"({e['cells_per_job']} cells each) on {', '.join(e['datasets'])}"
              + (f"; {e['stage_jobs']} fold-stage jobs ({e['stage_cells']:,} stage cells)"
                 if e["stage_jobs"] else ""))
        write(f"   each method job asks SLURM for threads {e['threads']}, mem_mb {e['mem_mb']}, "
              f"runtime {e['runtime']} min")
        write(f"   {'methods (selector + classifier entry)':<{wl}}{'data set':<{wd}}{'cells':>7}"
              f"{'fits/cell':>11}{'CPU/fit s (min-max)':>27}{'est. CPU':>12}")
        for f in e["families"]:
            fc = f.get("fit_cpu")
            spread = (f"{fc['mean']:.3g} ({fc['min']:.2g}-{fc['max']:.2g})" if fc else
                      "skipped" if f.get("skipped") else "failed" if f.get("failed")
                      else "stopped" if f["draws"] else "-")
            est = ("unknown" if f.get("unknown") else "-" if f.get("cpu") is None else
                   (">= " if f.get("lower") else "") + fmt_cpu(f["cpu"]))
            ds = f["dataset"] + {"synthetic": "*", "small": "*"}.get(
                status.get(f["dataset"], {}).get("status"), "")
            write(f"   {shorten(f['label'], wl - 2):<{wl}}{ds:<{wd}}{f['cells']:>7,}"
                  f"{_fits_cell(f):>11}{spread:>27}{est:>12}")
            if f.get("failed"):
                n = len(f["failed"]) + len(f["draws"])
                write(f"      {len(f['failed'])} of {n} draws failed (not counted): "
                      f"{f['failed'][0]['error'][:200]}")
        how = sorted({f["fits_how"].split(": ")[0] if f["kind"] == "untuned"
                      and "threshold" not in f["fits_how"] else f["fits_how"]
                      for f in e["families"] if f["fits_how"]})
        write("   fits/cell: " + "; ".join(how))
        marked = sorted(d for d in e["datasets"]
                        if status.get(d, {}).get("status") in ("synthetic", "small"))
        if marked:
            write(f"   * timed on data that is not the config's: {', '.join(marked)}")
        if e.get("cpu") is not None:
            fits = e["cpu"] - e["stage_cpu"] - e["fixed_cpu"] - e["overhead_cpu"]
            write(f"   est. CPU {ge}{fmt_cpu(e['cpu'])} = {ge}{e['cpu'] / 3600:,.2f} CPU-h (fits "
                  f"{fmt_cpu(fits)}, fold stages {fmt_cpu(e['stage_cpu'])}, job starts "
                  f"{fmt_cpu(e['fixed_cpu'])}, workflow {fmt_cpu(e['overhead_cpu'])}); wall at "
                  f"{cores} cores {ge}{fmt_cpu(e['wall'])}")
    if result.get("cpu") is not None:
        ge = ">= " if result["lower"] else ""
        write(f"\nTOTAL est. CPU {ge}{fmt_cpu(result['cpu'])} = {ge}{result['cpu'] / 3600:,.2f} "
              f"CPU-h; wall at {cores} cores {ge}{fmt_cpu(result['wall'])} "
              f"(measured in {result['measure_wall']:.0f} s wall; job start "
              f"{result['fixed_job_cpu']:.2f} s CPU)")
        notes = result.get("caveats") or []
        write("the total " + ("INCOMPLETE: " + "; ".join(notes) if notes
                              else "rests on the config's real data for every data set"))
        for ds, st in sorted(status.items()):
            if st["status"] != "real":
                write(warning(ds, st))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m milbench.experiment.plan",
                                 description="Cells, fits, measured CPU and SLURM resources "
                                             "of a config's experiments.")
    ap.add_argument("config")
    ap.add_argument("--experiments", nargs="+", help="only these experiments")
    ap.add_argument("--cores", type=int, default=16, help="cores for the wall estimate")
    ap.add_argument("--seconds", type=float, default=180.0,
                    help="wall budget of the sampled fits (a fit running past it is stopped and "
                         "counted as a lower bound)")
    ap.add_argument("--points", type=int, default=0,
                    help="grid points per tuned draw (default: sqrt(|grid|), 4 to 16)")
    ap.add_argument("--draws", type=int, default=4, help="most draws per family")
    ap.add_argument("--fit-limit", type=float, default=300.0,
                    help="most seconds of one draw (stopped beyond: a lower bound)")
    ap.add_argument("--data", action="append", default=[],
                    help="raw-data folder of the built-in data sets (repeatable; default "
                         "results/raw, then ../shared/data)")
    ap.add_argument("--bags", default="results/bags", help="Parquet stores of chain-built sets")
    ap.add_argument("--cell-overhead", type=float, default=CELL_OVERHEAD)
    ap.add_argument("--seed", type=int, default=0, help="seed of the sampling design")
    ap.add_argument("--count-only", action="store_true", help="counts and resources, no timing")
    ap.add_argument("--strict", action="store_true",
                    help="refuse (exit 2) when a data set is missing, synthetic or too small "
                         "for the config's folds, instead of warning and marking the total")
    ap.add_argument("--partition",
                    help="SLURM partition: check every method job's request against its limits "
                         "first (scontrol / sinfo) and stop naming job, request, limit and key; "
                         "threads above its CPUs per node are cut (as the workflow does)")
    ap.add_argument("--json", help="write the plan as JSON to this file ('-': stdout)")
    ap.add_argument("--csv", help="write one row per family and data set to this CSV file")
    a = ap.parse_args(argv)
    try:
        cfg = load_config(a.config)
        add_code_dirs(cfg["code"])
    except (ValueError, OSError) as e:
        ap.error(str(e))
    if a.partition:
        part, skipped = query_partition(a.partition)
        if skipped:
            print(skipped, file=sys.stderr)
        else:
            exps = {k: v for k, v in cfg["experiments"].items()
                    if not a.experiments or k in a.experiments}
            cfg["threads"]["run"], notes, problems = preflight(exps, cfg["threads"]["run"], part)
            for note in notes:
                print(note, file=sys.stderr)
            if problems:
                print("\n".join(problems), file=sys.stderr)
                sys.exit(2)
    roots = a.data or [r for r in ("results/raw", str(Path("..") / "shared" / "data"))
                       if Path(r).is_dir()]
    quiet = a.json == "-"
    log = (lambda *x: print(*x, file=sys.stderr, flush=True)) if quiet else \
        (lambda *x: print(*x, flush=True))
    try:
        result = plan(cfg, experiments=a.experiments, seconds=a.seconds, cores=a.cores,
                      points=a.points, max_draws=a.draws, data_root=roots, bags_root=a.bags,
                      fit_limit=a.fit_limit, seed=a.seed, cell_overhead=a.cell_overhead,
                      measure=not a.count_only, strict=a.strict, log=log)
    except ValueError as e:
        ap.error(str(e))
    result["config"] = a.config
    report(result, a.cores, write=log)
    if a.json:
        text = json.dumps(result, indent=1, default=str)
        if a.json == "-":
            print(text)
        else:
            Path(a.json).write_text(text)
    if a.csv:
        rs = rows(result)
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rs[0]) if rs else ["experiment"])
            w.writeheader()
            w.writerows(rs)
    return result
