"""Budget of every config/paper/*.yaml: cells, jobs, estimated CPU-hours and wall hours each.

A thin caller of ``python -m milbench.experiment.plan`` (one method for every config, HyDR-MI
included; docs/budget.md says how it counts and measures).

    python -m benchmarks.workflow.bench_budget [--configs midr miordm] [--seconds 180] [--cores 16]
        [--bags results/bags] [--data ../shared/data] [--out DIR]

Runs the plan of each config in turn (each within ``--seconds`` of sampled fits) and prints its
table; ``--out DIR`` also writes ``<config>.json`` and ``<config>.csv`` there.
"""
from benchmarks import DATA, REPO
import argparse
from pathlib import Path


def main():
    from milbench.experiment.plan import main as plan

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--configs", nargs="*", help="config stems (default: all config/paper/*.yaml)")
    ap.add_argument("--seconds", type=float, default=180.0)
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--bags", default=str(REPO / "results" / "bags"))
    ap.add_argument("--data", default=str(DATA))
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
