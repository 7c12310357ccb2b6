"""MILSD: multiple-instance learning on structured data (Zhang, Liu, Si, Zhang & Lawrence 2011,
NIPS, §2) [milsd] — B-MILSD, I-MILSD and BI-MILSD.

Objective (Zhang et al. (2011), problem (1), linear classifier, bias absorbed as a constant
feature)::

    J(w) = ½‖w‖² + C/n Σ_i max{0, 1 − Y_i f(B_i)}
               + μ/|E| Σ_{(p,q)∈E} w(p,q) |f(p)/√d(p) − f(q)/√d(q)|,   f(B) = max_j wᵀB_j

with the graph on bags (``graph="bag"``, B-MILSD: f(p) is the bag score), on instances
(``graph="instance"``, I-MILSD: f(p) = wᵀx_p) or both (``graph="both"``, BI-MILSD: the two
terms added, each normalised by its own edge count |E_bag|, |E_inst|).  d(p) is the weighted
out-degree of p in its graph ("outgoing degree", as the paper, after Zhou et al. 2005).

Optimisation (Zhang et al. (2011), §2.3, Table 1):

* **CCCP** outer loop: every concave part — the max inside a positive bag's hinge and the
  subtracted max of each direction of an edge term — is replaced by its linearisation at the
  current w^(t) (the witness u = argmax_j w^(t)ᵀB_j); this gives problem (2), a convex upper
  bound that is tight at w^(t).  Stop when (J^(t−1) − J^(t))/J^(t−1) < ``tol`` (the paper's δ),
  when the witnesses repeat, or after ``max_cccp`` rounds.  The best w seen is kept.
* **Multi-constraint cutting plane** inner loop on the 1-slack form (3): two working sets Ω1
  (bag constraints c ∈ {0,1}^n) and Ω2 (edge constraints τ); each round adds the most violated
  c (eq. 4) when H1 (eq. 6) fails by more than ε1 and the most violated τ (eq. 5) when H2
  (eq. 7) fails by more than ε2; stop when both hold.  The restricted QP (8) is solved in its
  dual, max_γ Σ_c α_c b_c − ½‖Σ α_c g_c − Σ β_τ h_τ‖², α ≥ 0, Σα ≤ C, β ≥ 0, Σβ ≤ μ, by a
  primal active-set method (warm-started, exact up to round-off; ``solver="active-set"``, the
  default, unchanged so that models stay bit for bit: MILSD's path is round-off sensitive,
  see :func:`solve_dual_qp`) or by SMO-style dual coordinate descent with an exact solve on
  each face it reaches, stopped at a duality gap of ``qp_gap``·(C·ε1 + μ·ε2) or at round-off
  (``solver="cd"``, :func:`solve_dual_cd`; config/paper/milsd.yaml uses it: it reaches the
  active set's optimum to round-off at less CPU, docs/performance.md).  Successive cuts are
  nearly parallel, so the Gram matrix is ill-conditioned: pairwise steps alone zig-zag, which
  the face solve ends.  The working set lives in preallocated buffers (no
  re-stacking of the cut vectors every iteration).

Cost levers:

* The data-only setup of a fit — design matrix and its transpose, graph and degree
  normalisation, the round-1 linearisation (mean instances) and the first cut (at w = 0) —
  is built once per training set and shared by every (C, μ) of a grid while reuse is on
  (:data:`SETUP_CACHE`, :mod:`milbench.utils.cache`; exact: the same model bit for bit).
* ``warm_C=True`` starts CCCP at the solution of the neighbouring smaller C (same data and μ)
  instead of w = 0, so a fit depends on the fits run before it (only while reuse is on) —
  cheaper grids (docs/performance.md), but off by default: CCCP then
  reaches other local minima (WebKB grid samples: mean J −1.9 % to +1.7 % per task, the test
  accuracy of > 70 % of the fits changed, webkb-faculty at ratio .2 chose C = 1 instead of 2).

Departures and readings (stated, not hidden):

* Problem (2) as extracted writes the linearised score Y_i wᵀB_{iu_i} for *every* bag.  For a
  negative bag −max_j wᵀB_ij ≥ 1 − ξ_i is already convex, and CCCP linearises only concave
  parts, so negative bags keep the exact max (their most violated constraint uses the argmax at
  the current inner iterate).  This keeps the surrogate an upper bound of J, so J decreases
  monotonically (up to ε1, ε2) — the property Table 1's stopping rule relies on.
* w^(0) = 0 and the first linearisation uses each bag's mean instance: at w = 0 all instances
  tie, and the mean is a subgradient of the max there (Andrews et al.'s MI-SVM initialisation).
* Edge weights w(p,q) are used as given (the paper assumes the canonical weight 1); sink nodes
  (out-degree 0) get d = 1.  ``degree="total"`` uses in+out degree, ``"none"`` no normalisation.
* Graph edges come from ``X.edges`` (a :class:`~milbench.data.bags.Bags` with an edges DataFrame,
  see :mod:`milbench.chains`); a plain list of bags has no graph and gives MI-SVM (μ ignored).
  **Inductive by default**: only edges among the training bags enter the graph term.  Pass
  ``fit(X, y, unlabeled=U)`` (a Bags of unlabeled bags; edges in X.edges or U.edges that name
  bag ids of either container) for the paper's transductive setting, where unlabeled bags are
  graph nodes with scores max_j wᵀx_j but carry no hinge term.  Instance-level edges are only
  taken inside each container.  An edge listed twice (e.g. in X.edges and U.edges) counts once.
* ``scaling="mean"`` (default) is the paper's C/n Σ ξ_i and μ/|E| Σ edge terms.
  ``scaling="sum"`` uses C Σ ξ_i and μ Σ edge terms (per-bag C as in LIBLINEAR / Andrews et
  al.), i.e. C and μ multiplied by n and |E|: with L2-normalised TF-IDF passages the paper's
  grid C ∈ 2^[−5..5] on the *average* hinge underfits badly (webkb-student, ratio 0.5:
  C = 8 gives 55 % accuracy, C = 2048 gives 84 %), so the reproduction config uses "sum".

Attributes: ``coef_`` (d,), ``intercept_`` (bias weight × ``bias``), ``diagnostics_``
(n_iter = CCCP rounds, converged, cp_converged, cp_iterations, cp_iterations_max, objective,
n_bag_edges, n_instance_edges, n_constraints_bag, n_constraints_edge), ``history_`` (per
round: objective, cp iterations).
"""
from __future__ import annotations

