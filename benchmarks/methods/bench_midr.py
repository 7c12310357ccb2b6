"""MIDR (Sun et al. 2010, midr.txt Algorithm 1): its cost per iteration, per tuned cell, to
convergence and in an inner CV, each against a peer or MIDR's own options in the same run.

    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_midr iteration [--dataset musk2]
    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_midr cell --dataset musk1 --outer 2 \\
        [--variants no-reuse exact excess] [--keep-midr-fits]
    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_midr convergence [--dataset musk1]
    OMP_NUM_THREADS=1 python -m benchmarks.methods.bench_midr inner-cv [--dataset musk1]

``iteration``: one MIDR fit (30 % of the features) on min-max-scaled bags: seconds per iteration
against one pass of the MILR objective + gradient over the same instances
(:func:`milbench.classifiers.milr.milr_loss_grad`, softmax α = 3.5), and MIDR + MILR's fit
against the paper's Table 2 (375.952 s on musk2).  Also one v-refit (10 L-BFGS-B iterations on
(v, b), Algorithm 1 step 1) through scipy's ``minimize`` against
:func:`milbench.utils.lbfgsb.lbfgsb` (the same routine without the wrapper; the two must give
the same (v, b) bit for bit), and the fit-reuse key over the training data:
:func:`milbench.utils.cache.fingerprint` (blake2b) against
:func:`milbench.utils.hashing.array_digest` (sha1, MIDR's and MILR's key).

``cell``: tuned cells of config/paper/midr.yaml (9 x 9 C1 x C2 joined with MILR's 3 C, 5 inner
folds, inner AUROC) under several variants, one after the other in the same run: CPU per cell,
distinct MIDR fits, iterations per fit, MILR solves, chosen (C1, C2, C) and outer AUROC.  The
cells are outer folds of repeat 0 of the config's 10 x 5-fold protocol (seed 0).  Variants:

  exact        the defaults, as a run's cell: fits reused in-process (``milbench.utils.cache``;
               each distinct model once, the C1 >= C2 points of one C2 share a fit);
  no-reuse     reuse off: every grid point fits MIDR and MILR afresh;
  joblib       reuse off, MIDR's fits kept by the joblib ``Pipeline(memory=)`` cache instead (the
               mechanism of the other selectors);
  milr-no-reuse  exact, but MILR's fit reuse off (``milr.FIT_CACHE.disabled()``);
  sk-auc       exact, but the inner CV scores with scikit-learn's "roc_auc" scorer instead of
               :func:`milbench.experiment.scoring.rank_auroc`;
  excess       ``stop="excess"``;  excessF: also ``line_search="F"``;
  NAME:k=v     any other MIDR parameters, e.g. "cap30:stop=excess,max_iter=30".

``convergence``: points of the 9 x 9 grid fitted (on the whole data set) as the config runs them
(``max_iter = 100``), to convergence (``--long`` iterations, ``stop="excess"``,
``line_search="F"``), and with a proximal variant of the A-step: the gradient step on the loss
alone, then the proximal map of the penalty C2·Σ huber_{C1/C2}(A_ij) that Eq. 10 leaves after
the H-step (closed form per entry), then the QR retraction, accepted when F decreases (Armijo on
the step).  The proximal variant is a prototype kept here, not an option of
``milbench.selectors.midr``: it departs from the paper's gradient step.  Prints iterations,
F − const at the end (``stop="excess"``'s quantity; lower is better), the fraction of
|A_ij| ≤ C1/C2 (H's zeros) and CPU seconds.

``inner-cv``: MIDR's C1 x C2 tuned jointly with MILR's C (a 2 x 2 x 3 grid, 5 inner folds):
without reuse every MILR C refits the same MIDR.  MIDR solves, CPU and the choice (i) without
reuse, (ii) with the joblib ``Pipeline(memory=)`` cache (hashing, pickling and loading data and
fitted selector), (iii) with MIDR's in-process reuse (:class:`milbench.selectors.midr.FitCache`,
what a run uses).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from sklearn.metrics import roc_auc_score

from milbench.classifiers import milr
from milbench.classifiers.milr import MILR, milr_loss_grad
from milbench.data.bags import stack
from milbench.data.folds import make_folds, split
from milbench.data.sources import load_dataset
from milbench.experiment.fold import build_estimator, caches_selector_fits
from milbench.selectors import midr as M
from milbench.selectors.midr import (
    MIDR,
    _bag_sq_loss,
    fits_not_reused,
    qr_retraction,
    soft_threshold,
    tangent_projection,
)
from milbench.utils.cache import fingerprint, reuse
from milbench.utils.hashing import array_digest
from milbench.utils.lbfgsb import lbfgsb

from benchmarks import DATA
from benchmarks._timing import best_of

PAPER_MUSK2_SECONDS = 375.952          # midr.txt Table 2, MIDR (+ MILR) on musk2
GRID = [1.0e-4, 1.0e-3, 1.0e-2, 1.0e-1, 1.0, 1.0e+1, 1.0e+2, 1.0e+3, 1.0e+4]


def minmax_bags(name, data):
    bags = load_dataset(name, data)
    lo, hi = bags.instances.min(0), bags.instances.max(0)
    return bags.with_instances((bags.instances - lo) / np.where(hi > lo, hi - lo, 1.0))


@contextlib.contextmanager
def counting_solves():
    """Count MIDR's solves (every distinct fit) inside the block: yields a list that collects
    (C1, C2, iterations) of each."""
    log, solve = [], MIDR._solve

    def counted(self, X, offsets, y, d, C1, C2):
        state = solve(self, X, offsets, y, d, C1, C2)
        log.append((C1, C2, state["n_iter"]))
        return state

    MIDR._solve = counted
    try:
        yield log
    finally:
        MIDR._solve = solve


# ------------------------------------------------------------------------------ iteration
def iteration(a):
    bags = minmax_bags(a.dataset, a.data)
    y = bags.labels
    X, offsets = stack(bags.as_list())
    X = X.astype(float)
    print(f"{a.dataset}: {len(bags)} bags, {X.shape[0]} instances, D = {X.shape[1]}")

    # the peer: one MILR objective + gradient pass over the same data
    theta = np.random.default_rng(0).normal(scale=0.01, size=X.shape[1] + 1)
    t_milr = best_of(lambda: milr_loss_grad(theta, X, offsets, y.astype(float), 1.0,
                                            "softmax", 3.5), 7, number=10).wall

    params = dict(dims=a.dims, C1=a.C1, C2=a.C2, max_iter=a.max_iter)
    t_init = best_of(lambda: MIDR(**{**params, "max_iter": 0}).fit(bags, y), 3).wall
    t0 = time.perf_counter()
    m = MIDR(**params).fit(bags, y)
    t_fit = time.perf_counter() - t0
    it = m.n_iter_
    per_iter = (t_fit - t_init) / max(it, 1)
    t0 = time.perf_counter()
    MILR(C=1.0).fit(m.transform(bags), y)
    t_clf = time.perf_counter() - t0

    dg = m.diagnostics_
    print(f"MIDR d = {m.n_components_}, C1 = {a.C1:g}, C2 = {a.C2:g}: {it} iterations "
          f"(converged={bool(dg['converged'])}), objective {dg['midr_objective']:.4f}")
    print(f"  init (PCA + setup): {t_init * 1e3:.1f} ms; fit total {t_fit:.3f} s; "
          f"{per_iter * 1e3:.2f} ms per iteration")
    print(f"  one MILR objective+gradient pass (D = {X.shape[1]}): {t_milr * 1e3:.3f} ms")
    print(f"  ratio one MIDR iteration / one MILR f+g pass: {per_iter / t_milr:.1f}")
    print(f"  ‖AᵀA − I‖_F = {dg['A_orthonormality_error']:.2e}, ‖HᵀH − I‖_F = "
          f"{dg['orthonormality_loss']:.3g}, Σ|H| = {dg['sparsity_loss']:.3g}")

    # one v-refit on the fitted projection, warm-started from v = 0 (as the first iteration)
    Z = (X - m.mean_) @ m.A_
    d, sizes, yf = Z.shape[1], np.diff(offsets), y.astype(float)

    def fun(theta):
        loss, g = _bag_sq_loss(Z @ theta[:d] + theta[d], offsets, yf, 3.5, sizes=sizes)
        return (loss + 0.05 * theta[:d] @ theta[:d],
                np.concatenate([Z.T @ g + 0.1 * theta[:d], [g.sum()]]))

    theta0 = np.zeros(d + 1)

    def scipy_minimize():
        fun(theta0)             # the f(x0) a caller of minimize evaluates to accept or reject
        return minimize(fun, theta0, jac=True, method="L-BFGS-B",
                        options={"maxiter": 10, "gtol": 1e-8}).x

    same = np.array_equal(scipy_minimize(), lbfgsb(fun, theta0, 10, 1e-8)[0])
    t_min = best_of(scipy_minimize, 1, number=50).cpu
    t_lb = best_of(lambda: lbfgsb(fun, theta0, 10, 1e-8), 1, number=50).cpu
    print(f"one v-refit (d + 1 = {d + 1}, 10 iterations), CPU: scipy minimize "
          f"{t_min * 1e3:.2f} ms, lbfgsb {t_lb * 1e3:.2f} ms, ratio {t_min / t_lb:.2f}x, "
          f"same (v, b): {same}")
    t_b2 = best_of(lambda: fingerprint(X, offsets, yf), 7, number=5).cpu
    t_sha = best_of(lambda: array_digest(X, offsets, yf), 7, number=5).cpu
    print(f"fit key over the {X.nbytes / 2**20:.1f} MiB of instances, CPU: blake2b "
          f"(fingerprint) {t_b2 * 1e3:.2f} ms, sha1 (array_digest) {t_sha * 1e3:.2f} ms, "
          f"ratio {t_b2 / t_sha:.2f}x")
    total = t_fit + t_clf
    print(f"MIDR fit + MILR fit: {total:.2f} s  vs paper Table 2 (musk2) {PAPER_MUSK2_SECONDS} s "
          f"-> {PAPER_MUSK2_SECONDS / total:.0f}x less")


# ------------------------------------------------------------------------------ cell
OPTIONS = {"exact": {}, "no-reuse": {}, "joblib": {}, "milr-no-reuse": {}, "sk-auc": {},
           "excess": {"stop": "excess"}, "excessF": {"stop": "excess", "line_search": "F"}}


def parse_variant(v):
    if v in OPTIONS:
        return v, OPTIONS[v]
    name, sep, kv = v.partition(":")
    if not sep:
        raise SystemExit(f"unknown variant {v!r}: one of {sorted(OPTIONS)} or NAME:k=v,...")
    params = {}
    for item in filter(None, kv.split(",")):
        k, val = item.split("=")
        try:
            params[k] = int(val) if val.isdigit() else float(val)
        except ValueError:
            params[k] = val
    return name, params


def run_cell(bags, folds, fold, dims, name, params, keep_midr_fits=False):
    sel = {"name": "midr", "dims": dims, "alpha": 3.5, "project": "A", **params,
           "tune": {"C1": GRID, "C2": GRID}}
    clf = {"name": "milr", "combine": "softmax", "alpha": 3.5, "tune": {"C": [0.1, 1.0, 10.0]}}
    tr, te, _ = split(folds, 0, fold, bags.bag_ids)
    train, test = bags.subset(tr), bags.subset(te)
    with tempfile.TemporaryDirectory() as cache, contextlib.ExitStack() as stack_:
        memory = cache if name == "joblib" or caches_selector_fits(sel, clf) else None
        est = build_estimator("minmax", sel, clf, seed=0, inner_folds=5, inner_metric="auroc",
                              memory=memory)
        if name == "sk-auc":
            est.set_params(scoring="roc_auc")
        if name in ("no-reuse", "joblib"):
            stack_.enter_context(reuse(False))
        if name == "milr-no-reuse":
            stack_.enter_context(milr.FIT_CACHE.disabled())
        if not keep_midr_fits:
            M.FIT_CACHE.clear()
        milr.FIT_CACHE.clear()
        log = stack_.enter_context(counting_solves())
        t = time.process_time()
        est.fit(train, train.labels)
        cpu = time.process_time() - t
        milr_solves = milr.FIT_CACHE.misses if milr.FIT_CACHE.active else \
            len(est.cv_results_["params"]) * 5 + 1      # every inner fit, and the refit
    auc = roc_auc_score(test.labels, est.decision_function(test))
    its = np.array([it for _, _, it in log])
    bp = est.best_params_
    return {"variant": name, "fold": fold, "cpu": cpu, "fits": len(its),
            "iters_mean": float(its.mean()) if len(its) else 0.0,
            "iters_capped": int((its >= params.get("max_iter", 100)).sum()),
            "iters_total": int(its.sum()), "milr_solves": milr_solves,
            "C1": bp["select__C1"], "C2": bp["select__C2"],
            "C": bp["classify__C"], "inner": float(est.best_score_), "auroc": float(auc),
            "mean_test_score": est.cv_results_["mean_test_score"].tolist()}


def cell(a):
    bags = load_dataset(a.dataset, a.data)
    folds = make_folds(bags.bag_ids, bags.labels, {"kind": "kfold", "folds": 5, "repeats": 10,
                                                   "seed": 0})
    print(f"{a.dataset}: {len(bags)} bags, dims {a.dims}; 81 x 3 grid, 5 inner folds")
    variants = [parse_variant(v) for v in a.variants]
    rows = []
    with reuse():       # fits and kernels reused as in a run's cells (milbench.utils.cache)
        for fold in range(a.first_fold, a.first_fold + a.outer):
            for name, params in variants:
                r = run_cell(bags, folds, fold, a.dims, name, params, a.keep_midr_fits)
                rows.append(r)
                print(f"fold {fold} {name:>8}: {r['cpu']:7.2f} s CPU, {r['fits']:3d} MIDR fits, "
                      f"{r['iters_mean']:5.1f} it/fit ({r['iters_capped']} at the cap), "
                      f"{r['milr_solves']} MILR solves, chosen "
                      f"C1={r['C1']:g} C2={r['C2']:g} C={r['C']:g}, inner {r['inner']:.4f}, "
                      f"outer AUROC {r['auroc']:.4f}", flush=True)
    ref = rows[0]["variant"]
    print(f"\nper variant (mean over cells): CPU s per cell, ratio to {ref}, AUROC, choice")
    cpu_ref = np.mean([r["cpu"] for r in rows if r["variant"] == ref])
    for v in dict.fromkeys(r["variant"] for r in rows):
        rr = [r for r in rows if r["variant"] == v]
        cpu = np.mean([r["cpu"] for r in rr])
        same = sum((r["C1"], r["C2"], r["C"]) == (o["C1"], o["C2"], o["C"])
                   for r in rr for o in rows if o["variant"] == ref and o["fold"] == r["fold"])
        print(f"{v:>8}: {cpu:7.2f} s  {ref}/this {cpu_ref / cpu:5.2f}x"
              f"  AUROC {np.mean([r['auroc'] for r in rr]):.4f}"
              f"  fits {np.mean([r['fits'] for r in rr]):.0f}"
              f"  it/fit {np.mean([r['iters_mean'] for r in rr]):.1f}"
              f"  same choice as {ref}: {same}/{len(rr)}")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


# ------------------------------------------------------------------------------ convergence
POINTS = [(1e-4, 1e-3), (1e-3, 1.0), (1e-2, 1e-1), (1e-2, 1.0), (1e-1, 1.0), (1e-2, 1e2),
          (1.0, 1e2), (1e-4, 1e4), (1.0, 1e4)]


def huber(A, thr, C2):
    """C2·Σ huber_thr(A_ij) = min over H of C2/2‖A − H‖² + C1‖H‖₁ (Eq. 10 after Eq. 12)."""
    a = np.abs(A)
    return C2 * float(np.where(a <= thr, 0.5 * a * a, thr * a - 0.5 * thr * thr).sum())


def prox_huber(Z, thr, C2, gamma):
    """argmin_A γ·C2·Σ huber_thr(A_ij) + ½‖A − Z‖², entry by entry."""
    k = gamma * C2
    return np.where(np.abs(Z) <= thr * (1 + k), Z / (1 + k), Z - np.sign(Z) * k * thr)


class _StepMIDR(MIDR):
    """MIDR with another A-step, a prototype of the ``convergence`` mode kept here, not an
    option of ``milbench.selectors.midr``; the v-refit, the initial A and the
    ``stop="excess"`` test are MIDR's.  A subclass defines ``_step(A, loss, G, loss_at, thr,
    C2, n_iter)``: (A, its loss) after one A-step from A, G the loss's Euclidean gradient."""

    def _solve(self, X, offsets, y, d, C1, C2):
        rng = np.random.default_rng(self.random_state)
        sizes = np.diff(offsets)
        mean = X.mean(axis=0)
        Xc = X - mean
        alpha, lam, thr = float(self.alpha), float(self.v_l2), C1 / C2
        const = C2 * d * (0.5 if thr >= 1 else thr - 0.5 * thr * thr)

        def loss_at(A, v, b):
            return _bag_sq_loss(Xc @ (A @ v) + b, offsets, y, alpha, need_grad=False,
                                sizes=sizes)[0]

        A = self._init_A(Xc, d, rng)
        v, b, self._gamma, self._last = np.zeros(d), 0.0, 1.0, None
        E_prev = loss_at(A, v, b) + huber(A, thr, C2) - const
        hist, converged, n_iter = [E_prev], False, 0
        for n_iter in range(1, int(self.max_iter) + 1):
            v, b = self._refit_v(Xc @ A, offsets, y, v, b)
            loss, g = _bag_sq_loss(Xc @ (A @ v) + b, offsets, y, alpha, sizes=sizes)
            A, loss = self._step(A, loss, np.outer(Xc.T @ g, v), lambda A: loss_at(A, v, b),
                                 thr, C2, n_iter)
            E = loss + huber(A, thr, C2) - const + 0.5 * lam * float(v @ v)
            hist.append(E)
            if E_prev - E <= self.tol * max(abs(E_prev), 1e-12):
                converged = True
                break
            E_prev = E
        hist = np.asarray(hist)
        return {"A": A, "v": v, "b": b, "mean": mean, "hist": hist + const, "ehist": hist,
                "ortho": np.zeros(1), "n_iter": n_iter, "converged": converged,
                "gamma": self._gamma, "amax": float(np.abs(A).max())}


