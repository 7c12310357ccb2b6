"""MIDR fit on musk2: one iteration vs one MILR objective + gradient pass, s and ratio, same run.

MIDR is midr.txt Algorithm 1, at 30 % of musk2's 166 features.

Prints iterations, seconds per iteration, and the ratio of one MIDR iteration to one pass of the
MILR objective + gradient (milbench.classifiers.milr.milr_loss_grad, softmax α = 3.5) over the
same min-max-scaled musk2 instances, both measured in this run.  midr.txt Table 2 reports
375.952 s for MIDR (+ MILR) on musk2; the script also prints MIDR fit + MILR fit wall time.

Also times one v-refit (10 L-BFGS-B iterations on (v, b), Algorithm 1 step 1) through
``scipy.optimize.minimize`` (the code before issue #26, plus its separate f(x0) evaluation)
against :func:`milbench.utils.lbfgsb.lbfgsb` (the same Fortran/C routine without the wrapper)
on the fitted projection, and checks the two give the same (v, b) bit for bit; and times the
fit-reuse key over the training data (blake2b before, sha1 now).

Run:  OMP_NUM_THREADS=1 python benchmarks/methods/bench_midr.py [--C1 1e-3] [--C2 1] [--dims 0.3]
"""
from __future__ import annotations

from _paths import DATA
import argparse
import time

import numpy as np
from scipy.optimize import minimize

from milbench.classifiers.milr import MILR, milr_loss_grad
from milbench.data.bags import stack
from milbench.data.sources import load_dataset
from milbench.selectors.midr import MIDR, _bag_sq_loss
from milbench.utils.cache import fingerprint
from milbench.utils.hashing import array_digest
from milbench.utils.lbfgsb import lbfgsb

from _timing import best_of

PAPER_MUSK2_SECONDS = 375.952


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="musk2")
    ap.add_argument("--dims", type=float, default=0.3)
    ap.add_argument("--C1", type=float, default=1e-3)
    ap.add_argument("--C2", type=float, default=1.0)
    ap.add_argument("--max-iter", type=int, default=100)
    ap.add_argument("--data", default=str(DATA))
    a = ap.parse_args()

    bags = load_dataset(a.dataset, a.data)
    lo, hi = bags.instances.min(0), bags.instances.max(0)
    bags = bags.with_instances((bags.instances - lo) / np.where(hi > lo, hi - lo, 1.0))
    y = bags.labels
    X, offsets = stack(bags.as_list())
    X = X.astype(float)
    print(f"{a.dataset}: {len(bags)} bags, {X.shape[0]} instances, D = {X.shape[1]}")

    # baseline: one MILR objective + gradient pass over the same data
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

    def old():
        fun(theta0)
        return minimize(fun, theta0, jac=True, method="L-BFGS-B",
                        options={"maxiter": 10, "gtol": 1e-8}).x

    same = np.array_equal(old(), lbfgsb(fun, theta0, 10, 1e-8)[0])
    reps = 50
    t0 = time.process_time()
    for _ in range(reps):
        old()
    t_old = (time.process_time() - t0) / reps
    t0 = time.process_time()
    for _ in range(reps):
        lbfgsb(fun, theta0, 10, 1e-8)
    t_new = (time.process_time() - t0) / reps
    print(f"one v-refit (d + 1 = {d + 1}, 10 iterations), CPU: scipy minimize "
          f"{t_old * 1e3:.2f} ms, lbfgsb {t_new * 1e3:.2f} ms, ratio {t_old / t_new:.2f}x, same (v, b): {same}")
    # the fit-reuse key over the training data: blake2b (utils.cache.fingerprint, before)
    # against sha1 (utils.hashing.array_digest, MIDR's and MILR's key now), same run
    t_b2 = best_of(lambda: fingerprint(X, offsets, yf), 7, number=5).cpu
    t_sha = best_of(lambda: array_digest(X, offsets, yf), 7, number=5).cpu
    print(f"fit key over the {X.nbytes / 2**20:.1f} MiB of instances, CPU: blake2b "
          f"{t_b2 * 1e3:.2f} ms, sha1 {t_sha * 1e3:.2f} ms, ratio {t_b2 / t_sha:.2f}x")
    total = t_fit + t_clf
    print(f"MIDR fit + MILR fit: {total:.2f} s  vs paper Table 2 (musk2) {PAPER_MUSK2_SECONDS} s "
          f"-> {PAPER_MUSK2_SECONDS / total:.0f}x less")


if __name__ == "__main__":
    main()
