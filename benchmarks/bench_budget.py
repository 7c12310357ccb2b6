"""Full-reproduction budget (issues #10, #16): cells, method jobs, CPU time, wall time at 16
cores and peak memory of every config/paper/*.yaml, from a sample of its cells timed here.

    python benchmarks/bench_budget.py [--per-config 8] [--timeout 30] [--cores 16] [--seed 0]
        [--configs midr miordm] [--bags results/bags] [--cell-overhead 0.05]

Cells: each config is expanded exactly as the workflow does (milbench.pipeline.expand_methods x
datasets x milbench.folds.fold_keys); a method job (run_method) runs all cells of one dataset x
selector x classifier in one process. Sample: the cells are split into strata by selector name
(by classifier name when all share one selector) -- per-cell cost spans orders of magnitude
between e.g. HyDR-MI's genetic search and a ReliefF filter, so a plain random sample of 5 would
miss the cells that dominate -- and --per-config draws are spread over the strata (at least one
each, the rest one at a time to the stratum whose estimated share of the total per draw is
largest). Each drawn cell runs in its own subprocess through milbench.runner.run_cell on the
real data (../shared/data via milbench.sources.load_dataset; data sets built by the workflow's
chains -- Corel, Reddit, WebKB, protein graph -- from the Parquet store under --bags, when
built there), measuring the cell's CPU time, the process's fixed cost (interpreter, imports,
data: what every method job pays once) and its peak RSS.
A job still running after --timeout is killed and estimated from a scaled-down run: every `tune`
grid fixed at its middle value (cost x |grid| x inner_folds + 1: the inner GridSearchCV fits
plus the refit, each taken as one full-training fit, so slightly high) and HyDR-MI's
n_generations / n_seeds lowered to 1 and population_size to 10 (cost x (gens + 1) / 2 x seeds x
population / 10; the GA's fitness cache skips repeated chromosomes, which small populations
produce more often, so this part may be low). When that also times out, the config's totals are lower bounds (marked >=).

    est. total CPU   = sum over strata of (cells in stratum x mean sampled cell CPU
                                     + its distinct fold-stage cells x mean sampled stage CPU)
                       + method jobs x mean fixed cost + cells x --cell-overhead
    (--cell-overhead: the workflow's cost per cell beyond the fit, measured by
    benchmarks/bench_overhead.py)
    est. wall @ 16   = est. total CPU / (16 x e)
    e                = parallel efficiency measured here: one job alone vs the same job twice
                       at once (wall alone / wall of the pair, medians of 3); 1.0 = perfect.
    peak memory      = max peak RSS over the sampled runs (one job, not the whole workflow).

This machine has 2 cores shared with other work, so times are pessimistic and e is noisy.
Methods not yet in milbench.registry are resolved through FALLBACK (their module must exist);
a job that cannot be built (or whose dataset has no loader) is reported and another is drawn.
"""
import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
sys.path.insert(0, str(REPO / "workflow"))
ENV = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")

# Config names used by config/paper/*.yaml whose registry line may not have landed yet
# (benchmarks/bench_dag.py uses the same table for its dry runs).
FALLBACK = {
    "selector": {
        "cvfs": "milbench.selectors.cvfs:CVFS",
        "big": "milbench.selectors.view_baselines:BagInfoGain",
        "iig": "milbench.selectors.view_baselines:InstanceInfoGain",
        "fs": "milbench.selectors.view_baselines:PairwiseBagReliability",
    },
    "classifier": {
        "citation-knn": "milbench.classifiers.citation_knn:CitationKNN",
        "mdd": "milbench.classifiers.diverse_density:MDD",
        "midd": "milbench.classifiers.diverse_density:MIDD",
        "emdd": "milbench.classifiers.diverse_density:EMDD",
        "mi-boost": "milbench.classifiers.miboost:MIBoost",
        "mi-optimal-ball": "milbench.classifiers.optimal_ball:MIOptimalBall",
        "mi-kernel-svm": "milbench.classifiers.set_kernel:SetKernelSVM",
        "mi-adaboost": "milbench.classifiers.ensembles:MIAdaBoost",
        "mi-bagging": "milbench.classifiers.ensembles:MIBagging",
        "mi-wrapper": "milbench.classifiers.wrapper:MIWrapper",
        "mi-svm": "milbench.classifiers.misvm:MiSVM",
        "MI-svm": "milbench.classifiers.misvm:MISVM",
        "miordm": "milbench.classifiers.miordm:MIORDM",
        "kisvm": "milbench.classifiers.kisvm:KISVM",
        "mildm": "milbench.classifiers.mildm:MILDM",
        "mirsvm": "milbench.classifiers.mirsvm:MIRSVM",
        "view-ensemble": "milbench.selectors.view_baselines:ViewEnsemble",
    },
}


