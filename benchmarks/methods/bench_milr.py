"""MILR fit on musk2 vs scikit-learn LogisticRegression (lbfgs), s and ratio (target ≤ 3×).

The logistic regression sees the same stacked instances (instances inherit bag labels), same C
and tolerance.

    python -m benchmarks.methods.bench_milr [--repeats 5]
"""
from benchmarks import DATA
import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from milbench.classifiers.milr import COMBINE, MILR  # noqa: E402
from milbench.data.sources import load_dataset  # noqa: E402
from milbench.preprocessing import BagScaler  # noqa: E402

from benchmarks._timing import best_of  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--C", type=float, default=1.0)
    a = ap.parse_args()
    bags = BagScaler("minmax").fit_transform(load_dataset("musk2", DATA))
    X, y_inst = bags.instances.astype(float), np.repeat(bags.labels, bags.sizes)
    t_lr, _, lr = best_of(lambda: LogisticRegression(C=a.C, tol=1e-6, max_iter=1000).fit(X, y_inst),
                          a.repeats)
    print(f"musk2: {len(bags)} bags, {len(X)} instances, {X.shape[1]} features; C={a.C}")
    print(f"scikit-learn LogisticRegression(lbfgs): {t_lr * 1e3:8.1f} ms  ({lr.n_iter_[0]} iterations)")
    for combine in COMBINE:
        t, _, m = best_of(lambda: MILR(C=a.C, combine=combine, tol=1e-6).fit(bags, bags.labels),
                          a.repeats)
        print(f"MILR combine={combine:9s}:           {t * 1e3:8.1f} ms  ({m.n_iter_} iterations)"
              f"  ratio {t / t_lr:5.2f}x  per-iteration ratio "
              f"{(t / max(m.n_iter_, 1)) / (t_lr / max(lr.n_iter_[0], 1)):5.2f}x")


if __name__ == "__main__":
    main()