import hashlib
import time
import warnings

import numpy as np
import pandas as pd
import scipy.sparse as sp

from milbench.base import (
    COUNT,
    NON_NEGATIVE,
    POSITIVE,
    MILClassifier,
    options,
    validate_params,
    warn_cap,
)
from milbench.data.bags import Bags, check_bags
from milbench.data.edges import check_edges
from milbench.utils.cache import LRUCache, ReusesFits, fit_key, params_key
from milbench.utils.segments import averaging_matrix, segment_arg

GRAPHS = ("bag", "instance", "both")
DEGREES = ("out", "total", "none")
SCALINGS = ("mean", "sum")


# ------------------------------------------------------------------------- dual QP
def solve_dual_qp(K, lin, block, caps, gamma0=None, tol=1e-12, max_iter=None):
    """max_γ linᵀγ − ½γᵀKγ  s.t. γ ≥ 0 and Σ_{k: block_k = b} γ_k ≤ caps[b].

    Primal active-set method (Nocedal & Wright, Alg. 16.3) on the equivalent minimisation,
    warm-started from ``gamma0``: the working set holds bounds γ_k = 0 and block caps; each
    step solves the equality-constrained KKT system on the free variables, moves to the first
    blocking constraint, or drops the constraint with the most negative multiplier.  A ridge of
    1e-12·(1 + max K_kk) makes K strictly convex (repeated constraints make it singular).
    Exact up to round-off; returns (γ, iterations).  Kept as first written: the
    working-set Gram matrix is nearly singular (successive cuts are nearly parallel), so a
    round-off difference can end at another near-optimal γ whose w moves CCCP's witnesses.
    An optimised variant (gradient carried along the steps, K's new column by one matrix
    product) changed J by up to 0.7 % and the test accuracy of 18 % of the fits of a WebKB
    grid sample, with no measurable gain per QP; not kept.
    """
    m = len(lin)
    nb = len(caps)
    caps = np.asarray(caps, float)
    if m == 0:
        return np.zeros(0), 0
    H = K + 1e-12 * (1.0 + float(np.max(np.diag(K)))) * np.eye(m)
    x = np.zeros(m) if gamma0 is None or len(gamma0) != m else np.maximum(gamma0, 0).astype(float)
    E = np.zeros((nb, m))
    E[block, np.arange(m)] = 1.0
    fixed0 = caps[block] <= 0                              # a block with cap 0 is all zero
    x[fixed0] = 0.0
    for b in range(nb):                                    # make the warm start feasible
        tot = E[b] @ x
        if caps[b] > 0 and tot > caps[b]:
            x[E[b] > 0] *= caps[b] / tot
    zero = (x <= 0) | fixed0
    x[zero] = 0.0
    cap_act = np.array([caps[b] > 0 and abs(E[b] @ x - caps[b]) <= 1e-14 * caps[b]
                        for b in range(nb)])
    lin_scale = max(1.0, float(np.abs(lin).max()))
    it = 0
    for it in range(1, (max_iter or 10 * m + 100) + 1):
        F = np.flatnonzero(~zero)
        A = np.flatnonzero(cap_act)
        g = H @ x - lin
        nF, nA = len(F), len(A)
        KKT = np.zeros((nF + nA, nF + nA))
        KKT[:nF, :nF] = H[np.ix_(F, F)]
        EA = E[np.ix_(A, F)]
        KKT[:nF, nF:] = EA.T
        KKT[nF:, :nF] = EA
        rhs = np.concatenate([-g[F], np.zeros(nA)])
        try:
            sol = np.linalg.solve(KKT, rhs)
        except np.linalg.LinAlgError:
            sol = np.linalg.lstsq(KKT, rhs, rcond=None)[0]
        p = np.zeros(m)
        p[F] = sol[:nF]
        if np.abs(p).max() <= 1e-13 * max(1.0, float(np.abs(x).max())):
            nu = np.zeros(nb)                              # cap multipliers: −g on free vars
            for b in A:
                kb = F[block[F] == b]
                nu[b] = -float(np.mean(g[kb])) if len(kb) else 0.0
            mult = np.where(zero & ~fixed0, g + nu[block], np.inf)
            k = int(np.argmin(mult))
            nu_act = np.where(cap_act, nu, np.inf)
            bmin = int(np.argmin(nu_act))
            if min(mult[k], nu_act[bmin]) >= -tol * lin_scale:
                break                                      # KKT point: optimal
            if mult[k] <= nu_act[bmin]:
                zero[k] = False
            else:
                cap_act[bmin] = False
            continue
        alpha, hit_k, hit_b = 1.0, -1, -1
        neg = np.flatnonzero(p < 0)
        if len(neg):
            r = x[neg] / -p[neg]
            j = int(np.argmin(r))
            if r[j] < alpha:
                alpha, hit_k = float(r[j]), int(neg[j])
        for b in range(nb):
            if not cap_act[b] and caps[b] > 0:
                ep = E[b] @ p
                if ep > 0:
                    r = (caps[b] - E[b] @ x) / ep
                    if r < alpha:
                        alpha, hit_k, hit_b = float(r), -1, b
        x = x + max(alpha, 0.0) * p
        if hit_b >= 0:
            cap_act[hit_b] = True
        elif hit_k >= 0:
            zero[hit_k] = True
            x[hit_k] = 0.0
        x[x < 0] = 0.0
    return x, it


