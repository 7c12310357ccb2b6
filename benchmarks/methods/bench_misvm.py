"""mi-SVM / MI-SVM on sparse instances: the kernel precomputed up to 8000 training instances
(the default for a sparse pool, ``precompute_max=None``) against libsvm's own kernel above 3000
(``precompute_max=3000``, the cap of a dense pool), on config/paper/milsd.yaml's
``milsd-webkb`` (linear kernel, TF-IDF passages ~1 % non-zero), in the same run.

Both keep the pool as CSR; above 3000 training instances (webkb-student and webkb-faculty at
ratios .4 and .5, webkb-course at .5) the capped run leaves the kernel to libsvm, which
recomputes dot products every solver iteration.  Default: single fits on the outer training set
of one cell at the given C values (CPU per fit, ratio, the largest difference of the test
pages' decision values, accuracy).
``--cell``: the whole tuned cell through the workflow's estimator
(:func:`milbench.experiment.fold.build_estimator`; 6 C values × 5 inner folds + the refit), with
the chosen C, the inner-CV scores and the test scores compared.

    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_misvm \\
        --bags results/bags/webkb-student@<tag> [--method MI-svm|mi-svm] [--ratio 0.5] \\
        [--repeat 0] [--C 0.5 32] [--cell]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks.methods._milsd_cell import BAGS, RATIOS, cell_split, fit_cell, load, method_spec
from milbench.registry import make

CAPPED = 3000                   # precompute_max of the capped run: the dense pools' cap


def timed(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def single_fits(spec, train, test, Cs):
    params = {k: v for k, v in spec.items() if k not in ("name", "tune")}
    print(f"  {'C':>8} {'capped s':>8} {'default s':>9} {'ratio':>8} {'max |dF|':>9}  "
          "accuracy capped / default")
    for C in Cs:
        runs = {}
        for label, cap in (("capped", CAPPED), ("default", None)):
            m = make("classifier", {"name": spec["name"], **params, "C": C,
                                    "precompute_max": cap})
            _, cpu = timed(lambda: m.fit(train, train.labels))
            runs[label] = cpu, m.decision_function(test), m.predict(test)
        (co, fo, po), (cn, fn, pn) = runs["capped"], runs["default"]
        print(f"  {C:8g} {co:8.2f} {cn:8.2f} {co / cn:7.1f}x {np.abs(fo - fn).max():9.1e}  "
              f"{(po == test.labels).mean():.4f} / {(pn == test.labels).mean():.4f}", flush=True)


def run_cell(bags, folds, spec, repeat, fold, cap):
    est, test, cpu = fit_cell(bags, folds, {**spec, "precompute_max": cap}, repeat, fold)
    return {"cpu": cpu, "best": est.best_params_, "inner": est.cv_results_["mean_test_score"],
            "scores": est.decision_function(test), "acc": (est.predict(test) == test.labels).mean()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bags", default=str(BAGS / "webkb-student@src-6455812d"))
    ap.add_argument("--method", default="MI-svm", choices=["mi-svm", "MI-svm"])
    ap.add_argument("--ratio", type=float, default=0.5, choices=RATIOS)
    ap.add_argument("--repeat", type=int, default=0)
    ap.add_argument("--C", type=float, nargs="+", default=[0.5, 32.0])
    ap.add_argument("--cell", action="store_true",
                    help="the whole tuned cell, capped against the default")
    a = ap.parse_args()
    spec = method_spec(a.method)
    bags, folds = load(a.bags, a.repeat + 1)
    train, test = cell_split(bags, folds, a.repeat, RATIOS.index(a.ratio))
    n = sum(len(b) for b in train)
    print(f"{a.bags}: {a.method} ({spec['kernel']}), ratio {a.ratio}, repeat {a.repeat}: "
          f"{len(train)} training bags, {n} instances")
    warnings.simplefilter("ignore")
    if not a.cell:
        single_fits(spec, train, test, a.C)
        return
    old = run_cell(bags, folds, spec, a.repeat, RATIOS.index(a.ratio), CAPPED)
    new = run_cell(bags, folds, spec, a.repeat, RATIOS.index(a.ratio), None)
    same = np.array_equal(old["inner"], new["inner"])
    print(f"  capped (precompute_max {CAPPED}) {old['cpu']:8.1f} s CPU   accuracy "
          f"{old['acc']:.4f}   chosen {old['best']}\n  default (precompute_max 8000) "
          f"{new['cpu']:8.1f} s CPU   accuracy {new['acc']:.4f}   chosen {new['best']}\n"
          f"  capped/default {old['cpu'] / new['cpu']:.1f}x; inner-CV scores "
          f"{'equal' if same else 'DIFFER'}; test scores max |d| "
          f"{np.abs(old['scores'] - new['scores']).max():.1e}")


if __name__ == "__main__":
    main()