def patch_registry():
    """Add FALLBACK entries whose module exists and whose name the registry lacks; returns
    the names added."""
    from milbench import registry

    added = []
    for kind, table in (("selector", registry.SELECTORS), ("classifier", registry.CLASSIFIERS)):
        for name, path in FALLBACK[kind].items():
            mod = path.split(":")[0]
            if name not in table and (REPO / "workflow" / (mod.replace(".", "/") + ".py")).exists():
                table[name] = path
                added.append(name)
    return added


def config_jobs(cfg):
    """All cells of a config as (experiment, dataset, method, repeat, fold), the number of
    method jobs, and the other rules' job count (bags, folds, 5 aggregation rules per
    experiment)."""
    from milbench.folds import fold_keys
    from milbench.pipeline import expand_methods

    from milbench.stages import shared_stages

    jobs, datasets, other, n_methods = [], set(), 0, 0
    for exp, e in cfg["experiments"].items():
        methods = expand_methods(e)
        staged, specs = shared_stages({(m["selector_id"], m["classifier_id"]): m for m in methods})
        for m in methods:
            m["stage"] = staged.get((m["selector_id"], m["classifier_id"]))
        keys = fold_keys(e["protocol"])
        for ds in e["datasets"]:
            datasets.add(ds)
            jobs += [(exp, ds, m, r, f) for m in methods for (r, f) in keys]
            n_methods += len(methods)
        other += (len(e["datasets"]) + 5) + len(specs) * len(e["datasets"])
    return jobs, n_methods, other + len(datasets)


def stage_cells(jobs):
    """The distinct fold-stage cells of these jobs: a stage is fitted once per experiment,
    dataset, stage and cell, whatever the methods reading it."""
    return {(exp, ds, m["stage"], r, f) for exp, ds, m, r, f in jobs if m.get("stage")}


# ------------------------------------------------------------------------------- child side
def child(spec_json):
    t_start = time.process_time()
    spec = json.loads(spec_json)
    from milbench.folds import make_folds
    from milbench.runner import fit_stage_cell, run_cell
    from milbench.sources import load_dataset
    from milbench.store import read_bags

    added = patch_registry()
    used = [spec["method"][k]["name"] for k in ("selector", "classifier")
            if spec["method"][k]["name"] in added]
    bags = (read_bags(Path(spec["bags"])) if spec.get("bags")
            else load_dataset(spec["dataset"], DATA))
    folds = make_folds(bags.bag_ids, bags.labels, spec["protocol"])
    fixed = time.process_time() - t_start
    stage, stage_cpu = None, 0.0
    if spec["stage"]:   # the shared fold stage, fitted once per cell by its own job
        t0 = time.process_time()
        stage = fit_stage_cell(bags, folds, spec["method"]["selector"], spec["settings"],
                               (spec["repeat"], spec["fold"]))
        stage_cpu = time.process_time() - t0
    t0, w0 = time.process_time(), time.perf_counter()
    row = run_cell(bags, folds, spec["method"], spec["settings"], experiment=spec["experiment"],
                   dataset=spec["dataset"], repeat=spec["repeat"], fold=spec["fold"], stage=stage)
    out = {"cpu": time.process_time() - t0, "wall": time.perf_counter() - w0, "fixed": fixed,
           "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "accuracy": float(row["accuracy"].iloc[0]), "fallback": used,
           "n_instances": int(len(bags.instances))}
    if spec["stage"]:
        out["stage_cpu"] = stage_cpu
    print("RESULT " + json.dumps(out))


# ------------------------------------------------------------------------------ parent side
BUILT = {}   # data set -> its Parquet store under --bags (chain-built data sets)


