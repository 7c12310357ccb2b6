"""Inner-CV cost with and without caching selector fits (run_fold's Pipeline memory).

    OMP_NUM_THREADS=1 python benchmarks/bench_inner_cv_cache.py [--data ../shared/data]
        [--dataset musk1]

midr.yaml tunes MIDR's C1 x C2 jointly with MILR's C: without a cache every MILR C refits the
same MIDR.  Prints MIDR fits, CPU seconds and the chosen parameters for a 2 x 2 x 3 grid,
5 inner folds, uncached vs cached (both in this run), and the CPU ratio.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from milbench.pipeline import build_estimator
from milbench.selectors.midr import MIDR
from milbench.sources import load_dataset

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SELECTOR = {"name": "midr", "dims": 0.3, "max_iter": 30,
            "tune": {"C1": [1e-3, 1e-1], "C2": [1.0, 100.0]}}
CLASSIFIER = {"name": "milr", "tune": {"C": [0.1, 1.0, 10.0]}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--dataset", default="musk1")
    a = ap.parse_args()
    bags = load_dataset(a.dataset, a.data)
    fits = [0]
    fit = MIDR.fit

    def counting_fit(self, X, y=None):
        fits[0] += 1
        return fit(self, X, y)

    MIDR.fit = counting_fit
    cpu = {}
    for cached in (False, True):
        fits[0] = 0
        with tempfile.TemporaryDirectory() as cache:
            est = build_estimator("minmax", SELECTOR, CLASSIFIER, inner_folds=5,
                                  memory=cache if cached else None)
            t = time.process_time()
            est.fit(bags, bags.labels)
            cpu[cached] = time.process_time() - t
        print(f"{'cached' if cached else 'uncached':>9}: {fits[0]:3d} MIDR fits, "
              f"{cpu[cached]:6.2f} s CPU, best {est.best_params_} "
              f"(inner AUROC/accuracy {est.best_score_:.4f})")
    print(f"CPU ratio cached / uncached: {cpu[True] / cpu[False]:.2f}")


if __name__ == "__main__":
    main()
