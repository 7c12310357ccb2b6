"""bag_distances vs a per-bag-pair scipy cdist loop, musk2 Hausdorff tables, s and ratio, same run.

Musk2 (102 bags, 6,598 instances, 166 features), minimal / maximal / average Hausdorff.
Both sides compute the full (n_bags × n_bags) matrix in the same process; the script checks
that they agree and prints the speed-up ratio (target ≥ 20×).  "two sets" is the same table
through the general query × training path (the bags passed twice, as separate arrays): the
ratio is what the symmetric self table saves (minimal Hausdorff: half the products).

    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_distances [--data ../shared/data] [--repeats 3]
"""
from __future__ import annotations

from benchmarks import DATA
import argparse

import numpy as np
from scipy.spatial.distance import cdist

from milbench.classifiers.distances import bag_distances, stacked_bag_distances
from milbench.data.bags import stack
from milbench.data.sources import load_dataset

from benchmarks._timing import best_of


def naive(bags, metric):
    """Reference: one cdist per bag pair, reduced in Python."""
    n = len(bags)
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            d = cdist(bags[i], bags[j])
            if metric == "min":
                D[i, j] = d.min()
            elif metric == "max":
                D[i, j] = max(d.min(1).max(), d.min(0).max())
            else:
                D[i, j] = (d.min(1).sum() + d.min(0).sum()) / (d.shape[0] + d.shape[1])
    return D


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--dataset", default="musk2")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    bags = load_dataset(args.dataset, args.data)
    lst = [b.astype(float) for b in bags.as_list()]
    print(f"{args.dataset}: {len(lst)} bags, {bags.instances.shape[0]} instances, "
          f"{bags.n_features} features")
    X, off = stack(lst)
    print(f"{'metric':<6} {'bag_distances s':>16} {'naive loop s':>13} {'ratio':>7} "
          f"{'max |diff|':>11} {'two sets s':>11} {'ratio':>7}")
    for metric in ("min", "max", "avg"):
        t_fast, _, fast = best_of(lambda: bag_distances(lst, metric=metric), args.repeats)
        t_two, _, two = best_of(lambda: stacked_bag_distances(X, off, X.copy(), off, metric),
                                args.repeats)
        t_naive, _, ref = best_of(lambda: naive(lst, metric), 1)
        diff = max(np.abs(fast - ref).max(), np.abs(two - ref).max())
        print(f"{metric:<6} {t_fast:>16.3f} {t_naive:>13.3f} {t_naive / t_fast:>6.1f}x "
              f"{diff:>11.2e} {t_two:>11.3f} {t_two / t_fast:>6.2f}x")


if __name__ == "__main__":
    main()