def job_spec(cfg, job):
    from milbench.runner import experiment_settings

    exp, ds, m, r, f = job
    e = cfg["experiments"][exp]
    return {"experiment": exp, "dataset": ds, "method": {"selector": m["selector"],
                                                          "classifier": m["classifier"]},
            "repeat": r, "fold": f, "protocol": e["protocol"],
            "settings": experiment_settings(e), "bags": BUILT.get(ds), "stage": bool(m["stage"]),
            "inner_folds": e["inner_folds"]}


# Iteration counts a scaled-down run lowers, with the value used; cost taken as linear in them.
SCALE_DOWN = {"hydr-mi": {"n_generations": (50, 1), "n_seeds": (5, 1),
                          "population_size": (100, 10)}}


def scaled_down(spec):
    """The same job with every `tune` grid fixed at its middle value (one fit instead of
    |grid| x inner_folds + 1) and SCALE_DOWN's iteration counts lowered; returns (spec, factor)
    where factor x the scaled job's CPU estimates the real job's."""
    spec = json.loads(json.dumps(spec))
    factor = 1.0
    n_cand = 1
    for kind in ("selector", "classifier"):
        entry = spec["method"][kind]
        for k, grid in entry.pop("tune", {}).items():
            entry[k] = grid[len(grid) // 2]
            n_cand *= len(grid)
        for k, (default, small) in SCALE_DOWN.get(entry["name"], {}).items():
            orig = entry.get(k, default)
            if orig > small:
                entry[k] = small
                # generation 0 (the initial population) is evaluated too: (gens + 1) rounds
                factor *= (orig + 1) / (small + 1) if k == "n_generations" else orig / small
    if n_cand > 1:
        factor *= n_cand * spec["inner_folds"] + 1
    return spec, factor


def start(spec):
    return subprocess.Popen([sys.executable, __file__, "--child", json.dumps(spec)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)


def finish(p, timeout):
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return {"timeout": True}
    for line in out.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = [ln for ln in err.strip().splitlines() if ln.strip()][-1:] or [f"exit {p.returncode}"]
    return {"error": tail[0][:200]}


def label(job):
    from milbench.pipeline import label as lab

    exp, ds, m, r, f = job
    return f"{exp}/{ds}/{lab(m['selector'])} + {lab(m['classifier'])} r{r}f{f}"


def short(job):
    exp, ds, m, r, f = job
    return f"{exp}/{ds}/{m['selector']['name']}+{m['classifier']['name']}"


def time_job(cfg, job, timeout):
    """{cpu, fixed, peak_mb, how} for one job: measured, or extrapolated from a scaled-down run
    when the real one exceeds the timeout (lower bound when that one does too)."""
    spec = job_spec(cfg, job)
    r = finish(start(spec), timeout)
    if "cpu" in r:
        r["how"] = "measured"
        return r
    if "error" in r:
        return r
    small, factor = scaled_down(spec)
    if factor <= 1:
        return {"cpu": timeout, "fixed": float("nan"), "peak_mb": float("nan"), "lower": True,
                "how": f"> {timeout:.0f} s, nothing to scale down: counted as {timeout:.0f} s"}
    r = finish(start(small), timeout)
    if "cpu" in r:
        r["how"] = f"> {timeout:.0f} s; scaled-down run {r['cpu']:.1f} s x {factor:,.0f}"
        r["cpu"] *= factor
        return r
    if "error" in r:
        return r
    return {"cpu": timeout * factor, "fixed": float("nan"), "peak_mb": float("nan"),
            "lower": True, "how": f"> {timeout:.0f} s even scaled down: >= {timeout:.0f} s x "
                                  f"{factor:,.0f}"}


def strata(jobs):
    """Group jobs by selector name (the usual cost driver here: HyDR-MI / MIDR vs the rest), or
    by classifier name when every job has the same selector; a tuned method (inner-CV grid,
    tens of fits a cell) is its own stratum ("+tune"), apart from the same method untuned."""
    sel = {m["selector"]["name"] for _, _, m, _, _ in jobs}
    kind = "selector" if len(sel) > 1 else "classifier"
    groups = {}
    for i, (_, _, m, _, _) in enumerate(jobs):
        tuned = bool(m["selector"].get("tune") or m["classifier"].get("tune"))
        groups.setdefault(m[kind]["name"] + ("+tune" if tuned else ""), []).append(i)
    return kind, groups


def efficiency(cfg, job, timeout, repeats=3):
    """Wall of one job alone / wall of two copies run at the same time (medians of `repeats`
    alternating trials, since other work on the machine comes and goes)."""
    spec = job_spec(cfg, job)
    ones, twos = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        if "cpu" not in finish(start(spec), timeout):
            return None, None
        ones.append(time.perf_counter() - t)
        ps = [start(spec) for _ in range(2)]
        t = time.perf_counter()
        if any("cpu" not in finish(p, timeout) for p in ps):
            return None, None
        twos.append(time.perf_counter() - t)
    t1, t2 = statistics.median(ones), statistics.median(twos)
    return t1 / t2, (t1, t2)


def fmt_h(seconds):
    if seconds >= 86400 * 2:
        return f"{seconds / 86400:,.1f} d"
    return f"{seconds / 3600:,.1f} h" if seconds >= 360 else f"{seconds / 60:,.1f} min"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-config", type=int, default=8,
                    help="draws per config (at least one per stratum)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per sampled run")
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--configs", nargs="*", help="config stems (default: all config/paper/*.yaml)")
    ap.add_argument("--bags", default=str(REPO / "results" / "bags"),
                    help="Parquet stores of chain-built data sets (results/bags of a run)")
    ap.add_argument("--cell-overhead", type=float, default=0.05,
                    help="workflow CPU seconds per cell beyond the fit (bench_overhead.py)")
    ap.add_argument("--child")
    a = ap.parse_args()
    if a.child:
        return child(a.child)
    if not DATA.exists():
        sys.exit(f"{DATA} absent (fresh clone): nothing to time")

    paths = sorted((REPO / "config" / "paper").glob("*.yaml"))
    if a.configs:
        paths = [p for p in paths if p.stem in a.configs]
    from milbench.config import load_config
    from milbench.sources import load_manifest

    loadable = {n for n, v in load_manifest().items() if v["format"] != "archive"}
    # a chain-built store is named <data set>@<source tag>: prefer a real source over synthetic
    for p in sorted(Path(a.bags).glob("*"), key=lambda p: p.name.endswith("@synthetic"),
                    reverse=True):
        if (p / "meta.json").exists():
            BUILT[p.name.split("@")[0]] = str(p)
    rows, eff_job = [], None
    for path in paths:
        cfg = load_config(path)
        all_jobs, n_methods, other = config_jobs(cfg)
        jobs = [j for j in all_jobs if j[1] in loadable or j[1] in BUILT]
        missing = sorted({j[1] for j in all_jobs} - loadable - set(BUILT))
        print(f"\n== {path.name}: {len(all_jobs):,} cells in {n_methods:,} method jobs "
              f"(+{other} other jobs) ==")
        if BUILT.keys() & {j[1] for j in all_jobs}:
            print("  chain-built data sets read from " + ", ".join(
                sorted(BUILT[d] for d in BUILT.keys() & {j[1] for j in all_jobs})))
        if missing:
            print(f"  {len(all_jobs) - len(jobs):,} cells on {', '.join(missing)}: not built under "
                  f"--bags {a.bags}, not timed")
        if not jobs:
            rows.append((path.stem, len(all_jobs), n_methods, 0, None, None, None,
                         [f"no loader for {', '.join(missing)}"]))
            continue
        kind, groups = strata(jobs)
        rng = random.Random(a.seed)
        print(f"  strata by {kind}: " + ", ".join(f"{g} {len(v):,}" for g, v in groups.items()))
        total_cpu, fixed_all, peaks, lower, n_done, failed = 0.0, [], [], False, 0, []
        order = {g: rng.sample(idx, len(idx)) for g, idx in groups.items()}
        got = {g: [] for g in groups}
        stage_got = {g: [] for g in groups}
        dead = set()

        def draw(g):
            nonlocal lower, eff_job
            for _ in range(4):  # a job that cannot be built is replaced by another draw
                if not order[g]:
                    break
                job = jobs[order[g].pop()]
                t = time.perf_counter()
                r = time_job(cfg, job, a.timeout)
                wall = time.perf_counter() - t
                if "error" in r:
                    print(f"  [{g}] cannot run {label(job)}: {r['error']}")
                    failed.append(r["error"])
                    continue
                fb = f" (registry fallback: {', '.join(r['fallback'])})" if r.get("fallback") \
                    else ""
                st = (f" + its fold stage {r['stage_cpu']:.2f} s" if "stage_cpu" in r else "")
                print(f"  [{g}] {label(job)}: cell CPU {r['cpu']:,.1f} s ({r['how']}){st}, fixed "
                      f"{r['fixed']:.2f} s, peak {r['peak_mb']:.0f} MB, wall {wall:.0f} s{fb}")
                got[g].append(r["cpu"])
                if job[2].get("stage") and "stage_cpu" in r:
                    stage_got[g].append(r["stage_cpu"])
                lower |= bool(r.get("lower"))
                if r["fixed"] == r["fixed"]:
                    fixed_all.append(r["fixed"])
                if r["peak_mb"] == r["peak_mb"]:
                    peaks.append((r["peak_mb"], short(job)))
                if eff_job is None and r["how"] == "measured" and 0.3 < r["cpu"] < 10:
                    eff_job = (cfg, job)
                return
            dead.add(g)

        for g in groups:  # phase 1: one draw per stratum
            draw(g)
        for _ in range(a.per_config - len(groups)):  # phase 2: where the estimate matters most
            live = [g for g in groups if g not in dead and got[g] and order[g]]
            if not live:
                break
            draw(max(live, key=lambda g: len(groups[g]) * statistics.mean(got[g]) / len(got[g])))
        for g, idx in groups.items():
            if got[g]:
                total_cpu += len(idx) * statistics.mean(got[g])
                n_done += len(got[g])
            if stage_got[g]:   # each distinct fold-stage cell is fitted once
                total_cpu += (len(stage_cells([jobs[i] for i in idx]))
                              * statistics.mean(stage_got[g]))
            else:
                lower = True  # a stratum with no estimate contributes nothing
        if not n_done:
            rows.append((path.stem, len(jobs), n_methods, 0, None, None, None, failed[:1]))
            continue
        fixed = statistics.mean(fixed_all) if fixed_all else 0.0
        total_cpu += n_methods * fixed + len(all_jobs) * a.cell_overhead
        peak = max(peaks) if peaks else (float("nan"), "-")
        lower |= len(jobs) < len(all_jobs)
        rows.append((path.stem, len(all_jobs), n_methods, n_done, total_cpu, peak, lower, fixed))

    e, eff_detail = None, None
    if eff_job is not None:
        e, eff_detail = efficiency(*eff_job, timeout=a.timeout * 3)
    if e is None:
        e = 1.0
        eff_note = "not measured (no short sampled job); e = 1 assumed"
    else:
        eff_note = (f"{short(eff_job[1])}: alone {eff_detail[0]:.1f} s, two at once "
                    f"{eff_detail[1]:.1f} s -> e = {e:.2f}")
    print(f"\nparallel efficiency (1 vs 2 processes on this machine): {eff_note}")
    print(f"\n{'config':<8} {'cells':>9} {'methods':>7} {'n':>3} {'est. total CPU':>15} "
          f"{'wall @' + str(a.cores) + ' cores':>15} {'peak MB':>8}  largest sampled job")
    for row in rows:
        stem, nj, n_methods, n = row[:4]
        if row[4] is None:
            print(f"{stem:<8} {nj:9,d} {n_methods:7,d} {0:3d}  no cell could be run: "
                  f"{(row[7] or ['?'])[0]}")
            continue
        total, peak, lower, fixed = row[4:]
        ge = ">=" if lower else ""
        wall = total / (a.cores * e)
        print(f"{stem:<8} {nj:9,d} {n_methods:7,d} {n:3d} {ge + fmt_h(total):>15} "
              f"{ge + fmt_h(wall):>15} {peak[0]:8.0f}  {peak[1]}")
    print(f"(total CPU = sum over strata of cells x mean sampled CPU, + method jobs x the "
          f"per-process fixed cost, + cells x {a.cell_overhead} s workflow overhead; '>=' : a "
          "sampled run hit --timeout even scaled down, or a stratum could not be run, so the "
          "total is a lower bound)")


if __name__ == "__main__":
    main()
