"""The planner's estimate of one tuned cell against the cell itself, in one process.

    OMP_NUM_THREADS=1 python -m benchmarks.workflow.bench_plan_cell [--config config/paper/midr.yaml]
        [--experiment midr] [--dataset fox] [--family midr] [--method 1] [--cell 0 0]
        [--draws 6] [--points 0 9] [--soft-cap 6]

Runs the planner's tuned draw of one (method, cell) as the planner does (``--draws`` times with
different random groups, each in its forked child: ``milbench.experiment.plan.run_forked``; the
first like a family's first draw, the others like its later draws) for each ``--points`` (0:
the planner's default), then the cell itself as the workflow does
(``milbench.experiment.runner.run_cell``: the whole inner CV and the refit, CPU seconds, in
this process, whose in-process caches no draw has filled).  Prints each draw's estimate and its
ratio to the cell.  ``--family`` picks the config's first tuned family whose selector entry has that
name, ``--method`` the method of that family (its list-expanded settings, in config order).
The draw's time budget is ``--soft-cap`` CPU s (the planner gives a draw its share of
``--seconds``).  What it found: docs/budget.md.
"""
from benchmarks import DATA, REPO
import argparse
import statistics
import time

import numpy as np


def main():
    from milbench.data.folds import make_folds
    from milbench.experiment import plan as P
    from milbench.experiment.config import load_config, method_settings
    from milbench.experiment.grid import label
    from milbench.experiment.plan.measure import warm_up
    from milbench.experiment.runner import run_cell

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "config" / "paper" / "midr.yaml"))
    ap.add_argument("--experiment", default="midr")
    ap.add_argument("--dataset", default="fox")
    ap.add_argument("--family", default="midr", help="selector name of the tuned family")
    ap.add_argument("--method", type=int, default=1, help="index of the method in its family")
    ap.add_argument("--cell", type=int, nargs=2, default=(0, 0), metavar=("REPEAT", "FOLD"))
    ap.add_argument("--draws", type=int, default=6)
    ap.add_argument("--points", type=int, nargs="+", default=[0, 9])
    ap.add_argument("--soft-cap", type=float, default=6.0)
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--bags", default=str(REPO / "results" / "bags"))
    a = ap.parse_args()

    cfg = load_config(a.config)
    exp = cfg["experiments"][a.experiment]
    bags, where = P.load_bags(a.dataset, cfg, [a.data], a.bags)
    if bags is None:
        raise SystemExit(f"{a.dataset}: {where}")
    folds = make_folds(bags.bag_ids, bags.labels, exp["protocol"])
    methods = next(ms for _, _, ms in P.families(exp)
                   if ms[0]["selector"]["name"] == a.family and P.tune_dims(ms[0]))
    m = methods[a.method]
    settings = method_settings(exp, m)
    ctx = {"bags": bags, "folds": folds, "exp": exp, "experiment": a.experiment,
           "dataset": a.dataset, "settings": settings}
    draws = {}
    for points in a.points:
        draws[points] = []
        for i in range(a.draws):
            task = {"kind": "tuned", "method": m, "cell": tuple(a.cell), "draw": i,
                    "stage": False, "soft_cap": a.soft_cap,
                    **P.tuned_groups(m, points, np.random.default_rng([0, i]), first=(i == 0))}
            r = P.run_forked(ctx, task, limit=3600.0)
            if "error" in r:
                raise SystemExit(f"draw {i}: {r['error']}")
            draws[points].append((task, r))

    first_task = draws[a.points[0]][0][0]
    warm_up(ctx, first_task)     # the first call's imports, untimed, as in a draw's child
    t = time.process_time()
    run_cell(bags, folds, m, settings, experiment=a.experiment, dataset=a.dataset,
             repeat=a.cell[0], fold=a.cell[1])
    cell = time.process_time() - t
    name = f"{label(m['selector'])} + {label(m['classifier'])}"
    print(f"{a.experiment}/{a.dataset} {name}, cell r{a.cell[0]}_f{a.cell[1]}: {cell:.1f} s CPU "
          "(run_cell)")
    for points, runs in draws.items():
        ratios = [r["cell_cpu"] / cell for _, r in runs]
        for i, ((task, r), ratio) in enumerate(zip(runs, ratios)):
            print(f"  points {points or 'default'}, draw {i}: {len(task['groups'])} groups "
                  f"({r['points_done']} points timed) -> cell {r['cell_cpu']:.1f} s = "
                  f"{ratio:.2f} x")
        print(f"  points {points or 'default'}: estimate / cell {min(ratios):.2f}-"
              f"{max(ratios):.2f} (mean {statistics.mean(ratios):.2f}) over {a.draws} draws")


if __name__ == "__main__":
    main()
