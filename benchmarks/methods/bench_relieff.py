"""ReliefF-MI vs one bag-distance matrix, and HyDR-MI on all cores vs one: s and ratios, same run.

ReliefF-MI and HyDR-MI are hydr-mi.txt §3.

1. ReliefF-MI on musk2 (102 bags, 6,598 instances × 166; m = 180 and k = 80 are capped to the
   data, so every bag is sampled) for each bag metric and both instance metrics, as a ratio to
   ONE pairwise bag-distance matrix: ``milbench.classifiers.distances.bag_distances`` (Euclidean, on the
   same range-normalised bags) and the same blocked computation with the L1 instance distance
   (scipy cityblock + segment minima) — the paper's Manhattan metric.
2. One HyDR-MI run (one outer 10-fold training part, MI-Simple + decision tree as the cheap
   target classifier, ReliefF-MI adapted at 70 %) with n_jobs = 1 vs all cores (``--jobs``):
   speed-up, next to the speed-up joblib gives pure CPU work with as many workers.  REDUCED GA
   for the benchmark: population 100 (paper), but ``--generations`` (default 5, paper 50) and
   one seed (paper 5).

Usage: python -m benchmarks.methods.bench_relieff [--data ../shared/data] [--generations 5]
       [--skip-relieff] [--skip-hydr] [--hydr-dataset musk1] [--jobs N]
"""
from __future__ import annotations

from benchmarks import DATA
import argparse
import os
import time
from pathlib import Path

import numpy as np

from benchmarks._timing import best_of


def l1_bag_distance_matrix(Xn, offsets, block_rows=256):
    """One minimal-Hausdorff bag-distance matrix with L1 instance distances (blocked cdist +
    segment minima): the same amount of pairwise work as bag_distances, other norm."""
    from scipy.spatial.distance import cdist
    rowmin = np.empty((len(Xn), len(offsets) - 1))
    for s in range(0, len(Xn), block_rows):
        D = cdist(Xn[s:s + block_rows], Xn, "cityblock")
        rowmin[s:s + block_rows] = np.minimum.reduceat(D, offsets[:-1], axis=1)
    return np.minimum.reduceat(rowmin, offsets[:-1], axis=0)


def bench_relieff(data, repeats):
    from milbench.classifiers.distances import bag_distances
    from milbench.data.sources import load_dataset
    from milbench.selectors.relieff import METRICS, ReliefFMI, feature_ranges, normalise

    bags = load_dataset("musk2", data)
    X = bags.instances.astype(float)
    lo, rng = feature_ranges(X)
    Xn = normalise(X, lo, rng)
    nb = np.split(Xn, bags.offsets[1:-1])
    t_l2 = best_of(lambda: bag_distances(nb, metric="max"), repeats)
    t_l1 = best_of(lambda: l1_bag_distance_matrix(Xn, bags.offsets), repeats)
    print(f"musk2: {len(bags)} bags, {len(X)} instances x {X.shape[1]} features")
    for name, t in (("bag_distances (euclidean, max)", t_l2), ("L1 bag-distance matrix (min)", t_l1)):
        print(f"baseline  {name:<32} wall {t[0]:6.2f} s  cpu {t[1]:6.2f} s")
    print(f"{'instance metric':<16}{'bag metric':<10}{'wall s':>8}{'cpu s':>8}"
          f"{'cpu / L2 matrix':>17}{'cpu / same-norm matrix':>24}")
    rows = []
    for im, base in (("euclidean", t_l2), ("manhattan", t_l1)):
        for metric in METRICS:
            sel = ReliefFMI(metric=metric, instance_metric=im, percent=0.7)
            t = best_of(lambda: sel.fit(bags, bags.labels), repeats)
            rows.append((im, metric, t))
            print(f"{im:<16}{metric:<10}{t[0]:8.2f}{t[1]:8.2f}{t[1] / t_l2[1]:17.2f}"
                  f"{t[1] / base[1]:24.2f}")
    return rows


def _burn(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def parallel_control(workers, n=3_000_000):
    """Speed-up joblib can give on this machine right now: pure-Python CPU work, ``workers``
    processes, 4 tasks per worker."""
    from joblib import Parallel, delayed
    t = time.perf_counter()
    tasks = 4 * workers
    for _ in range(tasks):
        _burn(n)
    serial = time.perf_counter() - t
    with Parallel(n_jobs=workers) as par:
        par(delayed(_burn)(10) for _ in range(workers))      # start the workers first
        t = time.perf_counter()
        par(delayed(_burn)(n) for _ in range(tasks))
        both = time.perf_counter() - t
    return serial / both


def bench_hydr(data, dataset, generations, population, jobs):
    from sklearn.model_selection import StratifiedKFold

    from milbench.classifiers.simple import MISimple
    from milbench.data.sources import load_dataset
    from milbench.selectors.hydr import HyDRMI

    bags = load_dataset(dataset, data)
    tr, _ = next(StratifiedKFold(10, shuffle=True, random_state=0).split(
        np.zeros(len(bags)), bags.labels))
    train = bags.subset(tr)
    percent = 0.7 if dataset.startswith("musk") else 0.5
    kw = dict(classifier=MISimple(estimator="tree"), metric="adapted", percent=percent,
              population_size=population, n_generations=generations, n_seeds=1, inner_cv=3,
              random_state=0)
    print(f"\nHyDR-MI on {dataset} (one 10-fold training part: {len(train)} bags), "
          f"MI-Simple(tree), percent={percent}, population {population}, "
          f"{generations} generations (REDUCED; paper 50), 1 seed (paper 5)")
    times, fitted = {}, {}
    for n_jobs in (1, jobs):
        times[n_jobs], _, fitted[n_jobs] = best_of(
            lambda: HyDRMI(n_jobs=n_jobs, **kw).fit(train, train.labels))
        d = fitted[n_jobs].diagnostics_
        print(f"n_jobs={n_jobs}: {times[n_jobs]:7.2f} s  evaluations {d['hydr_evaluations']}"
              f"  cache hits {d['hydr_cache_hits']}  best fitness {d['hydr_final_fitness']:.3f}"
              f"  features {d['hydr_n_filter']} -> {d['hydr_n_selected']}")
    same = np.array_equal(fitted[1].support_, fitted[jobs].support_)
    print(f"speed-up n_jobs={jobs} vs 1: {times[1] / times[jobs]:.2f}x   identical result: {same}")
    print(f"control: joblib speed-up of pure CPU work with {jobs} workers on this machine now: "
          f"{parallel_control(jobs):.2f}x (load {os.getloadavg()[0]:.1f})")
    print("best fitness per generation:", np.round(fitted[1].fitness_history_[0], 3).tolist())
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--generations", type=int, default=5)
    ap.add_argument("--population", type=int, default=100)
    ap.add_argument("--hydr-dataset", default="musk1")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="workers (default: all cores)")
    ap.add_argument("--skip-relieff", action="store_true")
    ap.add_argument("--skip-hydr", action="store_true")
    a = ap.parse_args()
    if not Path(a.data).is_dir():
        raise SystemExit(f"data folder {a.data} absent")
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')} cpus={os.cpu_count()} "
          f"load={os.getloadavg()[0]:.1f}")
    if not a.skip_relieff:
        bench_relieff(a.data, a.repeats)
    if not a.skip_hydr:
        bench_hydr(a.data, a.hydr_dataset, a.generations, a.population, a.jobs)


if __name__ == "__main__":
    main()