def solve_dual_cd(K, lin, block, caps, gamma0=None, tol=1e-12, max_iter=None):
    """max_γ linᵀγ − ½γᵀKγ  s.t. γ ≥ 0 and Σ_{k: block_k = b} γ_k ≤ caps[b]; returns (γ, steps).

    Dual coordinate descent in the SMO form (Platt 1998; the second-order pair choice of Fan,
    Chen & Lin, JMLR 2005, as in LIBSVM / LIBLINEAR), each step followed by an exact solve on
    the face it reached.  A step: each block's cap becomes an equality with a slack variable of
    zero gradient; in the block with the larger duality gap, mass moves between one pair (one
    variable up, one down, or to / from the slack) by the exact 1-d maximiser clipped to the
    bounds — this is what brings a new cut into the support, or frees a cap.  Then the face
    solve (:func:`_face_solve`): the maximiser over the support with the saturated caps held
    as equalities, one KKT system, reached by a step clipped at the first bound it crosses
    (that variable or cap is fixed and the solve repeated).  Successive cuts are nearly
    parallel, so K is ill-conditioned and pairwise steps alone zig-zag; the face solve ends
    each zig-zag in one step.  Every step and every clipped move raises the dual objective.

    Stops when the duality gap of the restricted QP — Σ_b caps_b·max(0, max_{k∈b} g_k) −
    Σ_k γ_k g_k with g = lin − Kγ, the primal value at w = Σγ_k v_k with the slacks
    ξ_b = max(0, max_{k∈b} g_k) minus the dual value — is ≤ ``tol`` (absolute, objective
    units), or when a step and face solve no longer raise the dual objective beyond round-off
    (the KKT point to machine precision; the gap then measures only the round-off of g, which
    grows with caps·‖K‖); a step that would lower it (round-off) is not taken.  γ ≥ 0 exactly
    and block sums ≤ caps to round-off.  ``max_iter`` (default 10·m + 100 steps) is a safety
    cap.
    """
    m = len(lin)
    caps = np.asarray(caps, float)
    if m == 0:
        return np.zeros(0), 0
    x = np.zeros(m) if gamma0 is None or len(gamma0) != m else np.maximum(gamma0, 0).astype(float)
    x[caps[block] <= 0] = 0.0                               # a block with cap 0 is all zero
    blocks = []
    for b in range(len(caps)):
        idx = np.flatnonzero(block == b)
        if caps[b] > 0 and len(idx):
            tot = x[idx].sum()
            if tot > caps[b]:                               # make the warm start feasible
                x[idx] *= caps[b] / tot
            blocks.append((idx, float(caps[b])))
    g = lin - K @ x
    diag = np.diag(K).copy()
    tiny = 1e-12 * (1.0 + float(diag.max()))
    D = 0.5 * float(x @ (lin + g))                          # dual value: linᵀγ − ½γᵀKγ
    steps = 0
    for _ in range(max_iter or 10 * m + 100):
        best_gap, total, pick = -1.0, 0.0, None
        for idx, cap in blocks:
            gb, xb = g[idx], x[idx]
            G = max(float(gb.max()), 0.0)
            gap = cap * G - float(xb @ gb)
            total += gap
            if gap > best_gap:
                best_gap, pick = gap, (idx, cap, gb, xb, G)
        if total <= tol:
            break
        idx, cap, gb, xb, G = pick
        slack = cap - float(xb.sum())
        # up: the variable of largest gradient (the slack, gradient 0, when all are ≤ 0)
        ki = int(np.argmax(gb))
        i = -1 if gb[ki] <= 0.0 else int(idx[ki])
        # down: second-order choice among positive variables (and the slack) below G
        Kii = diag[i] if i >= 0 else 0.0
        Kij = K[i, idx] if i >= 0 else 0.0
        eta = np.maximum(Kii + diag[idx] - 2.0 * Kij, tiny)
        diff = G - gb
        score = np.where((xb > 0) & (diff > 0), diff * diff / eta, -1.0)
        kj = int(np.argmax(score))
        s_slack = G * G / max(Kii, tiny) if (i >= 0 and slack > 0) else -1.0
        if s_slack > score[kj]:
            j, t = -1, min(G / max(Kii, tiny), slack)
        elif score[kj] > 0:
            j = int(idx[kj])
            t = min(diff[kj] / eta[kj], xb[kj])
        else:
            break                                           # no ascent pair (round-off)
        if t <= 0:
            break
        steps += 1
        y = x.copy()
        if i >= 0:
            y[i] += t
        if j >= 0:
            y[j] = 0.0 if t >= xb[kj] else y[j] - t
        y = _face_solve(K, lin, y, block, caps, tiny)
        g_new = lin - K @ y
        D_new = 0.5 * float(y @ (lin + g_new))
        if D_new < D:
            break                                           # round-off: keep the better γ
        x, g = y, g_new
        if D_new - D <= 1e-15 * max(1.0, abs(D_new)):
            break                                           # no ascent beyond round-off
        D = D_new
    return x, steps


def _face_solve(K, lin, x, block, caps, ridge):
    """Move ``x`` to the maximiser of linᵀγ − ½γᵀKγ on its face: the support {γ_k > 0} free,
    every other γ_k = 0, the caps that are saturated held as equalities.  One KKT system on
    the support (K with ``ridge`` on its diagonal, as :func:`solve_dual_qp`); the step to its
    solution is clipped at the first bound (γ_k = 0, or an unsaturated cap) it crosses, which
    is then fixed and the system solved again (Nocedal & Wright, Alg. 16.3, without adding
    constraints: the pairwise steps of :func:`solve_dual_cd` do that)."""
    nb = len(caps)
    live = caps > 0
    sums = np.bincount(block, weights=x, minlength=nb)
    capped = live & (caps - sums <= 1e-12 * caps)
    for _ in range(len(x) + nb):
        F = np.flatnonzero(x > 0)
        if not len(F):
            break
        bF = block[F]
        A = np.flatnonzero(capped)
        nF, nA = len(F), len(A)
        E = (bF[None, :] == A[:, None]).astype(float)       # nA x nF: block sums held
        KKT = np.zeros((nF + nA, nF + nA))
        KKT[:nF, :nF] = K[np.ix_(F, F)]
        KKT[np.arange(nF), np.arange(nF)] += ridge
        KKT[:nF, nF:] = E.T
        KKT[nF:, :nF] = E
        rhs = np.concatenate([lin[F], caps[A]])
        try:
            sol = np.linalg.solve(KKT, rhs)
        except np.linalg.LinAlgError:
            sol = np.linalg.lstsq(KKT, rhs, rcond=None)[0]
        p = sol[:nF] - x[F]
        alpha, hit, hit_b = 1.0, -1, -1
        neg = np.flatnonzero(p < 0)
        if len(neg):
            r = x[F[neg]] / -p[neg]
            k = int(np.argmin(r))
            if r[k] < alpha:
                alpha, hit = float(r[k]), int(F[neg[k]])
        ep = np.bincount(bF, weights=p, minlength=nb)
        sums = np.bincount(block, weights=x, minlength=nb)
        for b in np.flatnonzero(live & ~capped & (ep > 0)):
            r = (caps[b] - sums[b]) / ep[b]
            if r < alpha:
                alpha, hit, hit_b = max(float(r), 0.0), -1, int(b)
        x[F] += alpha * p
        x[x < 0] = 0.0
        if hit_b >= 0:
            capped[hit_b] = True
        elif hit >= 0:
            x[hit] = 0.0
        else:
            break
    return x