class ProxMIDR(_StepMIDR):
    """A-step: the gradient step on the loss alone, then the proximal map of the penalty
    C2·Σ huber_{C1/C2}(A_ij), then the QR retraction, accepted when F decreases (Armijo on the
    step), starting from twice the last accepted step."""

    def _step(self, A, loss, G, loss_at, thr, C2, n_iter):
        xi = tangent_projection(A, G)
        F = loss + huber(A, thr, C2)
        self._gamma = min(2.0 * self._gamma, 1e8)
        for _ in range(40):
            A_new = qr_retraction(prox_huber(A - self._gamma * xi, thr, C2, self._gamma))
            loss_new = loss_at(A_new)
            if loss_new + huber(A_new, thr, C2) <= F - 1e-4 / self._gamma * float(
                    ((A_new - A) ** 2).sum()):
                return A_new, loss_new
            self._gamma *= 0.5
        return A, loss


class BBMIDR(_StepMIDR):
    """A-step: MIDR's (``line_search="F"``: the gradient of F with H = soft(A), Armijo on F,
    QR retraction), its search starting from a Barzilai-Borwein step (alternating BB1 / BB2 on
    s = A_k - A_k-1 and the difference of the Riemannian gradients) instead of twice the last
    accepted step."""

    def _step(self, A, loss, G, loss_at, thr, C2, n_iter):
        xi = tangent_projection(A, G + C2 * (A - soft_threshold(A, thr)))
        xi2 = float((xi * xi).sum())
        if self._last is not None:
            s, dxi = A - self._last[0], xi - self._last[1]
            sy = float((s * dxi).sum())
            gamma = (float((s * s).sum()) / sy if n_iter % 2 else
                     sy / float((dxi * dxi).sum())) if sy > 0 else 2.0 * self._gamma
            self._gamma = min(max(gamma, 1e-12), 1e8)
        self._last = (A, xi)
        F = loss + huber(A, thr, C2)
        for _ in range(60):
            A_new = qr_retraction(A - self._gamma * xi)
            loss_new = loss_at(A_new)
            if loss_new + huber(A_new, thr, C2) <= F - 1e-4 * self._gamma * xi2:
                return A_new, loss_new
            self._gamma *= 0.5
        return A, loss


