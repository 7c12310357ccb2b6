"""MIDR + MILR inner CV: in-process MIDR reuse vs joblib cache vs no reuse, CPU s and ratios.

The cost of refitting the same selector once per classifier setting, three ways.

    OMP_NUM_THREADS=1 python benchmarks/methods/bench_inner_cv_cache.py [--data ../shared/data]
        [--dataset musk1]

midr.yaml tunes MIDR's C1 x C2 jointly with MILR's C: without reuse every MILR C refits the
same MIDR.  For a 2 x 2 x 3 grid, 5 inner folds, prints MIDR solves, CPU seconds and the chosen
parameters (i) without reuse, (ii) with the joblib ``Pipeline(memory=)`` cache that run_fold
used for MIDR before issue #26 (hashing, pickling and loading data and fitted selector), and
(iii) with MIDR's in-process reuse (:class:`milbench.selectors.midr.FitCache`, what run_fold
uses now), all in this run, and the CPU ratios.  Other selectors (pca, relieff, ...) keep the
joblib cache (``caches_selector_fits``).
"""
from __future__ import annotations

from _paths import DATA
import argparse
import tempfile
import time

from milbench.data.sources import load_dataset
from milbench.experiment.fold import build_estimator, caches_selector_fits
from milbench.selectors.midr import FIT_CACHE, MIDR
from milbench.utils.cache import reuse

SELECTOR = {"name": "midr", "dims": 0.3, "max_iter": 30,
            "tune": {"C1": [1e-3, 1e-1], "C2": [1.0, 100.0]}}
CLASSIFIER = {"name": "milr", "tune": {"C": [0.1, 1.0, 10.0]}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--dataset", default="musk1")
    a = ap.parse_args()
    bags = load_dataset(a.dataset, a.data)
    solves = [0]
    solve = MIDR._solve

    def counting_solve(self, *args):
        solves[0] += 1
        return solve(self, *args)

    MIDR._solve = counting_solve
    assert not caches_selector_fits(SELECTOR, CLASSIFIER)
    cpu = {}
    for way in ("none", "joblib", "in-process"):
        solves[0] = 0
        FIT_CACHE.clear()
        with tempfile.TemporaryDirectory() as cache, reuse(way == "in-process"):
            est = build_estimator("minmax", SELECTOR, CLASSIFIER, inner_folds=5,
                                  memory=cache if way == "joblib" else None)
            t = time.process_time()
            est.fit(bags, bags.labels)
            cpu[way] = time.process_time() - t
        print(f"{way:>10}: {solves[0]:3d} MIDR solves, {cpu[way]:6.2f} s CPU, best "
              f"{est.best_params_} (inner score {est.best_score_:.4f})")
    print(f"CPU ratio joblib / none: {cpu['joblib'] / cpu['none']:.2f}; in-process / none: "
          f"{cpu['in-process'] / cpu['none']:.2f}; in-process / joblib: "
          f"{cpu['in-process'] / cpu['joblib']:.2f}")


if __name__ == "__main__":
    main()