SOLVERS = {"active-set": solve_dual_qp, "cd": solve_dual_cd}


# ------------------------------------------------------------------------- problem data
def _design(instances, bias):
    """Instance matrix with the constant bias column: CSR float64 when sparse, else dense."""
    X = instances
    if sp.issparse(X):
        Z = sp.hstack([X.astype(np.float64), np.full((X.shape[0], 1), bias)], format="csr")
        return Z
    n, d = X.shape
    nnz = 0
    for a in range(0, n, 8192):
        nnz += np.count_nonzero(X[a:a + 8192])
    if nnz <= 0.2 * n * d:
        blocks = [sp.csr_matrix(np.asarray(X[a:a + 8192], dtype=np.float64))
                  for a in range(0, n, 8192)]
        Z = sp.vstack(blocks, format="csr")
        return sp.hstack([Z, np.full((n, 1), bias)], format="csr")
    return np.hstack([np.asarray(X, dtype=np.float64), np.full((n, 1), bias)])


def _matvec(X, w):
    """X @ w in float64 without a float64 copy of a large float32 matrix."""
    if sp.issparse(X) or X.dtype == np.float64 or X.shape[0] <= 8192:
        return np.asarray(X @ w, dtype=np.float64).ravel()
    return np.concatenate([np.asarray(X[a:a + 8192], dtype=np.float64) @ w
                           for a in range(0, X.shape[0], 8192)])


class _Problem:
    """Stacked data of one fit: design matrix, labeled bags, graph nodes and edges."""

    def __init__(self, Z, offsets, n_labeled, y_pm, bag_edges, inst_edges, degree,
                 scaling="mean"):
        self.Z = Z
        self.Zt = Z.T.tocsr() if sp.issparse(Z) else Z.T      # Zᵀ·coef of every new cut
        self.N = Z.shape[0]
        self.offsets = offsets                        # all bags (labeled first)
        self.n = n_labeled
        self.hinge_scale = 1.0 / n_labeled
        self.y = y_pm                                 # ±1, labeled bags
        self.lab_offsets = offsets[:n_labeled + 1]
        n_bags = len(offsets) - 1
        # graph nodes: bag nodes 0..n_bags-1 then instance nodes n_bags + row
        src, dst, wn, deg_src, deg_dst = [], [], [], [], []
        self.n_bag_edges = len(bag_edges[0])
        self.n_inst_edges = len(inst_edges[0])
        for (s, d, w), base, n_nodes in ((bag_edges, 0, n_bags), (inst_edges, n_bags, self.N)):
            if len(s) == 0:
                continue
            w = np.asarray(w, float)
            if degree == "none":
                deg = np.ones(n_nodes)
            else:
                deg = np.bincount(s, weights=w, minlength=n_nodes)
                if degree == "total":
                    deg = deg + np.bincount(d, weights=w, minlength=n_nodes)
            r = 1.0 / np.sqrt(np.maximum(deg, 1.0))
            src.append(s + base)
            dst.append(d + base)
            wn.append(w / len(s))
            deg_src.append(r[s])
            deg_dst.append(r[d])
        self.has_graph = bool(src)
        # "sum" scaling = the mean problem with C·n and μ·|E| (precisions stay per bag / edge)
        n_edges = self.n_bag_edges + self.n_inst_edges
        self.C_factor = float(n_labeled) if scaling == "sum" else 1.0
        self.mu_factor = float(n_edges) if scaling == "sum" else 1.0
        if self.has_graph:
            self.e_src, self.e_dst = np.concatenate(src), np.concatenate(dst)
            self.e_w = np.concatenate(wn)
            if scaling == "sum":    # one normalisation |E_bag| + |E_inst| for both levels
                lens = [len(x) for x in src]
                self.e_w = np.concatenate([x * (L / n_edges) for x, L in zip(wn, lens)])
            self.r_src, self.r_dst = np.concatenate(deg_src), np.concatenate(deg_dst)
        self.n_bags = n_bags
        self.use_inst_nodes = self.n_inst_edges > 0
        self.n_nodes = n_bags + (self.N if self.use_inst_nodes else 0)

    # -- linearisation --------------------------------------------------------------
    def mean_linearisation(self):
        """Sparse (n_nodes x N) rows: each bag node -> its mean instance, instance -> itself."""
        return self._with_instance_nodes(averaging_matrix(self.offsets))

    def argmax_linearisation(self, s):
        _, arg = segment_arg(s, self.offsets, np.maximum)
        P = sp.csr_matrix((np.ones(self.n_bags), (np.arange(self.n_bags), arg)),
                          shape=(self.n_bags, self.N))
        return self._with_instance_nodes(P), arg

    def _with_instance_nodes(self, P):
        if self.use_inst_nodes:
            P = sp.vstack([P, sp.identity(self.N, format="csr")], format="csr")
        return P

    # -- node values ------------------------------------------------------------------
    def node_max(self, s):
        mx, arg = segment_arg(s, self.offsets, np.maximum)
        if self.use_inst_nodes:
            return np.concatenate([mx, s]), np.concatenate([arg, np.arange(self.N)])
        return mx, arg

    # -- the two most violated constraints (eqs. 4 and 5) ------------------------------
    def bag_constraint(self, s, lin_pos):
        """(row coefficients of g_c, b_c, violation b_c − wᵀg_c) of the most violated c."""
        k = self.hinge_scale
        mx, arg = segment_arg(s[:self.lab_offsets[-1]], self.lab_offsets, np.maximum)
        pos = self.y > 0
        score = np.where(pos, lin_pos @ s, mx)        # lin_pos rows: labeled bags
        c = (1.0 - self.y * score) > 0
        cp = (c & pos).astype(float) * k
        cn = c & ~pos
        coef = lin_pos.T @ cp - np.bincount(arg[cn], minlength=self.N) * k
        b = c.sum() * k
        viol = float(np.sum(np.where(c, 1.0 - self.y * score, 0.0)) * k)
        return coef, b, viol

    def edge_constraint(self, s, P):
        """(row coefficients of h_τ, violation wᵀh_τ) of the most violated τ (eq. 5)."""
        m, a = self.node_max(s)
        lval = P @ s
        p, q = self.e_src, self.e_dst
        d1 = self.r_src * m[p] - self.r_dst * lval[q]
        d2 = self.r_dst * m[q] - self.r_src * lval[p]
        one = d1 >= d2
        val = np.where(one, d1, d2)
        act = val > 0
        w = self.e_w * act
        # + r * x_argmax of the maximised end
        coef = np.bincount(np.where(one, a[p], a[q]),
                           weights=w * np.where(one, self.r_src, self.r_dst), minlength=self.N)
        # − r * linearised row(s) of the other end
        node_c = np.bincount(np.where(one, q, p), weights=w * np.where(one, self.r_dst, self.r_src),
                             minlength=self.n_nodes)
        coef -= P.T @ node_c
        return coef, float(np.sum(w * val))

    # -- true objective -----------------------------------------------------------------
    def objective(self, w, C, mu):
        s = self.scores(w)
        mx, _ = segment_arg(s, self.offsets, np.maximum)
        hinge = np.maximum(0.0, 1.0 - self.y * mx[:self.n]).sum() * self.hinge_scale
        J = 0.5 * w @ w + C * hinge
        if self.has_graph and mu > 0:
            m, _ = self.node_max(s)
            diff = self.r_src * m[self.e_src] - self.r_dst * m[self.e_dst]
            J += mu * np.sum(self.e_w * np.abs(diff))
        return float(J)

    def scores(self, w):
        return _matvec(self.Z, w)


