"""MILSD: multiple-instance learning on structured data (Zhang, Liu, Si, Zhang & Lawrence,
NIPS 2011; milsd.txt §2) [milsd] — B-MILSD, I-MILSD and BI-MILSD.

Objective (milsd.txt problem (1), linear classifier, bias absorbed as a constant feature)::

    J(w) = ½‖w‖² + C/n Σ_i max{0, 1 − Y_i f(B_i)}
               + μ/|E| Σ_{(p,q)∈E} w(p,q) |f(p)/√d(p) − f(q)/√d(q)|,   f(B) = max_j wᵀB_j

with the graph on bags (``graph="bag"``, B-MILSD: f(p) is the bag score), on instances
(``graph="instance"``, I-MILSD: f(p) = wᵀx_p) or both (``graph="both"``, BI-MILSD: the two
terms added, each normalised by its own edge count |E_bag|, |E_inst|).  d(p) is the weighted
out-degree of p in its graph ("outgoing degree", as the paper, after Zhou et al. 2005).

Optimisation (milsd.txt §2.3, Table 1):

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
  primal active-set method (warm-started, exact up to round-off).

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
* Graph edges come from ``X.edges`` (a :class:`~milbench.bags.Bags` with an edges DataFrame,
  see :mod:`milbench.graphs`); a plain list of bags has no graph and gives MI-SVM (μ ignored).
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
(cccp_rounds, cp_iterations, cp_iterations_max, objective, n_bag_edges, n_instance_edges,
n_constraints_bag, n_constraints_edge), ``history_`` (per round: objective, cp iterations).
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp

from ..bags import Bags, BagError, check_bags, labels_to_01, stack
from ..base import COUNT, NON_NEGATIVE, POSITIVE, MILClassifier, validate_params

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
    Exact up to round-off; returns (γ, iterations).
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


def _segment_argmax(s, offsets):
    """(max, global row of the first argmax) of every segment of s."""
    mx = np.maximum.reduceat(s, offsets[:-1])
    sizes = np.diff(offsets)
    hit = np.flatnonzero(s >= np.repeat(mx, sizes))
    seg = np.searchsorted(offsets, hit, side="right") - 1
    first = np.ones(len(hit), dtype=bool)
    first[1:] = seg[1:] != seg[:-1]
    arg = np.empty(len(sizes), dtype=np.int64)
    arg[seg[first]] = hit[first]
    return mx, arg


class _Problem:
    """Stacked data of one fit: design matrix, labeled bags, graph nodes and edges."""

    def __init__(self, Z, offsets, n_labeled, y_pm, bag_edges, inst_edges, degree,
                 scaling="mean"):
        self.Z = Z
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
        sizes = np.diff(self.offsets)
        rows = np.repeat(np.arange(self.n_bags), sizes)
        P = sp.csr_matrix((np.repeat(1.0 / sizes, sizes), (rows, np.arange(self.N))),
                          shape=(self.n_bags, self.N))
        return self._with_instance_nodes(P)

    def argmax_linearisation(self, s):
        _, arg = _segment_argmax(s, self.offsets)
        P = sp.csr_matrix((np.ones(self.n_bags), (np.arange(self.n_bags), arg)),
                          shape=(self.n_bags, self.N))
        return self._with_instance_nodes(P), arg

    def _with_instance_nodes(self, P):
        if self.use_inst_nodes:
            P = sp.vstack([P, sp.identity(self.N, format="csr")], format="csr")
        return P

    # -- node values ------------------------------------------------------------------
    def node_max(self, s):
        mx, arg = _segment_argmax(s, self.offsets)
        if self.use_inst_nodes:
            return np.concatenate([mx, s]), np.concatenate([arg, np.arange(self.N)])
        return mx, arg

    # -- the two most violated constraints (eqs. 4 and 5) ------------------------------
    def bag_constraint(self, s, lin_pos):
        """(row coefficients of g_c, b_c, violation b_c − wᵀg_c) of the most violated c."""
        k = self.hinge_scale
        mx, arg = _segment_argmax(s[:self.lab_offsets[-1]], self.lab_offsets)
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
        mx, _ = _segment_argmax(s, self.offsets)
        hinge = np.maximum(0.0, 1.0 - self.y * mx[:self.n]).sum() * self.hinge_scale
        J = 0.5 * w @ w + C * hinge
        if self.has_graph and mu > 0:
            m, _ = self.node_max(s)
            diff = self.r_src * m[self.e_src] - self.r_dst * m[self.e_dst]
            J += mu * np.sum(self.e_w * np.abs(diff))
        return float(J)

    def scores(self, w):
        return _matvec(self.Z, w)


def cutting_plane(prob, P, lin_pos, C, mu, eps1, eps2, max_iter=1000, callback=None):
    """Solve the CCCP subproblem (2) via the 1-slack form (3) with two working sets.

    ``P`` linearises every graph node (sparse rows over instances), ``lin_pos`` every labeled
    bag (only positive bags' rows are used).  Returns (w, ξ, ζ, info) with info holding the
    working sets ``G`` (constraint vectors, edge ones negated), ``lin``, ``block`` and
    ``iterations``.  ``callback(w, ξ, ζ)`` is called after every QP solve (for tests).
    """
    d = prob.Z.shape[1]
    use_graph = prob.has_graph and mu > 0
    w = np.zeros(d)
    xi = zeta = 0.0
    rows, lin, block = [], [], []
    K = np.zeros((0, 0))
    gamma = np.zeros(0)
    it = 0
    for it in range(1, max_iter + 1):
        s = prob.scores(w)
        coef1, b1, v1 = prob.bag_constraint(s, lin_pos)
        H1 = v1 <= xi + eps1
        H2 = True
        if use_graph:
            coef2, v2 = prob.edge_constraint(s, P)
            H2 = v2 <= zeta + eps2
        if H1 and H2:
            break
        new = []
        if not H1:
            new.append((np.asarray(prob.Z.T @ coef1).ravel(), b1, 0))
        if not H2:
            new.append((-np.asarray(prob.Z.T @ coef2).ravel(), 0.0, 1))
        for vec, bb, blk in new:
            kcol = np.array([r @ vec for r in rows] + [vec @ vec])
            m = len(rows)
            K2 = np.zeros((m + 1, m + 1))
            K2[:m, :m] = K
            K2[m, :] = kcol
            K2[:, m] = kcol
            K = K2
            rows.append(vec)
            lin.append(bb)
            block.append(blk)
            gamma = np.append(gamma, 0.0)
        lin_a, block_a = np.array(lin), np.array(block)
        gamma, _ = solve_dual_qp(K, lin_a, block_a, np.array([C, mu]), gamma)
        w = np.asarray(rows).T @ gamma
        grad = lin_a - K @ gamma
        xi = max(0.0, float(grad[block_a == 0].max(initial=0.0)))
        zeta = max(0.0, float(grad[block_a == 1].max(initial=0.0)))
        if callback is not None:
            callback(w, xi, zeta)
    else:
        warnings.warn(f"MILSD cutting plane stopped at max_iter={max_iter} before reaching "
                      f"precisions eps1={eps1}, eps2={eps2}", RuntimeWarning, stacklevel=3)
    info = {"iterations": it, "G": np.asarray(rows).reshape(-1, d), "lin": np.array(lin),
            "block": np.array(block, dtype=int), "gamma": gamma}
    return w, xi, zeta, info


# ------------------------------------------------------------------------- estimator
class MILSD(MILClassifier):
    """B-/I-/BI-MILSD (milsd.txt §2), linear, bias absorbed; see the module docstring.

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
    random_state : unused (the algorithm is deterministic); accepted for pipeline uniformity.
    """

    _parameter_constraints = {
        "C": POSITIVE,
        "eps1": POSITIVE,
        "eps2": POSITIVE,
        "bias": POSITIVE,
        "mu": NON_NEGATIVE,
        "max_cccp": COUNT,
        "max_cp": COUNT,
    }

    def __init__(self, C=1.0, mu=0.1, graph="bag", eps1=1e-3, eps2=1e-3, tol=1e-3,
                 max_cccp=50, max_cp=2000, degree="out", bias=1.0, scaling="mean",
                 random_state=None):
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
        self.random_state = random_state

    # -- input handling ------------------------------------------------------------------
    @staticmethod
    def _as_bags(X, y=None):
        """(instances, offsets, Bags-or-None, y01, classes) without copying a Bags' matrix."""
        if isinstance(X, Bags):
            if y is None:
                return X.instances, X.offsets, X, None, None
            if len(y) != len(X):
                raise BagError(f"{len(X)} bags but {len(y)} labels")
            y01, classes = labels_to_01(y)
            if len(classes) < 2:
                raise BagError(f"training data has a single class {classes.tolist()}; need both")
            return X.instances, X.offsets, X, y01, classes
        bags, y01, classes = check_bags(X, y)
        inst, off = stack(bags)
        return inst, off, None, y01, classes

    def _check_params(self):
        if self.graph not in GRAPHS:
            raise ValueError(f"graph must be one of {GRAPHS}, got {self.graph!r}")
        if self.scaling not in SCALINGS:
            raise ValueError(f"scaling must be one of {SCALINGS}, got {self.scaling!r}")
        if self.degree not in DEGREES:
            raise ValueError(f"degree must be one of {DEGREES}, got {self.degree!r}")

    def _graph(self, containers):
        """Bag- and instance-level edge arrays over the concatenation of ``containers``."""
        from ..edges import check_edges
        import pandas as pd
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
        self._check_params()
        t0 = time.process_time()
        inst, offsets, bx, y01, classes = self._as_bags(X, y)
        self.classes_ = classes
        self.n_features_in_ = inst.shape[1]
        containers = [bx if bx is not None else X]
        if unlabeled is not None:
            u_inst, u_off, ub, _, _ = self._as_bags(unlabeled)
            if u_inst.shape[1] != inst.shape[1]:
                raise ValueError(f"unlabeled bags have {u_inst.shape[1]} features, X has "
                                 f"{inst.shape[1]}")
            inst_all = np.concatenate([np.asarray(inst), np.asarray(u_inst)]) \
                if not sp.issparse(inst) else sp.vstack([inst, u_inst])
            offsets_all = np.concatenate([offsets, offsets[-1] + u_off[1:]])
            containers.append(ub if ub is not None else unlabeled)
        else:
            inst_all, offsets_all = inst, offsets
        bag_e, inst_e = self._graph(containers)
        mu = float(self.mu)
        if mu > 0 and len(bag_e[0]) + len(inst_e[0]) == 0:
            warnings.warn("MILSD: mu > 0 but no graph edges among the bags given to fit "
                          "(plain list, Bags without edges, or Bags.subset dropped them); "
                          "fitting the MI-SVM special case", UserWarning, stacklevel=2)
        prob = _Problem(_design(inst_all, float(self.bias)), np.asarray(offsets_all, np.int64),
                        len(offsets) - 1, np.where(y01 > 0, 1.0, -1.0), bag_e, inst_e,
                        self.degree, self.scaling)
        C = float(self.C) * prob.C_factor
        mu = mu * prob.mu_factor
        d = prob.Z.shape[1]
        w_best = np.zeros(d)
        J_prev = J_best = prob.objective(w_best, C, mu)
        P = prob.mean_linearisation()
        witnesses = None
        history, cp_iters = [], []
        rounds = 0
        for rounds in range(1, int(self.max_cccp) + 1):
            lin_pos = P[:prob.n]
            w, xi, zeta, info = cutting_plane(prob, P, lin_pos, C, mu, self.eps1, self.eps2,
                                              max_iter=int(self.max_cp))
            J = prob.objective(w, C, mu)
            cp_iters.append(info["iterations"])
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
                break
            witnesses, J_prev = new_wit, J
        self.coef_ = w_best[:-1].copy()
        self.intercept_ = float(w_best[-1] * self.bias)
        self.history_ = history
        self.diagnostics_ = {
            "cccp_rounds": int(rounds), "cp_iterations": int(sum(cp_iters)),
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
