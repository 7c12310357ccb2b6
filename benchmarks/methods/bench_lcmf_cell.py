"""LC-MF tuned cells: a factorisation per grid point (BEFORE) vs the factorisation cache
(AFTER), CPU per cell in the same run; or (``--job``) a method job's cells in one process.

A cell of config/paper/milsd.yaml's ``milsd-webkb`` (its LC-MF entry, protocol, inner folds and
metric, read from the config; transductive: every fit also factorises the pages it is not
trained on) on a WebKB store, built by the workflow's own estimator
(:func:`milbench.experiment.fold.build_estimator`).  BEFORE runs with
``milbench.classifiers.lcmf.FACTOR_CACHE`` disabled (every grid point factorises its inner
fold again: |grid| × inner folds + 1 factorisations a cell); AFTER with it. The pages are
factorised in bag-id order, so every fit of a transductive cell factorises the same pages the
same way: one factorisation a cell. Prints CPU seconds per cell, the factorisations, the chosen svm_C, the test
accuracy, and whether every inner-CV score and every test score is equal.

``--job`` runs the cells one after the other with the cache kept, as a method job's process
does (cells with the same repeat share a seed, so they share a factorisation), and prints each
cell's CPU, factorisations, chosen svm_C and accuracy: run it on two checkouts to compare code.

    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_lcmf_cell \\
        --bags results/bags/webkb-faculty@<tag> [--ratio 0.2 ...] [--cells 1] [--job]

Cells are repeats 0..cells-1 of the config's ratio protocol (seed 0) at each ``--ratio``.
"""
from __future__ import annotations

import argparse
import contextlib

import numpy as np

from benchmarks.methods._milsd_cell import BAGS, EXP, RATIOS, fit_cell, load, method_spec
from milbench.classifiers.lcmf import FACTOR_CACHE

LCMF_SPEC = method_spec("lcmf")


def run_cell(bags, folds, repeat, fold, share, keep=False):
    if not keep:
        FACTOR_CACHE.clear()
    misses = FACTOR_CACHE.misses
    with contextlib.nullcontext() if share else FACTOR_CACHE.disabled():
        est, test, cpu = fit_cell(bags, folds, LCMF_SPEC, repeat, fold)
    grid = len(LCMF_SPEC["tune"]["svm_C"])
    factorisations = FACTOR_CACHE.misses - misses if share else grid * EXP["inner_folds"] + 1
    scores = est.decision_function(test)
    acc = float(np.mean((scores > 0) == (test.labels > 0)))
    return {"cpu": cpu, "factorisations": factorisations, "C": est.best_params_["classify__svm_C"],
            "inner": est.cv_results_["mean_test_score"], "scores": scores, "accuracy": acc}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bags", default=str(BAGS / "webkb-faculty@src-6455812d"))
    ap.add_argument("--ratio", type=float, nargs="+", default=[0.2], choices=RATIOS)
    ap.add_argument("--cells", type=int, default=1)
    ap.add_argument("--job", action="store_true",
                    help="the cells in one process with the cache kept, as a method job")
    a = ap.parse_args()
    bags, folds = load(a.bags, a.cells)
    print(f"{a.bags}: {len(bags)} pages; LC-MF, svm_C x {len(LCMF_SPEC['tune']['svm_C'])}, "
          f"{EXP['inner_folds']} inner folds, transductive, ratios {a.ratio}", flush=True)
    cells = [(repeat, RATIOS.index(r)) for repeat in range(a.cells) for r in a.ratio]
    if a.job:
        FACTOR_CACHE.clear()
        runs = []
        for repeat, fold in cells:
            r = run_cell(bags, folds, repeat, fold, True, keep=True)
            runs.append(r)
            print(f"cell r{repeat}_f{fold} (ratio {RATIOS[fold]}): {r['cpu']:7.1f} s CPU, "
                  f"{r['factorisations']:2d} factorisations, chosen svm_C={r['C']:g}, "
                  f"test accuracy {r['accuracy']:.4f}", flush=True)
        print(f"job of {len(cells)} cells: {sum(r['cpu'] for r in runs):.1f} s CPU, "
              f"{sum(r['factorisations'] for r in runs)} factorisations, mean accuracy "
              f"{np.mean([r['accuracy'] for r in runs]):.4f}")
        return
    ratios = []
    for repeat, fold in cells:
        before, after = (run_cell(bags, folds, repeat, fold, share) for share in (False, True))
        same = (np.array_equal(before["inner"], after["inner"])
                and np.array_equal(before["scores"], after["scores"]))
        ratios.append(before["cpu"] / after["cpu"])
        for name, r in (("before", before), ("after", after)):
            print(f"cell r{repeat}_f{fold} {name:>6}: {r['cpu']:7.1f} s CPU, "
                  f"{r['factorisations']:2d} factorisations, chosen svm_C={r['C']:g}, "
                  f"test accuracy {r['accuracy']:.4f}", flush=True)
        print(f"cell r{repeat}_f{fold}: before/after {ratios[-1]:.2f}x; inner-CV and test scores "
              f"{'equal' if same else 'DIFFER'}", flush=True)
    print(f"mean before/after over {len(cells)} cell(s): {np.mean(ratios):.2f}x")


if __name__ == "__main__":
    main()