def cutting_plane(prob, P, lin_pos, C, mu, eps1, eps2, max_iter=1000, callback=None,
                  solver="active-set", qp_gap=1e-6, first_cut=None):
    """Solve the CCCP subproblem (2) via the 1-slack form (3) with two working sets.

    ``P`` linearises every graph node (sparse rows over instances), ``lin_pos`` every labeled
    bag (only positive bags' rows are used).  Returns (w, ξ, ζ, info) with info holding the
    working sets ``G`` (constraint vectors, edge ones negated), ``lin``, ``block``,
    ``iterations`` and ``converged`` (False when ``max_iter`` rounds ran out before H1 and H2
    held; :class:`MILSD` then warns).  ``callback(w, ξ, ζ)`` is called after every QP solve
    (for tests).

    ``solver``: "cd" (:func:`solve_dual_cd`, stopped at a duality gap of
    ``qp_gap``·(C·ε1 + μ·ε2), so the returned (w, ξ + ε1, ζ + ε2) is within
    (1 + qp_gap)·(C·ε1 + μ·ε2) of the subproblem's optimum, as the exact solve is within
    C·ε1 + μ·ε2; K's new columns by one matrix-vector product each and w from the support)
    or "active-set" (:func:`solve_dual_qp`, exact up to round-off; K's column by one dot
    product per row and w from every cut, as first written).
    ``first_cut``: the (vector, b) of the bag constraint at w = 0 when already known (it
    depends on the data only; :class:`MILSD` shares it across a grid).
    """
    d = prob.Z.shape[1]
    use_graph = prob.has_graph and mu > 0
    qp = SOLVERS[solver]
    per_row = solver == "active-set"
    qp_tol = 1e-12 if per_row else qp_gap * (C * eps1 + (mu * eps2 if use_graph else 0.0))
    w = np.zeros(d)
    xi = zeta = 0.0
    size = 64                                          # working set, grown by doubling
    R, K = np.empty((size, d)), np.empty((size, size))
    lin, block = np.empty(size), np.empty(size, dtype=int)
    m = 0
    gamma = np.zeros(0)
    it, converged = 0, False
    for it in range(1, max_iter + 1):
        if it == 1 and first_cut is not None:
            vec1, b1, v1 = first_cut
            coef1 = None
        else:
            s = prob.scores(w)
            coef1, b1, v1 = prob.bag_constraint(s, lin_pos)
            vec1 = None
        H1 = v1 <= xi + eps1
        H2 = True
        if use_graph:
            if it == 1 and first_cut is not None:
                s = prob.scores(w)
            coef2, v2 = prob.edge_constraint(s, P)
            H2 = v2 <= zeta + eps2
        if H1 and H2:
            converged = True
            break
        new = []
        if not H1:
            new.append((prob.Zt @ coef1 if vec1 is None else vec1, b1, 0))
        if not H2:
            new.append((-(prob.Zt @ coef2), 0.0, 1))
        if m + len(new) > size:
            size *= 2
            R = np.concatenate([R, np.empty((size - m, d))])
            K2 = np.empty((size, size))
            K2[:m, :m] = K[:m, :m]
            K = K2
            lin = np.concatenate([lin, np.empty(size - m)])
            block = np.concatenate([block, np.empty(size - m, dtype=int)])
        if per_row:
            # K's new column by one dot product per row, as first written (bit for bit;
            # a matrix product rounds differently, see solve_dual_qp)
            for vec, bb, blk in new:
                kcol = np.array([R[i] @ vec for i in range(m)])
                K[m, :m] = kcol
                K[:m, m] = kcol
                K[m, m] = vec @ vec
                R[m], lin[m], block[m] = vec, bb, blk
                m += 1
        else:                    # K's new columns by one matrix-vector product each
            k = len(new)
            for j, (vec, bb, blk) in enumerate(new):
                R[m + j], lin[m + j], block[m + j] = vec, bb, blk
            for j in range(m, m + k):                  # the last write keeps K symmetric
                K[:m + k, j] = K[j, :m + k] = R[:m + k] @ R[j]
            m += k
        gamma = np.concatenate([gamma, np.zeros(len(new))])
        Km, lin_a, block_a = K[:m, :m], lin[:m], block[:m]
        gamma, _ = qp(Km, lin_a, block_a, np.array([C, mu]), gamma, tol=qp_tol)
        if per_row:
            w = R[:m].T @ gamma
        else:                                          # the support's cuts only
            sup = np.flatnonzero(gamma)
            w = gamma[sup] @ R[sup]
        grad = lin_a - Km @ gamma
        xi = max(0.0, float(grad[block_a == 0].max(initial=0.0)))
        zeta = max(0.0, float(grad[block_a == 1].max(initial=0.0)))
        if callback is not None:
            callback(w, xi, zeta)
    info = {"iterations": it, "converged": converged, "G": R[:m].copy(), "lin": lin[:m].copy(),
            "block": block[:m].copy(), "gamma": gamma}
    return w, xi, zeta, info


