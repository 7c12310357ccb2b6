"""MIDR tuned cells: the earlier MIDR code (OLD) vs today's (NEW), CPU per cell, same run.

Cells of config/paper/midr.yaml (9 x 9 C1 x C2 joined with MILR's 3 C, 5 inner folds, inner
AUROC), OLD vs NEW in one run: CPU per cell, distinct MIDR fits, iterations per
fit, chosen (C1, C2, C) and outer AUROC.

OLD is the code before issue #26, kept here (``OldMIDR``: scipy ``minimize`` per v-refit, every
grid point fitted, the joblib ``Pipeline(memory=)`` cache for the 3 MILR C; MILR solved through
``minimize`` for every grid point).  NEW variants:
  exact   — milbench's MIDR (stop="total"): fits reused in-process (each distinct model once,
            the C1 >= C2 points of one C2 share a fit), scipy's L-BFGS-B without its wrapper,
            no joblib cache (same rows, same choice as OLD up to rounding: see tests);
  milr-before — exact, but MILR as before (``minimize``'s wrapper, every grid point solved
            even where MIDR's shared fit gives it the same projected bags);
  sk-auc  — exact, but the inner CV scores with scikit-learn's "roc_auc" scorer (as OLD does)
            instead of milbench's rank_auroc (the same AUROC at 1/20 of the CPU);
  excess  — also stop="excess" (relative decrease of F minus its constant part);
  NAME:k=v — any further variant, e.g. "cap30:stop=excess,max_iter=30".

    OMP_NUM_THREADS=1 python benchmarks/methods/bench_midr_cell.py --dataset musk1 --outer 5 \\
        [--dims 0.3] [--variants old exact excess] [--keep-midr-fits]

Cells are outer folds 0..outer-1 of repeat 0 of the config's 10 x 5-fold protocol (seed 0).
"""
from __future__ import annotations

from _paths import DATA
import argparse
import contextlib
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from sklearn.metrics import roc_auc_score

from milbench.base import n_from_fraction
from milbench.classifiers import milr
from milbench.data.folds import make_folds, split
from milbench.data.sources import load_dataset
from milbench.experiment.fold import build_estimator, caches_selector_fits
from milbench.selectors import midr as M
from milbench.selectors.midr import (
    _ARMIJO_C,
    _MAX_BACKTRACK,
    MIDR,
    _bag_sq_loss,
    midr_objective,
    orthonormality_loss,
    qr_retraction,
    soft_threshold,
    sparsity_loss,
    tangent_projection,
)
from milbench.utils.cache import reuse

GRID = [1.0e-4, 1.0e-3, 1.0e-2, 1.0e-1, 1.0, 1.0e+1, 1.0e+2, 1.0e+3, 1.0e+4]
LOG = defaultdict(list)        # variant -> [(C1, C2, iterations)] of every computed MIDR fit


