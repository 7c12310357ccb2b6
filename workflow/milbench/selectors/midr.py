"""[midr] Multi-Instance Dimensionality Reduction (Sun, Ng & Zhou 2010, AAAI).

The speed-up problem (Sun et al. (2010), Eq. 10) is solved by block coordinate descent::

    F(A, H, v, b) = Σ_i (P_i − y_i)² + C2/2 ‖A − H‖²_F + C1 ‖H‖₁ (+ v_l2/2 ‖v‖²)
    s.t. AᵀA = I_d,  A ∈ R^{D×d}

    P_ij = σ(vᵀAᵀx_ij + b),  P_i = softmax_α(P_i1 … P_in_i) = Σ_j P_ij e^{αP_ij} / Σ_j e^{αP_ij}

Algorithm 1 of the paper, one iteration:

1. refit (v, b) — minimise F over (v, b) with A fixed (L-BFGS, warm-started);
2. Euclidean gradient Z = ∂ψ/∂A of ψ(A) = Σ_i (P_i − y_i)² + C2/2 ‖A − H‖²_F and the
   Riemannian gradient Π_T(Z) = A(AᵀZ − ZᵀA)/2 + (I − AAᵀ)Z (Eq. 7–8);
3. Armijo backtracking line search on γ (γ = 1 at the start, Eq. 11);
4. A ← R(A − γ Π_T(Z)) with the QR retraction R (Q factor, diag(R) > 0), so AᵀA = I holds to
   machine precision after every step;
5. H ← soft-threshold(A, C1/C2) (Eq. 12).

Stop when the relative decrease of F over one iteration is below ``tol`` or after ``max_iter``
iterations.  Every block step is a descent step for F, so the recorded objective is monotone.

Stopping and line search (both off by default, their measured effect is in docs/performance.md):

* ``stop="total"`` tests the relative decrease of F itself.  On the manifold
  C2/2‖A − H‖² + C1‖H‖₁ with H = soft(A, C1/C2) equals C2·Σ huber_{C1/C2}(A_ij), whose minimum
  over St(d, D) is c = C2·d·huber(1) (= C2·d/2 when C1 ≥ C2: then H ≡ 0 and the term is that
  constant); a large C2 makes F − c a small fraction of F, so the test stops after 2–8
  iterations whatever the loss does.  ``stop="excess"`` tests the relative decrease of
  F − c ≥ 0 instead — the paper's "stop when the objective does not improve", whose lower bound
  (zero) the paper uses, read on the part of F that can improve.
* ``line_search="psi"`` backtracks on ψ(A) with H fixed (Algorithm 1 as printed): with
  C2 ≫ the loss's curvature every step is anchored to the lagging H by C2/2‖A − H‖², γ ≈ 1/C2,
  and the fit crawls to ``max_iter``.  ``line_search="F"`` backtracks on F(A, soft(A)) — the
  Eq. 10 objective after step 5, whose curvature is C2 only inside the band |A_ij| ≤ C1/C2 — with
  the same gradient (that of ψ at H = soft(A)) and the same monotone descent.  Fits with
  C1 ≥ 1e-3 and C1/C2 ≤ 0.1 still reach ``max_iter``: the ℓ1 part moves each entry by
  ≈ γ·C1 per iteration, so sparsifying A takes ≈ |A_ij|·C2/C1 gradient steps (a gradient flow,
  the paper's Eq. 9, is slow there by nature).

While reuse is on (:mod:`milbench.utils.cache`: the workflow's cells), each distinct fit is
computed once per process (:class:`FitCache`): an inner CV joining
(C1, C2) with MILR's C refits the same model once per C, and every grid point with
C1/C2 ≥ max|A_ij| (any C1 ≥ C2, as |A_ij| ≤ 1) has H ≡ 0 and gives the same A for every C1 (and,
with ``stop="excess"``, every C2); the A-steps then leave out the constant C2 term (its
Riemannian gradient is zero), so sharing is exact.  The v-refit drives scipy's L-BFGS-B without
``minimize``'s wrapper (:func:`milbench.utils.lbfgsb.lbfgsb`, bit-identical iterates).

Since P depends on A only through u = Av, ∂Σ(P_i − y_i)²/∂A = (Xᵀg) vᵀ is rank one and one
objective+gradient evaluation costs O(N·D) like a MILR pass; only the v-refit needs the
projected data XA (O(N·D·d), once per iteration).

Departures from / readings of the paper (say so in reports):

* Eq. 11 (A − γ grad) leaves the Stiefel manifold for finite γ; we follow it with a QR
  retraction.  The paper's ODE/"one-step gradient flow" wording is read as this.
* The line search starts each iteration at 2 × the previous accepted γ (γ = 1 initially) and
  halves until the Armijo condition holds (the paper only says "line search").
* How v is "updated" is not specified; we decrease the same squared loss in (v, b) with at most
  ``v_max_iter`` warm-started L-BFGS steps (block coordinate descent; an ascent is never
  accepted), with a ridge ``v_l2/2‖v‖²`` (default 0.1; ``v_l2=0`` is the paper's objective
  exactly).  Without it v alone can drive the training loss to ~0 inside the initial subspace,
  the solution is not unique and A stops moving; MILR of Ray & Craven is ridge-regularised
  too.  The ridge term is part of the reported objective.
* The smoothed |A_st(ε)| of Eq. 5 is not needed: the speed-up problem (Eq. 10) puts the l1
  term on H, which has the closed-form update Eq. 12.
* Instances are centred by the training mean before projecting (x − μ); the intercept b
  absorbs the shift for fixed A but the centring keeps the A-updates from having to move
  the offset vᵀAᵀμ.  ``transform`` returns (X − μ)A (or (X − μ)H with ``project="H"``).
* Initialisation: A = top-d principal directions of the (centred) training instances
  (``init="pca"``, deterministic; padded with random orthonormal columns when rank < d) or a
  random orthonormal matrix (``init="random"``, seeded by ``random_state``); H = soft(A); v = 0.
* Default ``project="A"``: the paper's Algorithm 1 outputs A (orthonormal); H is the sparse
  surrogate (≈ A when C2 is large) and can be all zero when C1/C2 ≥ max|A_ij|.
* Figures 4–5 (``loss_grid``): with Eq. 12 a small C2 means a large threshold C1/C2, so H is
  sparse (Σ|H| small, ‖HᵀH − I‖ ≈ √d).  The paper's text says the sparsity loss is *large*
  for small C2, which contradicts Eq. 12 as printed; we implement Eq. 12.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
from scipy.linalg import eigh
from scipy.special import expit

from milbench.base import (
    COUNT_OR_ZERO,
    FRACTION_OR_COUNT,
    NON_NEGATIVE,
    POSITIVE,
    SEED,
    MILTransformer,
    n_from_fraction,
    options,
    warn_cap,
)
from milbench.data.bags import check_bags, segment_softmax_weights, unstack
from milbench.utils.cache import LRUCache, ReusesFits, fit_key
from milbench.utils.hashing import array_digest
from milbench.utils.lbfgsb import lbfgsb

_ARMIJO_C = 1e-4
_MAX_BACKTRACK = 40


# -- per-process reuse of fits --------------------------------------------------------------
class FitCache(LRUCache):
    """Fitted MIDR states of this process, least recently used first out, within
    ``max_bytes``; keyed on the training data's :func:`~milbench.utils.hashing.array_digest`, d
    and the parameters but ``MIDR.cache_ignores`` (:func:`~milbench.utils.cache.fit_key`).  An
    inner CV that joins MIDR's (C1, C2) with a classifier's C refits the same MIDR once per C;
    and every grid point whose H stays ≡ 0 (C1/C2 ≥ max|A_ij| over the iterates, e.g. any
    C1 ≥ C2 as |A_ij| ≤ 1) gives the same A whatever C1 (and, with ``stop="excess"``, whatever
    C2): each distinct model is fitted once (:meth:`MIDR.shared_fit_slot`).  A hit returns
    exactly the state a fresh fit computes (tests).  Bounded per process (``max_bytes``,
    128 MiB: a 9 x 9 grid's distinct fits over 5 inner folds take ≈ 10-60 MB at D = 166-230);
    the joblib ``Pipeline(memory=)`` cache is not used for MIDR."""

    def __init__(self, max_bytes=128 * 2**20):
        super().__init__(max_bytes, sizeof=self._nb)

    @staticmethod
    def _nb(state):
        return sum(v.nbytes for v in state.values() if isinstance(v, np.ndarray))

    def lookup(self, key, slot, C1, C2, stop):
        """The state of a fit that serves (C1, C2): its own, else the shared fit of ``slot``
        (:meth:`MIDR.shared_fit_slot`) when its H stayed ≡ 0 at C1/C2; else None."""
        state = self.peek(key + ((C1, C2),))
        if state is None and slot is not None:
            state = self.peek(key + slot)
            if state is not None and not state["amax"] <= C1 / C2:
                state = None
            if state is not None and stop == "excess":   # F = (loss + ridge) + C2·d/2
                state = {**state, "hist": state["ehist"] + 0.5 * C2 * state["A"].shape[1]}
        self.count(state is not None)
        return state

    def store(self, key, slot, C1, C2, state):
        """Keep ``state`` under the shared ``slot`` when its H stayed ≡ 0, else as (C1, C2)'s."""
        for v in state.values():
            if isinstance(v, np.ndarray):
                v.flags.writeable = False
        shared = slot is not None and state["amax"] <= C1 / C2
        self.put(key + slot if shared else key + ((C1, C2),), state)


FIT_CACHE = FitCache()


def fits_not_reused(cache=None):
    """Fit afresh inside the block (the path without reuse; benchmarks, tests)."""
    return (FIT_CACHE if cache is None else cache).disabled()


# -- manifold pieces ---------------------------------------------------------------------
def tangent_projection(A, Z):
    """Π_T(Z) = A(AᵀZ − ZᵀA)/2 + (I − AAᵀ)Z, projection onto T_A St(d, D) (Sun et al. 2010,
    Eq. 7)."""
    AtZ = A.T @ Z
    return Z - A @ ((AtZ + AtZ.T) / 2.0)  # same as A(AᵀZ − ZᵀA)/2 + Z − AAᵀZ


def qr_retraction(Y):
    """Q factor of Y = QR with diag(R) > 0: a retraction onto the Stiefel manifold."""
    Q, R = np.linalg.qr(Y)
    s = np.sign(np.diag(R))
    s[s == 0] = 1.0
    return Q * s


def soft_threshold(A, t):
    """Eq. 12: argmin_H ‖A − H‖² + 2t|H| element-wise = sign(A) max(|A| − t, 0)."""
    return np.sign(A) * np.maximum(np.abs(A) - t, 0.0)


def orthonormality_loss(H):
    """‖HᵀH − I‖_F (Sun et al. 2010, Fig. 4)."""
    return float(np.linalg.norm(H.T @ H - np.eye(H.shape[1])))


def sparsity_loss(H):
    """Σ|H_ij| (Sun et al. 2010, Fig. 5)."""
    return float(np.abs(H).sum())


# -- the bag loss Σ (P_i − y_i)² and its gradients ----------------------------------------
def _bag_sq_loss(s, offsets, y, alpha, need_grad=True, sizes=None):
    """Loss Σ_i (P_i − y_i)² from instance scores s and dLoss/ds (stacked)."""
    starts = offsets[:-1]
    sizes = np.diff(offsets) if sizes is None else sizes
    p = expit(s)
    if alpha <= 50:  # p ∈ [0, 1]: shifting by α (not the bag max) can neither over- nor underflow
        e = np.exp(alpha * (p - 1.0))
        w = e / np.repeat(np.add.reduceat(e, starts), sizes)
    else:
        w = segment_softmax_weights(p, offsets, alpha)
    P = np.add.reduceat(p * w, starts)
    r = P - y
    loss = float(r @ r)
    if not need_grad:
        return loss, None
    # ∂P_i/∂p_ij = w_ij (1 + α(p_ij − P_i));  ∂p/∂s = p(1 − p)
    g = np.repeat(2.0 * r, sizes) * w * (1.0 + alpha * (p - np.repeat(P, sizes))) * p * (1.0 - p)
    return loss, g


def midr_objective(A, v, b, H, X, offsets, y, C1, C2, alpha=3.5, v_l2=0.0):
    """Full objective F of Eq. 10 (+ ridge on v) and its gradients (dF/dA, dF/dv, dF/db).

    ``X`` are the (centred) stacked training instances, ``offsets`` the bag offsets.
    dF/dA is the Euclidean gradient, (Xᵀg)vᵀ + C2(A − H).
    """
    u = A @ v
    loss, g = _bag_sq_loss(X @ u + b, offsets, y, alpha)
    D = A - H
    F = loss + 0.5 * C2 * float((D * D).sum()) + C1 * float(np.abs(H).sum()) \
        + 0.5 * v_l2 * float(v @ v)
    Xg = X.T @ g
    return F, np.outer(Xg, v) + C2 * D, A.T @ Xg + v_l2 * v, float(g.sum())


class MIDR(ReusesFits, MILTransformer):
    """Multi-instance dimensionality reduction (Sun, Ng & Zhou (2010), AAAI, Eq. 10, Algorithm 1).

    Parameters
    ----------
    dims : fraction of D in (0, 1] or integer number of output dimensions d.
    C1, C2 : sparsity weight and A–H coupling weight of Eq. 10 (H = soft(A, C1/C2)).
    alpha : softmax sharpness (paper: 3.5).
    project : "A" (orthonormal, default, the paper's output) or "H" (sparse) as projection.
    init : "pca" (default) or "random" orthonormal initial A.
    v_l2 : ridge on the logistic weights v in the refit step (see module docstring).
    max_iter, tol : outer iterations and relative objective decrease for stopping.
    v_max_iter : L-BFGS iterations per v-refit.
    stop : "total" (default: relative decrease of F) or "excess" (of F minus its constant
        part min_St C2·Σ huber(A_ij); see the module docstring).
    line_search : "psi" (default: Armijo on ψ(A) with H fixed) or "F" (on Eq. 10's F with
        H = soft(A) following A).
    random_state : seed for init="random" (and padding of a rank-deficient PCA init).

    Fitted: ``components_`` (D × d, the matrix used by transform), ``A_``, ``H_``, ``coef_``
    (v), ``intercept_`` (b), ``mean_``, ``n_iter_``, ``objective_history_``,
    ``orthonormality_history_`` (‖AᵀA − I‖_F after every step), ``diagnostics_``.
    ``diagnostics_["converged"]`` = 1 when the relative decrease of F (``stop``) fell below
    ``tol`` (Algorithm 1's rule), 0 when ``max_iter`` iterations ran out first (then a
    ConvergenceWarning); ``n_iter`` = outer iterations.  The ``v_max_iter`` L-BFGS steps of a
    v-refit are a block-coordinate step by design, not a cap to converge within.
    """

    # FIT_CACHE's key: every parameter but these (milbench.utils.cache.ReusesFits)
    cache_ignores = {
        "C1": "a fit of its own is stored as (C1, C2)'s; a shared one serves several C1 "
              "(shared_fit_slot)",
        "C2": "as C1 (shared_fit_slot: part of the shared slot unless stop='excess')",
        "project": "the fitted state holds A; components_ (A, or H = soft(A, C1/C2)) is "
                   "taken from it after the fit",
    }

    @staticmethod
    def shared_fit_slot(params):
        """The tag of the fit that serves the setting ``params`` (a dict of MIDR parameters)
        together with others, or None for a fit of its own.  With C1 ≥ C2 the threshold
        C1/C2 ≥ 1 ≥ max|A_ij| keeps H ≡ 0 (Sun et al. (2010), Eq. 12), and the A-steps leave
        out the then constant C2 term (``_solve``): one fit serves every C1 ≥ C2, per C2 with
        ``stop="total"`` (F holds C2·d/2) and for every C2 with ``stop="excess"`` (its test
        reads F minus that constant).  The fit checks on a hit that the shared fit's
        max|A_ij| ≤ C1/C2 (:meth:`FitCache.lookup`); the planner counts a grid's distinct
        fits by this rule (:func:`milbench.experiment.plan.selector_fit_slot`)."""
        C1, C2 = float(params["C1"]), float(params["C2"])
        if C1 < C2:
            return None
        return ("H0", C2) if params["stop"] == "total" else ("H0",)

    _parameter_constraints = {
        "dims": FRACTION_OR_COUNT,
        "C1": NON_NEGATIVE,
        "C2": POSITIVE,
        "alpha": NON_NEGATIVE,
        "project": options(("A", "H")),
        "init": options(("pca", "random")),
        "v_l2": NON_NEGATIVE,
        "max_iter": COUNT_OR_ZERO,
        "tol": NON_NEGATIVE,
        "v_max_iter": COUNT_OR_ZERO,
        "stop": options(("total", "excess")),
        "line_search": options(("psi", "F")),
        "random_state": SEED,
    }

    def __init__(self, dims=0.3, C1=0.01, C2=1.0, alpha=3.5, project="A", init="pca",
                 v_l2=0.1, max_iter=100, tol=1e-5, v_max_iter=10, stop="total",
                 line_search="psi", random_state=None):
        self.dims = dims
        self.C1 = C1
        self.C2 = C2
        self.alpha = alpha
        self.project = project
        self.init = init
        self.v_l2 = v_l2
        self.max_iter = max_iter
        self.tol = tol
        self.v_max_iter = v_max_iter
        self.stop = stop
        self.line_search = line_search
        self.random_state = random_state

    # -- helpers --------------------------------------------------------------------------
    def _init_A(self, Xc, d, rng):
        D = Xc.shape[1]
        if self.init == "random":
            return qr_retraction(rng.standard_normal((D, d)))
        N = Xc.shape[0]
        if D <= N:  # top-d eigenvectors of the scatter matrix (cheaper than an SVD of Xc)
            lam, V = eigh(Xc.T @ Xc, subset_by_index=[D - d, D - 1])
            lam, V = lam[::-1], V[:, ::-1]
            V = V[:, lam > max(lam[0], 0) * 1e-12] if lam[0] > 0 else np.zeros((D, 0))
        else:
            _, sv, Vt = np.linalg.svd(Xc, full_matrices=False)
            V = Vt[sv > sv[0] * 1e-6].T[:, :d] if sv[0] > 0 else np.zeros((D, 0))
        if V.shape[1] < d:  # rank-deficient: complete with random orthonormal directions
            R = rng.standard_normal((D, d - V.shape[1]))
            R -= V @ (V.T @ R)
            V = np.hstack([V, R])
        return qr_retraction(V)

    def _refit_v(self, Z, offsets, y, v, b):
        """Minimise Σ(P_i − y_i)² + v_l2/2‖v‖² over (v, b) with Z = XA fixed."""
        d = Z.shape[1]
        alpha, lam = self.alpha, self.v_l2
        sizes = np.diff(offsets)

        def fun(theta):
            loss, g = _bag_sq_loss(Z @ theta[:d] + theta[d], offsets, y, alpha, sizes=sizes)
            return (loss + 0.5 * lam * theta[:d] @ theta[:d],
                    np.concatenate([Z.T @ g + lam * theta[:d], [g.sum()]]))

        res = lbfgsb(fun, np.concatenate([v, [b]]), self.v_max_iter, 1e-8)
        if res.fun <= res.f0:  # never accept an ascent step (keeps F monotone)
            return res.x[:d], float(res.x[d])
        return v, b

    # -- fit --------------------------------------------------------------------------------
    def _fit(self, X, offsets, y01):
        t0 = time.perf_counter()
        y = y01.astype(float)
        D = X.shape[1]
        d = n_from_fraction(self.dims, D)
        C1, C2 = float(self.C1), float(self.C2)
        thr = C1 / C2
        key = fit_key(self, array_digest(X, offsets, y), d) if FIT_CACHE.active else None
        slot = self.shared_fit_slot(self.get_params()) if key is not None else None
        state = FIT_CACHE.lookup(key, slot, C1, C2, self.stop) if key is not None else None
        if state is None:
            state = self._solve(X, offsets, y, d, C1, C2)
            if key is not None:
                FIT_CACHE.store(key, slot, C1, C2, state)
        A, v, b, hist = state["A"], state["v"], state["b"], state["hist"]
        H = soft_threshold(A, thr)
        self.mean_ = state["mean"].copy()
        self.A_, self.H_ = A.copy(), H
        self.components_ = self.A_ if self.project == "A" else H
        self.coef_, self.intercept_ = v.copy(), b
        self.n_components_ = d
        self.n_iter_ = state["n_iter"]
        self.objective_history_ = hist.copy()
        self.orthonormality_history_ = state["ortho"].copy()
        if not state["converged"]:
            warn_cap(self, "max_iter", self.max_iter, "iterations with F still decreasing by "
                     f"more than tol={self.tol}")
        self.diagnostics_ = {
            "n_iter": int(state["n_iter"]),
            "converged": int(state["converged"]),
            "midr_objective": float(hist[-1]),
            "orthonormality_loss": orthonormality_loss(H),
            "sparsity_loss": sparsity_loss(H),
            "A_orthonormality_error": float(state["ortho"][-1]),
            "midr_gamma": float(state["gamma"]),
            "midr_seconds": float(time.perf_counter() - t0),
        }

    def _solve(self, X, offsets, y, d, C1, C2):
        """Algorithm 1 from the initial A; returns the fitted state (see :class:`FitCache`)."""
        rng = np.random.default_rng(self.random_state)
        sizes = np.diff(offsets)
        mean = X.mean(axis=0)
        Xc = X - mean
        alpha, lam = float(self.alpha), float(self.v_l2)
        thr = C1 / C2
        # F − const ≥ 0: const = min over St(d, D) of C2/2‖A − H‖² + C1‖H‖₁ with H = soft(A)
        # (= C2·Σ huber_thr(A_ij), concave in A_ij², Σ A_ij² = d, |A_ij| ≤ 1: attained by d
        # unit entries), C2·d/2 when thr ≥ 1 (the term is then constant on the manifold)
        const = C2 * d * (0.5 if thr >= 1 else thr - 0.5 * thr * thr) \
            if self.stop == "excess" else 0.0
        pen0 = 0.0 if self.stop == "excess" and thr >= 1 else 0.5 * C2 * d - const  # H ≡ 0

        reduced = self.line_search == "F" and thr < 1

        def penalty(A):
            """min over H of C2/2‖A − H‖² + C1‖H‖₁ = C2·Σ huber_thr(A_ij) (Eq. 12)."""
            a = np.abs(A)
            return C2 * float(np.where(a <= thr, 0.5 * a * a, thr * a - 0.5 * thr * thr).sum())

        A = self._init_A(Xc, d, rng)
        H = soft_threshold(A, thr)
        amax = float(np.abs(A).max())
        v, b = np.zeros(d), 0.0
        gamma = 1.0
        ortho_hist = [float(np.linalg.norm(A.T @ A - np.eye(d)))]

        def objective(loss, A, H, v):
            """(F, F − const); with H ≡ 0 the penalty is C2·d/2, added last (exact sharing)."""
            rest = loss + 0.5 * lam * float(v @ v)
            if not H.any():
                return rest + 0.5 * C2 * d, rest + pen0
            F = loss + 0.5 * C2 * float(((A - H) ** 2).sum()) + C1 * float(np.abs(H).sum()) \
                + 0.5 * lam * float(v @ v)
            return F, F - const

        F, E_prev = objective(_bag_sq_loss(Xc @ (A @ v) + b, offsets, y, alpha,
                                           need_grad=False, sizes=sizes)[0], A, H, v)
        hist, ehist = [F], [E_prev]
        n_iter, converged = 0, False
        for it in range(int(self.max_iter)):
            n_iter = it + 1
            # 1. update v, b (and hence P_i)
            v, b = self._refit_v(Xc @ A, offsets, y, v, b)
            # 2. Riemannian gradient of ψ(A) (the C1‖H‖₁ term does not depend on A).  With
            # H ≡ 0 the C2 term is C2‖A‖²/2 = C2·d/2 on the manifold: its Riemannian gradient
            # is 0 and it is the same on both sides of the Armijo test, so it is left out
            # (exact in exact arithmetic; the A-steps then do not depend on C2 at all).
            c2 = C2 if H.any() else 0.0
            psi, G, _, _ = midr_objective(A, v, b, H, Xc, offsets, y, 0.0, c2, alpha, 0.0)
            xi = tangent_projection(A, G)
            xi2 = float((xi * xi).sum())
            # 3.-4. Armijo backtracking on γ, QR retraction
            loss = psi - 0.5 * c2 * float(((A - H) ** 2).sum())
            if reduced:     # Armijo on F(A, soft(A)) = loss + C2·Σ huber_thr(A_ij): H follows A
                psi = loss + penalty(A)
            if xi2 > 0:
                gamma = min(2.0 * gamma, 1e8)
                for _ in range(_MAX_BACKTRACK):
                    A_new = qr_retraction(A - gamma * xi)
                    loss_new = _bag_sq_loss(Xc @ (A_new @ v) + b, offsets, y, alpha,
                                            need_grad=False, sizes=sizes)[0]
                    pen_new = penalty(A_new) if reduced else \
                        0.5 * c2 * float(((A_new - H) ** 2).sum())
                    if loss_new + pen_new <= psi - _ARMIJO_C * gamma * xi2:
                        A, loss = A_new, loss_new
                        break
                    gamma *= 0.5
            ortho_hist.append(float(np.linalg.norm(A.T @ A - np.eye(d))))
            amax = max(amax, float(np.abs(A).max()))
            # 5. H by soft-thresholding (Eq. 12)
            H = soft_threshold(A, thr)
            F, E = objective(loss, A, H, v)
            hist.append(F)
            ehist.append(E)
            if E_prev - E <= self.tol * max(abs(E_prev), 1e-12):
                converged = True
                break
            E_prev = E
        return {"A": A, "v": v, "b": b, "mean": mean, "hist": np.asarray(hist),
                "ehist": np.asarray(ehist), "ortho": np.asarray(ortho_hist), "n_iter": n_iter,
                "converged": converged, "gamma": gamma, "amax": amax}

    def _transform_instances(self, X):
        return (X - self.mean_) @ self.components_


def loss_grid(X, y, C1_values, C2_values, **midr_params):
    """Figures 4–5 of Sun et al. (2010): loss of orthonormality ‖HᵀH − I‖_F and of sparsity Σ|H_ij|
    for every (C1, C2) pair, one MIDR fit each on bags ``X`` (Bags or list) with labels ``y``.

    Returns a pandas DataFrame with columns C1, C2, orthonormality_loss, sparsity_loss,
    objective, iterations, seconds.
    """
    bags = unstack(*check_bags(X, y)[:2])  # validate once; MIDR re-checks cheaply
    rows = []
    for C2 in C2_values:
        for C1 in C1_values:
            m = MIDR(C1=C1, C2=C2, **midr_params).fit(bags, y)
            dg = m.diagnostics_
            rows.append({"C1": float(C1), "C2": float(C2),
                         "orthonormality_loss": dg["orthonormality_loss"],
                         "sparsity_loss": dg["sparsity_loss"],
                         "objective": dg["midr_objective"], "iterations": dg["n_iter"],
                         "seconds": dg["midr_seconds"]})
    return pd.DataFrame(rows)