def convergence(a):
    bags = minmax_bags(a.dataset, a.data)
    y = bags.labels
    variants = [("config (psi, 100)", MIDR, {}),
                ("F + excess, 100", MIDR, {"stop": "excess", "line_search": "F"}),
                (f"F + excess, {a.long}", MIDR,
                 {"stop": "excess", "line_search": "F", "max_iter": a.long, "tol": a.tol}),
                ("prox, 100", ProxMIDR, {}),
                (f"prox, {a.long}", ProxMIDR, {"max_iter": a.long, "tol": a.tol}),
                (f"BB, {a.long}", BBMIDR, {"max_iter": a.long, "tol": a.tol})]
    points = POINTS[:a.points]
    print(f"{a.dataset}: {len(bags)} bags, dims {a.dims}; F − const at the end, |A_ij| ≤ C1/C2")
    warnings.simplefilter("ignore")       # the capped fits warn
    with fits_not_reused():
        for C1, C2 in points:
            cells = []
            for name, cls, kw in variants:
                t = time.process_time()
                m = cls(dims=a.dims, C1=C1, C2=C2, **kw).fit(bags, y)
                t = time.process_time() - t
                E = m.objective_history_[-1] - (
                    C2 * m.n_components_ * (0.5 if C1 >= C2 else C1 / C2 - 0.5 * (C1 / C2) ** 2))
                cells.append(f"{name}: {m.n_iter_:4d} it, {E:8.4g}, "
                             f"{float((np.abs(m.A_) <= C1 / C2).mean()):.2f}, {t:5.2f} s")
            print(f"C1={C1:g} C2={C2:g}\n  " + "\n  ".join(cells), flush=True)