# ------------------------------------------------------------------------- shared setup
SETUP_CACHE = LRUCache(512 * 2**20, max_entries=8, sizeof=lambda entry: entry["nbytes"])
"""Per-process LRU of a fit's data-only setup, shared by the fits of an inner-CV grid while
reuse is on (:mod:`milbench.utils.cache`: the workflow's cells).

The design matrix (and its transpose), the graph with its degree normalisation, the round-1
linearisation (each bag's mean instance) and the first cut (the bag constraint at w = 0) depend
on the training bags, the unlabeled bags, their edges and the parameters but
``MILSD.cache_ignores`` (``graph``, ``degree``, ``scaling``, ``bias``), so the 11 × 4 grid of
config/paper/milsd.yaml builds them once per inner fold instead of 44 times.  Keyed by a
SHA-256 of the inputs' bytes (instances, offsets, labels, bag ids, edges) and those
parameters (:func:`~milbench.utils.cache.fit_key`): equal data in new arrays hits, data
differing in one value misses.  At most 8 entries (a grid cycles through 5 inner folds + the
refit) and 512 MiB.  Entries are never written by a fit, but for the solutions that ``warm_C``
starts from (one per C; they live as long as their entry).  ``with SETUP_CACHE.disabled():``
builds every fit's setup afresh (tests, benchmarks).
"""


def _hash_into(h, inst, offsets, bags):
    """Feed one container (instances, offsets, Bags or None) into the SHA-256 ``h``."""
    if sp.issparse(inst):
        c = inst.tocsr()
        parts = [np.asarray(c.shape), c.data, c.indices, c.indptr]
    else:
        a = np.asarray(inst)
        parts = [np.asarray(a.shape), np.asarray([a.dtype.num]), a]
    parts.append(np.asarray(offsets, np.int64))
    for a in parts:
        h.update(np.ascontiguousarray(a).data)
    if bags is not None:
        h.update("\0".join(bags.bag_ids.tolist()).encode())
        if bags.edges is not None and len(bags.edges):
            h.update(b"edges" + ",".join(map(str, bags.edges.columns)).encode())
            h.update(pd.util.hash_pandas_object(bags.edges, index=False).to_numpy().data)
    h.update(b"|")


def _nbytes(*objs):
    n = 0
    for o in objs:
        if sp.issparse(o):
            o = o.tocsr() if o.format not in ("csr", "csc") else o
            n += o.data.nbytes + o.indices.nbytes + o.indptr.nbytes
        elif isinstance(o, np.ndarray):
            n += o.nbytes
    return n


