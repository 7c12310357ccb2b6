"""MIDR to convergence: how far the capped fits of config/paper/midr.yaml's grid are from it.

For (C1, C2) points of the paper's 9 x 9 grid, fits MIDR (30 % of D, the whole data set) with
Algorithm 1 as the config runs it (``max_iter = 100``) and to convergence (``--long`` iterations,
``stop="excess"``, ``line_search="F"``), and with a proximal variant of the A-step: the gradient
step on the loss alone, then the proximal map of the penalty C2·Σ huber_{C1/C2}(A_ij) that
Eq. 10 leaves after the H-step (closed form per entry), then the QR retraction, accepted when F
decreases (Armijo on the step).  The proximal variant is a prototype kept here, not an option
of ``milbench.selectors.midr``: it departs from the paper's gradient step.

Prints per point and variant: iterations, F − const at the end (``stop="excess"``'s quantity;
lower is better), the fraction of |A_ij| ≤ C1/C2 (H's zeros) and CPU seconds.

    OMP_NUM_THREADS=1 python benchmarks/methods/bench_midr_convergence.py [--dataset musk1]
"""
from __future__ import annotations

from _paths import DATA
import argparse
import time
import warnings

import numpy as np

from milbench.data.sources import load_dataset
from milbench.selectors.midr import (
    MIDR,
    _bag_sq_loss,
    fits_not_reused,
    qr_retraction,
    tangent_projection,
)

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


class ProxMIDR(MIDR):
    """MIDR whose A-step is a proximal gradient step on the penalty (see the module docstring);
    the v-refit, initialisation and ``stop="excess"`` test are MIDR's."""

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
        v, b, gamma = np.zeros(d), 0.0, 1.0
        E_prev = loss_at(A, v, b) + huber(A, thr, C2) - const
        hist, converged, n_iter = [E_prev], False, 0
        for n_iter in range(1, int(self.max_iter) + 1):
            v, b = self._refit_v(Xc @ A, offsets, y, v, b)
            loss, g = _bag_sq_loss(Xc @ (A @ v) + b, offsets, y, alpha, sizes=sizes)
            xi = tangent_projection(A, np.outer(Xc.T @ g, v))
            F = loss + huber(A, thr, C2)
            gamma = min(2.0 * gamma, 1e8)
            for _ in range(40):
                A_new = qr_retraction(prox_huber(A - gamma * xi, thr, C2, gamma))
                loss_new = loss_at(A_new, v, b)
                if loss_new + huber(A_new, thr, C2) <= F - 1e-4 / gamma * float(
                        ((A_new - A) ** 2).sum()):
                    A, loss = A_new, loss_new
                    break
                gamma *= 0.5
            E = loss + huber(A, thr, C2) - const + 0.5 * lam * float(v @ v)
            hist.append(E)
            if E_prev - E <= self.tol * max(abs(E_prev), 1e-12):
                converged = True
                break
            E_prev = E
        hist = np.asarray(hist)
        return {"A": A, "v": v, "b": b, "mean": mean, "hist": hist + const, "ehist": hist,
                "ortho": np.zeros(1), "n_iter": n_iter, "converged": converged, "gamma": gamma,
                "amax": 1.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="musk1")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--dims", type=float, default=0.3)
    ap.add_argument("--long", type=int, default=1000, help="iterations of the converged runs")
    a = ap.parse_args()
    bags = load_dataset(a.dataset, a.data)
    lo, hi = bags.instances.min(0), bags.instances.max(0)
    bags = bags.with_instances((bags.instances - lo) / np.where(hi > lo, hi - lo, 1.0))
    y = bags.labels
    variants = [("config (psi, 100)", MIDR, {}),
                ("F + excess, 100", MIDR, {"stop": "excess", "line_search": "F"}),
                (f"F + excess, {a.long}", MIDR,
                 {"stop": "excess", "line_search": "F", "max_iter": a.long}),
                ("prox, 100", ProxMIDR, {}),
                (f"prox, {a.long}", ProxMIDR, {"max_iter": a.long})]
    print(f"{a.dataset}: {len(bags)} bags, dims {a.dims}; F − const at the end, |A_ij| ≤ C1/C2")
    warnings.simplefilter("ignore")       # the capped fits warn
    with fits_not_reused():
        for C1, C2 in POINTS:
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


if __name__ == "__main__":
    main()
