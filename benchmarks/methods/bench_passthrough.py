"""``scale: none`` and selector ``none`` as a pass-through (NEW) against the general transform
path with the ``_passes_through`` hook off (OLD: (x − 0) / 1 and every column, copied to float64
and back, as every other transformer does), CPU of tuned cells of config/paper/milsd.yaml's
``milsd-webkb`` in the same run.

A transductive fit transforms every page it is not trained on through the pipeline's scale and
select steps, so each of a cell's 221 B-MILSD fits (31 for LC-MF) would pay for a transform
that changes no bit.  Both variants run the workflow's own estimator
(:func:`milbench.experiment.fold.build_estimator`, the config's method entry, its protocol,
inner folds and metric) on the same cell; OLD switches the hook off for the run.
Prints CPU seconds per variant, their ratio, and whether every inner-CV score, the chosen
point and every test score are equal.  ``--C`` / ``--mu`` restrict B-MILSD's grid (a sample of
its 44 points; the whole grid by default).

    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_passthrough \\
        --bags results/bags/webkb-faculty@<tag> [--method milsd|lcmf|mi-svm] [--ratio 0.2] \\
        [--repeat 0] [--mu 0.1]
"""
from __future__ import annotations

import argparse
import contextlib
import warnings

import numpy as np

from benchmarks.methods._milsd_cell import BAGS, EXP, RATIOS, fit_cell, load, method_spec
from milbench.base import FeatureSubsetTransformer, MILTransformer
from milbench.classifiers.lcmf import FACTOR_CACHE
from milbench.classifiers.milsd import SETUP_CACHE
from milbench.preprocessing import BagScaler


@contextlib.contextmanager
def arithmetic_path():
    """The hook off: every Bags through (x − shift) / scale and X[:, support], the path of
    MILTransformer."""
    saved = BagScaler._passes_through, FeatureSubsetTransformer._passes_through
    BagScaler._passes_through = FeatureSubsetTransformer._passes_through = \
        MILTransformer._passes_through
    try:
        yield
    finally:
        BagScaler._passes_through, FeatureSubsetTransformer._passes_through = saved


def run_cell(bags, folds, spec, repeat, fold):
    FACTOR_CACHE.clear()
    SETUP_CACHE.clear()
    est, test, cpu = fit_cell(bags, folds, spec, repeat, fold)
    return {"cpu": cpu, "best": est.best_params_, "inner": est.cv_results_["mean_test_score"],
            "scores": est.decision_function(test), "fits": len(est.cv_results_["params"])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bags", default=str(BAGS / "webkb-faculty@src-6455812d"))
    ap.add_argument("--method", default="milsd", choices=["milsd", "lcmf", "mi-svm", "MI-svm"])
    ap.add_argument("--ratio", type=float, default=0.2, choices=RATIOS)
    ap.add_argument("--repeat", type=int, default=0)
    ap.add_argument("--C", type=float, nargs="+", help="B-MILSD's C values (default: the grid)")
    ap.add_argument("--mu", type=float, nargs="+", help="B-MILSD's mu values (default: the grid)")
    a = ap.parse_args()
    spec = method_spec(a.method)
    tune = dict(spec["tune"])
    for key in ("C", "mu"):
        if getattr(a, key) and key in tune:
            tune[key] = getattr(a, key)
    spec = {**spec, "tune": tune}
    bags, folds = load(a.bags, a.repeat + 1)
    fold = RATIOS.index(a.ratio)
    warnings.simplefilter("ignore")
    with arithmetic_path():
        old = run_cell(bags, folds, spec, a.repeat, fold)
    new = run_cell(bags, folds, spec, a.repeat, fold)
    same = (old["best"] == new["best"] and np.array_equal(old["inner"], new["inner"])
            and np.array_equal(old["scores"], new["scores"]))
    print(f"{a.bags}: {a.method}, grid {tune}, ratio {a.ratio}, repeat {a.repeat}: "
          f"{old['fits']} points x {EXP['inner_folds']} inner folds + the refit")
    print(f"  OLD (arithmetic path) {old['cpu']:8.1f} s CPU\n  NEW (pass-through)    "
          f"{new['cpu']:8.1f} s CPU   OLD/NEW {old['cpu'] / new['cpu']:.2f}x\n  chosen {new['best']}; "
          f"inner-CV scores, chosen point and test scores {'equal' if same else 'DIFFER'}")


if __name__ == "__main__":
    main()