# ------------------------------------------------------------------------- estimator
class MILSD(ReusesFits, MILClassifier):
    """B-/I-/BI-MILSD (Zhang et al. (2011), NIPS, §2), linear, bias absorbed; see the module
    docstring.

    Parameters
    ----------
    C : hinge trade-off (on the average bag hinge).  mu : graph trade-off (μ = 0: MI-SVM).
    graph : "bag" (B-MILSD), "instance" (I-MILSD) or "both" (BI-MILSD).
    eps1, eps2 : cutting-plane precisions on the bag / edge constraint sets (ε1, ε2).
    tol : CCCP relative-decrease stopping threshold (δ).  max_cccp, max_cp : iteration caps.
    degree : "out" (paper), "total" or "none".  bias : value of the constant feature.
    scaling : "mean" (the default, the paper's C/n, μ/|E|) or "sum" (C, μ per bag / per edge).
        config/paper/milsd.yaml sets "sum": under "mean" the paper's grid C ∈ 2^[−5..5]
        underfits L2-normalised TF-IDF passages (webkb-student at ratio .5: C = 8 gives 55 %,
        C = 2048 84 %).
    solver : the cutting plane's restricted dual QP: "active-set" (default, kept bit for
        bit; :func:`solve_dual_qp`, exact up to round-off) or "cd" (:func:`solve_dual_cd`,
        SMO dual coordinate descent with exact face solves, stopped at a duality gap of
        ``qp_gap``·(C·ε1 + μ·ε2) or at round-off; the same optimum, less CPU; the setting of
        config/paper/milsd.yaml).
    qp_gap : the "cd" solver's gap, as a fraction of C·ε1 + μ·ε2 (unused by "active-set");
        the default 1e-6 is at the active set's own round-off on WebKB.
    warm_C : start CCCP at the solution this process found for the same data and every other
        parameter at the largest smaller C (GridSearchCV fits each μ column in ascending C),
        instead of at w = 0 with the mean linearisation.  **A fit then depends on the fits
        run before it** in the process: on which of them there were and in which order, so it
        is deterministic only for a sequential search (GridSearchCV with n_jobs=1; each joblib
        worker has its own store).  The solutions are kept in :data:`SETUP_CACHE`, so warm
        starts happen only while reuse is on (:func:`milbench.utils.cache.reuse`, the
        workflow's cells); a fit outside starts cold.  Off by default: it can move the local
        minimum CCCP reaches, hence the chosen grid point (benchmarks/methods/bench_milsd.py
        ``--grid`` measures the effect); the refit of the chosen point starts cold.
    random_state : unused (the algorithm is deterministic); accepted for pipeline uniformity.

    ``diagnostics_["converged"]`` = 1 when CCCP stopped by Table 1's rule (relative decrease
    < ``tol``, or the witnesses repeat) and every cutting plane reached ε1, ε2; 0 when
    ``max_cccp`` rounds or some round's ``max_cp`` cutting-plane iterations ran out (each with
    a ConvergenceWarning); ``n_iter`` = CCCP rounds, ``cp_converged`` the inner part alone.
    """

    # SETUP_CACHE's key: every parameter but these (milbench.utils.cache.ReusesFits); the
    # setup is built before CCCP from the data, graph, degree, scaling and bias
    cache_ignores = {
        "C": "weighs the hinge in CCCP's rounds, after the setup",
        "mu": "weighs the graph term in CCCP's rounds, after the setup",
        "eps1": "a cutting-plane precision, used after the setup",
        "eps2": "a cutting-plane precision, used after the setup",
        "tol": "CCCP's stopping threshold, used after the setup",
        "max_cccp": "CCCP's iteration cap, used after the setup",
        "max_cp": "the cutting plane's iteration cap, used after the setup",
        "solver": "solves the cutting plane's QPs, after the setup",
        "qp_gap": "the 'cd' solver's gap, used after the setup",
        "warm_C": "chooses CCCP's start, after the setup",
        "random_state": "unused (the algorithm is deterministic)",
    }

    _parameter_constraints = {
        "C": POSITIVE,
        "eps1": POSITIVE,
        "eps2": POSITIVE,
        "bias": POSITIVE,
        "mu": NON_NEGATIVE,
        "max_cccp": COUNT,
        "max_cp": COUNT,
        "qp_gap": POSITIVE,
        "warm_C": ["boolean"],
        "graph": options(GRAPHS),
        "tol": NON_NEGATIVE,
        "degree": options(DEGREES),
        "scaling": options(SCALINGS),
        "solver": options(SOLVERS),
        "random_state": ["random_state"],
    }

    def __init__(self, C=1.0, mu=0.1, graph="bag", eps1=1e-3, eps2=1e-3, tol=1e-3,
                 max_cccp=50, max_cp=2000, degree="out", bias=1.0, scaling="mean",
                 solver="active-set", qp_gap=1e-6, warm_C=False, random_state=None):
        self.C = C
        self.mu = mu
        self.graph = graph
        self.eps1 = eps1
        self.eps2 = eps2
        self.tol = tol
        self.max_cccp = max_cccp
        self.max_cp = max_cp
        self.degree = degree
        self.bias = bias
        self.scaling = scaling
        self.solver = solver
        self.qp_gap = qp_gap
        self.warm_C = warm_C
        self.random_state = random_state

    # -- input handling ------------------------------------------------------------------
    @staticmethod
    def _as_bags(X, y=None):
        """(instances, offsets, Bags-or-None, y01, classes): :func:`check_bags` with
        ``dtype=None``, so a Bags container's float32 matrix is not copied (the products
        convert it in blocks, :func:`_matvec`), plus the container whose ids and edges form the
        graph."""
        inst, off, y01, classes = check_bags(X, y, dtype=None)
        return inst, off, X if isinstance(X, Bags) else None, y01, classes

    def _graph(self, containers):
        """Bag- and instance-level edge arrays over the concatenation of ``containers``."""
        ids, frames, inst = [], [], ([], [], [])
        row0 = 0
        for c in containers:
            if c is not None and isinstance(c, Bags):
                ids.extend(c.bag_ids.tolist())
                if c.edges is not None and len(c.edges):
                    e = check_edges(c.edges)
                    frames.append(e[e["level"] == "bag"])
                    if self.graph in ("instance", "both"):
                        ei = e[e["level"] == "instance"]
                        s = ei["src"].astype(np.int64).to_numpy()
                        t = ei["dst"].astype(np.int64).to_numpy()
                        n = len(c.instances)
                        ok = (s >= 0) & (s < n) & (t >= 0) & (t < n) & (s != t)
                        inst[0].append(s[ok] + row0)
                        inst[1].append(t[ok] + row0)
                        inst[2].append(ei["weight"].to_numpy(float)[ok])
                row0 += len(c.instances)
            elif c is not None:
                ids.extend([None] * len(c))
                row0 += sum(len(b) for b in c)
        empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
        bag_e = empty
        if self.graph in ("bag", "both") and frames:
            e = pd.concat(frames, ignore_index=True)
            pos = {b: i for i, b in enumerate(ids) if b is not None}
            s = np.fromiter((pos.get(v, -1) for v in e["src"].astype(str)), np.int64, len(e))
            t = np.fromiter((pos.get(v, -1) for v in e["dst"].astype(str)), np.int64, len(e))
            ok = (s >= 0) & (t >= 0) & (s != t)
            s, t, w = s[ok], t[ok], e["weight"].to_numpy(float)[ok]
            # the same edge listed by two containers counts once
            _, first = np.unique(np.stack([s, t], 1), axis=0, return_index=True)
            first = np.sort(first)
            bag_e = (s[first], t[first], w[first])
        inst_e = empty
        if inst[0]:
            s, t, w = (np.concatenate(a) for a in inst)
            _, first = np.unique(np.stack([s, t], 1), axis=0, return_index=True)
            first = np.sort(first)
            inst_e = (s[first], t[first], w[first])
        return bag_e, inst_e

    # -- fit -----------------------------------------------------------------------------
    def fit(self, X, y, unlabeled=None):
        """Fit on labeled bags ``X`` (Bags with optional ``edges``, or a list of arrays).

        ``unlabeled``: optional Bags whose bags join the graph as unlabeled nodes
        (transductive B-MILSD, as the paper's WebKB runs); no labels of them are used.
        """
        validate_params(self)
        t0 = time.process_time()
        inst, offsets, bx, y01, classes = self._as_bags(X, y)
        self.classes_ = classes
        self.n_features_in_ = inst.shape[1]
        containers = [bx if bx is not None else X]
        parts = [(inst, offsets, bx)]
        if unlabeled is not None:
            u_inst, u_off, ub, _, _ = self._as_bags(unlabeled)
            if u_inst.shape[1] != inst.shape[1]:
                raise ValueError(f"unlabeled bags have {u_inst.shape[1]} features, X has "
                                 f"{inst.shape[1]}")
            containers.append(ub if ub is not None else unlabeled)
            parts.append((u_inst, u_off, ub))

        def key():
            h = hashlib.sha256(np.asarray(y01, np.int64).data)
            for part in parts:
                _hash_into(h, *part)
            return fit_key(self, h.hexdigest())

        def setup():
            if len(parts) > 1:
                inst_all = sp.vstack([inst, u_inst]) if sp.issparse(inst) else \
                    np.concatenate([np.asarray(inst), np.asarray(u_inst)])
                offsets_all = np.concatenate([offsets, offsets[-1] + u_off[1:]])
            else:
                inst_all, offsets_all = inst, offsets
            bag_e, inst_e = self._graph(containers)
            prob = _Problem(_design(inst_all, float(self.bias)),
                            np.asarray(offsets_all, np.int64), len(offsets) - 1,
                            np.where(y01 > 0, 1.0, -1.0), bag_e, inst_e, self.degree,
                            self.scaling)
            P0 = prob.mean_linearisation()
            coef1, b1, v1 = prob.bag_constraint(np.zeros(prob.N), P0[:prob.n])
            vec1 = prob.Zt @ coef1
            return {"prob": prob, "P0": P0, "first_cut": (vec1, b1, v1), "warm": {},
                    "nbytes": 2 * _nbytes(prob.Z) + _nbytes(P0, vec1)}

        entry = SETUP_CACHE.get(key() if SETUP_CACHE.active else None, setup)
        prob = entry["prob"]
        mu = float(self.mu)
        if mu > 0 and prob.n_bag_edges + prob.n_inst_edges == 0:
            warnings.warn("MILSD: mu > 0 but no graph edges among the bags given to fit "
                          "(plain list, Bags without edges, or Bags.subset dropped them); "
                          "fitting the MI-SVM special case", UserWarning, stacklevel=2)
        C = float(self.C) * prob.C_factor
        mu = mu * prob.mu_factor
        d = prob.Z.shape[1]
        w_best = np.zeros(d)
        J_prev = J_best = prob.objective(w_best, C, mu)
        P = entry["P0"]
        first_cut = entry["first_cut"]
        witnesses = None
        # solutions of the fits with every parameter but C alike (a fresh entry has none)
        warm = entry["warm"].setdefault(params_key(self, ("C",)), {}) if self.warm_C else {}
        below = [c for c in warm if c < float(self.C)]
        self.warm_started_from_ = max(below) if below else None
        if below:                        # CCCP from the neighbouring C's solution
            w0 = warm[max(below)]
            J0 = prob.objective(w0, C, mu)
            if J0 < J_best:
                w_best, J_prev, J_best = w0, J0, J0
            P, witnesses = prob.argmax_linearisation(prob.scores(w0))
            first_cut = None
        history, cp_iters = [], []
        rounds, settled, cp_converged = 0, False, True
        for rounds in range(1, int(self.max_cccp) + 1):
            lin_pos = P[:prob.n]
            w, xi, zeta, info = cutting_plane(prob, P, lin_pos, C, mu, self.eps1, self.eps2,
                                              max_iter=int(self.max_cp), solver=self.solver,
                                              qp_gap=float(self.qp_gap),
                                              first_cut=first_cut if rounds == 1 else None)
            J = prob.objective(w, C, mu)
            cp_iters.append(info["iterations"])
            cp_converged &= info["converged"]
            history.append({"objective": J, "cp_iterations": info["iterations"],
                            "surrogate": 0.5 * w @ w + C * xi + mu * zeta,
                            "n_constraints_bag": int((info["block"] == 0).sum()),
                            "n_constraints_edge": int((info["block"] == 1).sum())})
            if J < J_best:
                w_best, J_best = w, J
            s = prob.scores(w)
            P, new_wit = prob.argmax_linearisation(s)
            decrease = (J_prev - J) / max(abs(J_prev), 1e-300)
            repeated = witnesses is not None and np.array_equal(new_wit, witnesses)
            if repeated or decrease < self.tol:
                settled = True
                break
            witnesses, J_prev = new_wit, J
        if not settled:
            warn_cap(self, "max_cccp", self.max_cccp, f"CCCP rounds with the objective still "
                     f"decreasing by more than tol={self.tol}")
        if not cp_converged:
            warn_cap(self, "max_cp", self.max_cp, f"cutting-plane iterations in some CCCP round "
                     f"before reaching precisions eps1={self.eps1}, eps2={self.eps2}")
        if self.warm_C:
            warm[float(self.C)] = w_best
        self.coef_ = w_best[:-1].copy()
        self.intercept_ = float(w_best[-1] * self.bias)
        self.history_ = history
        self.diagnostics_ = {
            "n_iter": int(rounds), "converged": int(settled and cp_converged),
            "cp_converged": int(cp_converged), "cp_iterations": int(sum(cp_iters)),
            "cp_iterations_max": int(max(cp_iters)), "objective": float(J_best),
            "n_bag_edges": int(prob.n_bag_edges), "n_instance_edges": int(prob.n_inst_edges),
            "n_constraints_bag": history[-1]["n_constraints_bag"],
            "n_constraints_edge": history[-1]["n_constraints_edge"],
            "cpu_seconds": float(time.process_time() - t0),
        }
        return self

    # -- predict -------------------------------------------------------------------------
    def instance_scores(self, X):
        inst, offsets, _, _, _ = self._as_bags(X)
        if inst.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {inst.shape[1]} features; fitted with {self.n_features_in_}")
        return _matvec(inst, self.coef_) + self.intercept_, offsets

    def decision_function(self, X):
        """Bag scores f(B) = max_j wᵀx_j + b (> 0: positive)."""
        s, offsets = self.instance_scores(X)
        return np.maximum.reduceat(s, offsets[:-1])

    def objective(self, X, y, unlabeled=None):
        """J(w) of the fitted w on (X, y) with the graph of X (and ``unlabeled``)."""
        inst, offsets, bx, y01, _ = self._as_bags(X, y)
        containers = [bx if bx is not None else X]
        if unlabeled is not None:
            u_inst, u_off, ub, _, _ = self._as_bags(unlabeled)
            inst = np.concatenate([inst, u_inst])
            offsets = np.concatenate([offsets, offsets[-1] + u_off[1:]])
            containers.append(ub if ub is not None else unlabeled)
        bag_e, inst_e = self._graph(containers)
        prob = _Problem(_design(inst, float(self.bias)), np.asarray(offsets, np.int64),
                        len(y01), np.where(y01 > 0, 1.0, -1.0), bag_e, inst_e, self.degree,
                        self.scaling)
        return prob.objective(np.concatenate([self.coef_, [self.intercept_ / self.bias]]),
                              float(self.C) * prob.C_factor, float(self.mu) * prob.mu_factor)