class OldMIDR(MIDR):
    """MIDR's fit as it was before issue #26 (commit 49e8e6c), verbatim but for bookkeeping."""

    def _refit_v(self, Z, offsets, y, v, b):
        d = Z.shape[1]
        alpha, lam = self.alpha, self.v_l2
        sizes = np.diff(offsets)

        def fun(theta):
            loss, g = _bag_sq_loss(Z @ theta[:d] + theta[d], offsets, y, alpha, sizes=sizes)
            return (loss + 0.5 * lam * theta[:d] @ theta[:d],
                    np.concatenate([Z.T @ g + lam * theta[:d], [g.sum()]]))

        theta0 = np.concatenate([v, [b]])
        f0 = fun(theta0)[0]
        res = minimize(fun, theta0, jac=True, method="L-BFGS-B",
                       options={"maxiter": self.v_max_iter, "gtol": 1e-8})
        if res.fun <= f0:
            return res.x[:d], float(res.x[d])
        return v, b

    def _fit(self, X, offsets, y01):
        if self.project not in ("A", "H"):
            raise ValueError(f"project must be 'A' or 'H', got {self.project!r}")
        if not (self.C2 > 0 and self.C1 >= 0):
            raise ValueError("need C2 > 0 and C1 >= 0")
        t0 = time.perf_counter()
        rng = np.random.default_rng(self.random_state)
        sizes = np.diff(offsets)
        y = y01.astype(float)
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        D = X.shape[1]
        d = n_from_fraction(self.dims, D)
        C1, C2, alpha, lam = float(self.C1), float(self.C2), float(self.alpha), float(self.v_l2)
        thr = C1 / C2

        A = self._init_A(Xc, d, rng)
        H = soft_threshold(A, thr)
        v, b = np.zeros(d), 0.0
        gamma = 1.0
        ortho_hist = [float(np.linalg.norm(A.T @ A - np.eye(d)))]
        F_prev = midr_objective(A, v, b, H, Xc, offsets, y, C1, C2, alpha, lam)[0]
        hist = [F_prev]
        n_iter, converged = 0, False
        for it in range(int(self.max_iter)):
            n_iter = it + 1
            # 1. update v, b (and hence P_i)
            v, b = self._refit_v(Xc @ A, offsets, y, v, b)
            # 2. Riemannian gradient of ψ(A) (the C1‖H‖₁ term does not depend on A)
            psi, G, _, _ = midr_objective(A, v, b, H, Xc, offsets, y, 0.0, C2, alpha, 0.0)
            xi = tangent_projection(A, G)
            xi2 = float((xi * xi).sum())
            # 3.-4. Armijo backtracking on γ, QR retraction
            loss = psi - 0.5 * C2 * float(((A - H) ** 2).sum())
            if xi2 > 0:
                gamma = min(2.0 * gamma, 1e8)
                for _ in range(_MAX_BACKTRACK):
                    A_new = qr_retraction(A - gamma * xi)
                    loss_new = _bag_sq_loss(Xc @ (A_new @ v) + b, offsets, y, alpha,
                                            need_grad=False, sizes=sizes)[0]
                    if loss_new + 0.5 * C2 * float(((A_new - H) ** 2).sum()) \
                            <= psi - _ARMIJO_C * gamma * xi2:
                        A, loss = A_new, loss_new
                        break
                    gamma *= 0.5
            ortho_hist.append(float(np.linalg.norm(A.T @ A - np.eye(d))))
            # 5. H by soft-thresholding (Eq. 12)
            H = soft_threshold(A, thr)
            F = loss + 0.5 * C2 * float(((A - H) ** 2).sum()) + C1 * float(np.abs(H).sum()) \
                + 0.5 * lam * float(v @ v)
            hist.append(F)
            if F_prev - F <= self.tol * max(abs(F_prev), 1e-12):
                converged = True
                break
            F_prev = F

        self.A_, self.H_ = A, H
        self.components_ = A if self.project == "A" else H
        self.coef_, self.intercept_ = v, b
        self.n_components_ = d
        self.n_iter_ = n_iter
        self.objective_history_ = np.asarray(hist)
        self.orthonormality_history_ = np.asarray(ortho_hist)
        # keys carry a midr_ prefix where a classifier's diagnostics_ use the same name
        # (the pipeline merges selector and classifier diagnostics into one dict)
        self.diagnostics_ = {
            "midr_objective": float(hist[-1]),
            "midr_iterations": int(n_iter),
            "midr_converged": int(converged),
            "orthonormality_loss": orthonormality_loss(H),
            "sparsity_loss": sparsity_loss(H),
            "A_orthonormality_error": float(ortho_hist[-1]),
            "midr_gamma": float(gamma),
            "midr_seconds": float(time.perf_counter() - t0),
        }


def _old_fit_logged(self, bags, y01):
    _OLD_FIT(self, bags, y01)
    LOG["old"].append((self.C1, self.C2, self.n_iter_))


_OLD_FIT = OldMIDR._fit
OldMIDR._fit = _old_fit_logged
_NEW_SOLVE = MIDR._solve
VARIANT = ["exact"]


def _new_solve_logged(self, X, offsets, y, d, C1, C2):
    state = _NEW_SOLVE(self, X, offsets, y, d, C1, C2)
    LOG[VARIANT[0]].append((C1, C2, state["n_iter"]))
    return state


MIDR._solve = _new_solve_logged


def parse_variant(v):
    if v in ("old", "exact", "sk-auc", "milr-before"):
        return v, {}
    if v == "excess":
        return v, {"stop": "excess"}
    if v == "excessF":
        return v, {"stop": "excess", "line_search": "F"}
    name, _, kv = v.partition(":")
    params = {}
    for item in filter(None, kv.split(",")):
        k, val = item.split("=")
        try:
            params[k] = int(val) if val.isdigit() else float(val)
        except ValueError:
            params[k] = val
    return name, params


@contextlib.contextmanager
def milr_before():
    """MILR as before its reuse and wrapper-free driver: ``minimize`` for every fit."""
    def solve(self, X, offsets, y, theta0):
        return minimize(milr.milr_loss_grad, theta0, jac=True, method="L-BFGS-B",
                        args=(X, offsets, y.astype(float), self.C, self.combine, self.alpha,
                              self.fit_intercept),
                        options={"maxiter": self.max_iter, "gtol": self.tol})
    kept = milr.MILR._solve
    milr.MILR._solve = solve
    try:
        with milr.FIT_CACHE.disabled():
            yield
    finally:
        milr.MILR._solve = kept


