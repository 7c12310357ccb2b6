"""MILR on original features: our 10 × 5-fold CV AUROC vs the ORI row of midr.txt Table 1.

musk1, musk2, elephant, fox, tiger, with the regularisation chosen by inner CV on the training
part.

    python -m benchmarks.parity.bench_milr_ori [--repeats 10] [--combine softmax] [--scale minmax] [--jobs 2]

Prints our AUROC next to the paper's (midr Table 1). Uses the same library calls as the pipeline's
run_fold jobs (fold files, scaler, GridSearchCV) so the figures are the pipeline's figures.
"""
from benchmarks import DATA
import argparse
import os
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from milbench.data.folds import fold_keys, make_folds  # noqa: E402
from milbench.data.sources import load_dataset  # noqa: E402
from milbench.experiment.fold import run_fold  # noqa: E402

PAPER = {"musk1": .916, "musk2": .927, "elephant": .921, "fox": .694, "tiger": .946}


def one(args):
    name, protocol, method, scale, r, f, inner = args
    bags = load_dataset(name, DATA)
    folds = make_folds(bags.bag_ids, bags.labels, protocol)
    row = run_fold(bags, folds, method, experiment="milr-ori", dataset=name, scale=scale,
                   repeat=r, fold=f, seed=protocol["seed"], inner_metric=inner)
    return name, float(row.auroc.iloc[0]), float(row.accuracy.iloc[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--combine", nargs="+", default=["softmax"],
                    help="several values: chosen by the inner CV together with C")
    ap.add_argument("--alpha", type=float, default=3.5)
    ap.add_argument("--scale", default="minmax")
    ap.add_argument("--C", type=float, nargs="+", default=[0.01, 0.1, 1.0, 10.0, 100.0])
    ap.add_argument("--inner", default="auroc")
    ap.add_argument("--datasets", nargs="+", default=list(PAPER))
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    a = ap.parse_args()
    protocol = {"kind": "kfold", "folds": 5, "repeats": a.repeats, "seed": 0}
    tune = {k: v for k, v in (("C", a.C), ("combine", a.combine)) if len(v) > 1}
    fixed = {k: v[0] for k, v in (("C", a.C), ("combine", a.combine)) if len(v) == 1}
    method = {"selector": {"name": "none"},
              "classifier": {"name": "milr", "alpha": a.alpha, **fixed,
                             **({"tune": tune} if tune else {})}}
    tasks = [(n, protocol, method, a.scale, r, f, a.inner)
             for n in a.datasets for r, f in fold_keys(protocol)]
    with ProcessPoolExecutor(a.jobs) as ex:
        res = list(ex.map(one, tasks, chunksize=4))
    print(f"MILR combine={a.combine} alpha={a.alpha} scale={a.scale} C={a.C} inner={a.inner}, "
          f"{a.repeats}x5-fold")
    print(f"{'dataset':10s} {'AUROC':>14s} {'paper':>6s} {'gap':>7s} {'accuracy':>9s}")
    for n in a.datasets:
        au = np.array([x[1] for x in res if x[0] == n])
        ac = np.array([x[2] for x in res if x[0] == n])
        print(f"{n:10s} {au.mean():.3f} ± {au.std():.3f} {PAPER[n]:6.3f} {au.mean() - PAPER[n]:+7.3f}"
              f" {ac.mean():9.3f}")


if __name__ == "__main__":
    main()
