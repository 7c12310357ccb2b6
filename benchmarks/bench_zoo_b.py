"""Median fit time of the diverse-density / ball / wrapper / boosting zoo on the five benchmarks.

Protocol as bench_zoo_a.py (miordm's): stratified 80/20 split per repeat, features z-scored on the
training bags, median fit time over ``--repeats``.  EM-DD is shown next to miordm.txt Table 5
(EMDD, MATLAB, CPU seconds; ratio = Table 5 / ours, target >= 10x on musk2) and next to a
same-run baseline: the identical algorithm with every start optimised by its own L-BFGS run
(one start at a time, as Weka's MIEMDD does) instead of the stacked, vectorised M-step
(ratio = baseline / ours).  Test accuracy on the held-out 20 % is printed as a sanity check.

    OMP_NUM_THREADS=1 python benchmarks/bench_zoo_b.py [--data ../shared/data] [--repeats 3]
        [--datasets musk1 musk2] [--classifiers emdd emdd-per-start midd]
"""
from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit

from milbench.classifiers import diverse_density as dd
from milbench.classifiers.ensembles import MIAdaBoost, MIBagging
from milbench.classifiers.miboost import MIBoost
from milbench.classifiers.optimal_ball import MIOptimalBall
from milbench.classifiers.wrapper import MIWrapper
from milbench.data.sources import load_dataset
from milbench.preprocessing import BagScaler

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DATASETS = ("musk1", "musk2", "elephant", "fox", "tiger")
# miordm.txt Table 5, EMDD training time (CPU s, MATLAB)
TABLE5_EMDD = {"musk1": 52.45, "musk2": 64.43, "tiger": 220.49, "elephant": 165.78,
               "fox": 169.38}
TREE = {"name": "mi-wrapper", "estimator": "tree", "estimator_params": {"min_samples_leaf": 2}}

MODELS = {
    "emdd-per-start": lambda: dd.EMDD(random_state=0),      # run under _one_start_at_a_time()
    "emdd": lambda: dd.EMDD(random_state=0),
    "midd": lambda: dd.MIDD(random_state=0),
    "mdd": lambda: dd.MDD(random_state=0),
    "mi-optimal-ball": lambda: MIOptimalBall(),
    "mi-wrapper": lambda: MIWrapper("tree", {"min_samples_leaf": 2}, random_state=0),
    "mi-boost": lambda: MIBoost("stump", n_estimators=10, random_state=0),
    "mi-bagging": lambda: MIBagging(TREE, n_estimators=10, random_state=0),
    "mi-adaboost": lambda: MIAdaBoost(TREE, n_estimators=10, random_state=0),
}


@contextlib.contextmanager
def _one_start_at_a_time():
    old = dd._BLOCK
    dd._BLOCK = 1
    try:
        yield
    finally:
        dd._BLOCK = old


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--datasets", nargs="*", default=list(DATASETS))
    ap.add_argument("--classifiers", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    print(f"{'dataset':<9} {'classifier':<15} {'fit s (median)':>15} {'test acc':>9} "
          f"{'Table 5 s':>10} {'T5/ours':>8} {'base/ours':>10}")
    for ds in args.datasets:
        bags = load_dataset(ds, args.data)
        y = bags.labels.astype(int)
        splits = StratifiedShuffleSplit(args.repeats, test_size=0.2, random_state=0)
        data = []
        for tr, te in splits.split(np.zeros(len(y)), y):
            sc = BagScaler("zscore").fit(bags.subset(tr))
            data.append((sc.transform(bags.subset(tr)), y[tr], sc.transform(bags.subset(te)),
                         y[te]))
        medians = {}
        for name in args.classifiers:
            times, accs = [], []
            ctx = _one_start_at_a_time() if name == "emdd-per-start" else contextlib.nullcontext()
            with ctx:
                for Xtr, ytr, Xte, yte in data:
                    est = MODELS[name]()
                    t0 = time.perf_counter()
                    est.fit(Xtr, ytr)
                    times.append(time.perf_counter() - t0)
                    accs.append(np.mean(est.predict(Xte) == yte))
            med = float(np.median(times))
            medians[name] = med
            t5 = TABLE5_EMDD[ds] if name == "emdd" else None
            base = (medians.get("emdd-per-start", np.nan) / med) if name == "emdd" else None
            print(f"{ds:<9} {name:<15} {med:>15.3f} {np.mean(accs):>9.3f} "
                  f"{'' if t5 is None else f'{t5:.2f}':>10} "
                  f"{'' if t5 is None else f'{t5 / med:.1f}x':>8} "
                  f"{'' if base is None or np.isnan(base) else f'{base:.1f}x':>10}", flush=True)


if __name__ == "__main__":
    main()