def run_cell(bags, folds, fold, dims, name, params, keep_midr_fits=False):
    sel = {"name": "midr", "dims": dims, "alpha": 3.5, "project": "A", **params,
           "tune": {"C1": GRID, "C2": GRID}}
    clf = {"name": "milr", "combine": "softmax", "alpha": 3.5, "tune": {"C": [0.1, 1.0, 10.0]}}
    tr, te, _ = split(folds, 0, fold, bags.bag_ids)
    train, test = bags.subset(tr), bags.subset(te)
    VARIANT[0] = name
    n0 = len(LOG[name])
    with tempfile.TemporaryDirectory() as cache:
        old = name == "old"
        memory = cache if old or caches_selector_fits(sel, clf) else None
        est = build_estimator("minmax", sel, clf, seed=0, inner_folds=5, inner_metric="auroc",
                              memory=memory)
        if old or name == "sk-auc":
            est.set_params(scoring="roc_auc")
        if old:
            p = est.estimator.steps[1][1].get_params()
            est.estimator.steps[1] = ("select", OldMIDR(**p))
        if not keep_midr_fits:
            M.FIT_CACHE.clear()
        milr.FIT_CACHE.clear()
        with milr_before() if name in ("old", "milr-before") else contextlib.nullcontext():
            t = time.process_time()
            est.fit(train, train.labels)
            cpu = time.process_time() - t
            milr_solves = milr.FIT_CACHE.misses if milr.FIT_CACHE.enabled else \
                len(est.cv_results_["params"]) * 5 + 1      # every inner fit, and the refit
    auc = roc_auc_score(test.labels, est.decision_function(test))
    its = np.array([it for _, _, it in LOG[name][n0:]])
    bp = est.best_params_
    return {"variant": name, "fold": fold, "cpu": cpu, "fits": len(its),
            "iters_mean": float(its.mean()) if len(its) else 0.0,
            "iters_capped": int((its >= params.get("max_iter", 100)).sum()),
            "iters_total": int(its.sum()), "milr_solves": milr_solves,
            "C1": bp["select__C1"], "C2": bp["select__C2"],
            "C": bp["classify__C"], "inner": float(est.best_score_), "auroc": float(auc),
            "mean_test_score": est.cv_results_["mean_test_score"].tolist()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="musk1")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--dims", type=float, default=0.3)
    ap.add_argument("--outer", type=int, default=2, help="outer folds (cells) of repeat 0")
    ap.add_argument("--first-fold", type=int, default=0)
    ap.add_argument("--variants", nargs="+", default=["old", "exact", "excess"])
    ap.add_argument("--json", help="write every row here")
    ap.add_argument("--keep-midr-fits", action="store_true",
                    help="keep MIDR's fits between variants: after the first variant of a cell "
                         "every MIDR fit is a hit, and the CPU left is MILR's, the scoring's and "
                         "the search's")
    a = ap.parse_args()
    bags = load_dataset(a.dataset, a.data)
    folds = make_folds(bags.bag_ids, bags.labels, {"kind": "kfold", "folds": 5, "repeats": 10,
                                                   "seed": 0})
    print(f"{a.dataset}: {len(bags)} bags, dims {a.dims}; 81 x 3 grid, 5 inner folds")
    rows = []
    for fold in range(a.first_fold, a.first_fold + a.outer):
        for v in a.variants:
            name, params = parse_variant(v)
            r = run_cell(bags, folds, fold, a.dims, name, params, a.keep_midr_fits)
            rows.append(r)
            print(f"fold {fold} {name:>8}: {r['cpu']:7.2f} s CPU, {r['fits']:3d} MIDR fits, "
                  f"{r['iters_mean']:5.1f} it/fit ({r['iters_capped']} at the cap), "
                  f"{r['milr_solves']} MILR solves, chosen "
                  f"C1={r['C1']:g} C2={r['C2']:g} C={r['C']:g}, inner {r['inner']:.4f}, "
                  f"outer AUROC {r['auroc']:.4f}", flush=True)
    ref = "old" if any(r["variant"] == "old" for r in rows) else "exact"
    print(f"\nper variant (mean over cells): CPU s per cell, ratio to {ref}, AUROC, choice")
    cpu_ref = [r["cpu"] for r in rows if r["variant"] == ref]
    for v in dict.fromkeys(r["variant"] for r in rows):
        rr = [r for r in rows if r["variant"] == v]
        cpu = np.mean([r["cpu"] for r in rr])
        same = sum((r["C1"], r["C2"], r["C"]) == (o["C1"], o["C2"], o["C"])
                   for r in rr for o in rows if o["variant"] == ref and o["fold"] == r["fold"])
        ratio = f"  {ref}/this {np.mean(cpu_ref) / cpu:5.2f}x" if cpu_ref else ""
        print(f"{v:>8}: {cpu:7.2f} s{ratio}  AUROC {np.mean([r['auroc'] for r in rr]):.4f}"
              f"  fits {np.mean([r['fits'] for r in rr]):.0f}"
              f"  it/fit {np.mean([r['iters_mean'] for r in rr]):.1f}"
              f"  same choice as {ref}: {same}/{len(rr)}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    with reuse():       # fits and kernels reused as in a run's cells (milbench.utils.cache)
        main()
