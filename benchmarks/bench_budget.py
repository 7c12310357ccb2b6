"""Budget of every config/paper/*.yaml: a thin caller of ``python -m milbench.experiment.plan`` (one
method for every config, HyDR-MI included; docs/budget.md says how it counts and measures).

    python benchmarks/bench_budget.py [--configs midr miordm] [--seconds 180] [--cores 16]
        [--bags results/bags] [--data ../shared/data] [--out DIR]

Runs the plan of each config in turn (each within ``--seconds`` of sampled fits) and prints its
table; ``--out DIR`` also writes ``<config>.json`` and ``<config>.csv`` there.  The earlier
whole-cell sampler (a 30 s wall-clock timeout x fits, scaled-down reruns) is retired: its
milsd "≥ 30 CPU-days" was a timeout multiplied up.
"""
import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow"))

# Config names config/paper/*.yaml once used before their registry line had landed
# (benchmarks/bench_dag.py still calls patch_registry before its dry runs).
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
        "view-ensemble": "milbench.classifiers.view_ensemble:ViewEnsemble",
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


def main():
    from milbench.experiment.plan import main as plan

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--configs", nargs="*", help="config stems (default: all config/paper/*.yaml)")
    ap.add_argument("--seconds", type=float, default=180.0)
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--bags", default=str(REPO / "results" / "bags"))
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--out", help="folder for <config>.json / .csv")
    a = ap.parse_args()
    paths = sorted((REPO / "config" / "paper").glob("*.yaml"))
    if a.configs:
        paths = [p for p in paths if p.stem in a.configs]
    totals = []
    for path in paths:
        print(f"\n######## {path.relative_to(REPO)}", flush=True)
        extra = ["--json", str(Path(a.out) / f"{path.stem}.json"),
                 "--csv", str(Path(a.out) / f"{path.stem}.csv")] if a.out else []
        r = plan([str(path), "--seconds", str(a.seconds), "--cores", str(a.cores),
                  "--bags", a.bags, "--data", a.data, *extra])
        totals.append((path.stem, r))
    print(f"\n{'config':<10}{'cells':>10}{'method jobs':>13}{'est. CPU-h':>14}"
          f"{'wall h @ ' + str(a.cores):>13}")
    for stem, r in totals:
        ge = ">=" if r["lower"] else ""
        cells = sum(e["cells"] for e in r["experiments"])
        jobs = sum(e["method_jobs"] for e in r["experiments"])
        cpu, wall = f"{ge}{r['cpu'] / 3600:,.1f}", f"{ge}{r['wall'] / 3600:,.2f}"
        print(f"{stem:<10}{cells:>10,}{jobs:>13,}{cpu:>14}{wall:>13}")


if __name__ == "__main__":
    main()