# ------------------------------------------------------------------------------ inner-cv
def inner_cv(a):
    bags = load_dataset(a.dataset, a.data)
    selector = {"name": "midr", "dims": a.dims, "max_iter": 30,
                "tune": {"C1": [1e-3, 1e-1], "C2": [1.0, 100.0]}}
    classifier = {"name": "milr", "tune": {"C": [0.1, 1.0, 10.0]}}
    assert not caches_selector_fits(selector, classifier)
    cpu = {}
    for way in ("none", "joblib", "in-process"):
        M.FIT_CACHE.clear()
        with tempfile.TemporaryDirectory() as cache, reuse(way == "in-process"), \
                counting_solves() as log:
            est = build_estimator("minmax", selector, classifier, inner_folds=5,
                                  memory=cache if way == "joblib" else None)
            t = time.process_time()
            est.fit(bags, bags.labels)
            cpu[way] = time.process_time() - t
        print(f"{way:>10}: {len(log):3d} MIDR solves, {cpu[way]:6.2f} s CPU, best "
              f"{est.best_params_} (inner score {est.best_score_:.4f})")
    print(f"CPU ratio joblib / none: {cpu['joblib'] / cpu['none']:.2f}; in-process / none: "
          f"{cpu['in-process'] / cpu['none']:.2f}; in-process / joblib: "
          f"{cpu['in-process'] / cpu['joblib']:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)

    def mode(name, fn, dataset, help_):
        p = sub.add_parser(name, help=help_)
        p.set_defaults(run=fn)
        p.add_argument("--dataset", default=dataset)
        p.add_argument("--data", default=str(DATA))
        p.add_argument("--dims", type=float, default=0.3)
        return p

    p = mode("iteration", iteration, "musk2",
             "one fit: an iteration against a MILR pass; v-refit and fit key against peers")
    p.add_argument("--C1", type=float, default=1e-3)
    p.add_argument("--C2", type=float, default=1.0)
    p.add_argument("--max-iter", type=int, default=100)
    p = mode("cell", cell, "musk1", "tuned cells of config/paper/midr.yaml under variants")
    p.add_argument("--outer", type=int, default=2, help="outer folds (cells) of repeat 0")
    p.add_argument("--first-fold", type=int, default=0)
    p.add_argument("--variants", nargs="+", default=["no-reuse", "exact", "excess"],
                   help=f"{', '.join(OPTIONS)} or NAME:k=v,...; ratios are to the first")
    p.add_argument("--json", help="write every row here")
    p.add_argument("--keep-midr-fits", action="store_true",
                   help="keep MIDR's fits between variants: after the first variant of a cell "
                        "every MIDR fit is a hit, and the CPU left is MILR's, the scoring's and "
                        "the search's")
    p = mode("convergence", convergence, "musk1",
             "grid points fitted capped, to convergence, with a proximal A-step and with BB steps")
    p.add_argument("--tol", type=float, default=1e-5, help="tol of the converged runs")
    p.add_argument("--long", type=int, default=1000, help="iterations of the converged runs")
    p.add_argument("--points", type=int, default=len(POINTS),
                   help=f"the first N of the {len(POINTS)} grid points")
    mode("inner-cv", inner_cv, "musk1",
         "an inner CV of MIDR x MILR without reuse, with the joblib cache, with in-process reuse")
    a = ap.parse_args()
    a.run(a)


if __name__ == "__main__":
    main()
