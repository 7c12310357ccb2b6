"""MIORDM — Multi-Instance Optimal Representative Distribution Margin machine (Luan et al. 2020)
[miordm].

Luan, Luo, Zhuge & Hou, IEEE Access 8 (2020), §III, Algorithm 1:

1. every bag's representative starts as its mean instance (Eq. 13);
2. with the representatives fixed, solve the kernel ODM dual (Eq. 27) by dual coordinate
   descent (Eq. 31; :func:`milbench.classifiers.odm.solve_odm_dual`);
3. score every training instance, f(s) = Σ_i (α_i − β_i) y_i K(x_i, s), and make each bag's
   highest-scoring instance its new representative (Eq. 32 — the same rule for positive and
   negative bags: the most positive / the least negative instance);
4. repeat until the representatives are unchanged.

A bag's score is its highest instance score (Eq. 1), used for AUROC; the label is its sign.
The RBF width defaults to γ = 1/d (§V-B, "the reciprocal of the dimension").

Departures / readings of the extraction:
* Solver: Eq. 31 coordinate descent over the pairs (α_i, β_i) in random order, each sweep
  followed by an exact Newton solve on the current face (odm.solve_odm_dual) — the same
  optimum in far fewer sweeps (docs/performance.md); ``newton_every=0`` gives the pure
  method.  The dual is solved to a projected-gradient tolerance ``tol``.
* No bias term, as in the paper (f(s) = wᵀφ(s)); with ``kernel="linear"`` the separating
  hyperplane therefore passes through the origin.
* The paper restarts every round from δ = 0 (Algorithm 1, δ^init = 0); we warm-start each
  round from the previous round's δ.  The dual is strictly convex (c > 0) so the solution is
  the same; only the number of sweeps drops.
* Besides "representatives unchanged" we stop when a set of representatives seen in an
  earlier round comes back (a cycle; the paper does not discuss it) or after ``max_rounds``.
  In both cases the model of the last round solved is kept (``keep="best"``: the round with
  the lowest Eq. 8 objective instead).  The alternation need not settle: on Elephant and Fox
  50–100 of 160 representatives keep changing and the 50-round cap is reached (accuracy is
  the same with keep="best" or a 10-round cap, within ±0.02 over 10 splits).
* The extraction's Lagrangian (Eq. 19) repeats ξ in the β term — a typo; the dual (Eq. 27)
  used here is re-derived in odm.py from the primal (Eq. 18).

Speed, not result: from the second round on the representatives R are training instances, so
every round needs only blocks of the kernel of Z = [X; bag means] (the means are round 1's R):
K(R, R) (Eq. 27) and K(X, R_sv) (Eq. 32).  Three ways to get them, the same model to round-off:
* sparse input (at most ``odm.SPARSE_MAX_DENSITY`` = 5 % of the instances' entries non-zero, e.g.
  the WebKB TF-IDF passages, ~1 %; below the density where CSR products stop beating dense
  BLAS, docs/performance.md): Z is built as CSR and
  the products go through it (odm.kernel_matrix; the RBF by ‖a‖² + ‖b‖² − 2aᵀb as for dense
  input) and, when its lower triangle fits
  ``PACKED_KERNEL_MAX_BYTES`` (150 MiB, N + n_bags ≤ 6,270; at most a fifth of the cache's
  bound) and the memory left, the whole kernel is computed once, stored packed in float64
  (odm.packed_kernel; half of the square) and kept in :data:`milbench.utils.cache.CACHE` —
  every candidate of an inner-CV grid (λ, θ, μ leave the kernel unchanged) on the same fold
  reuses it: K(R, R) is gathered from it and K(X, R_sv)·coef is one symmetric packed
  matrix-vector product (BLAS dspmv).  The cache's 768 MiB hold the five inner folds' kernels
  (GridSearchCV runs every fold of a candidate before the next one, so fewer would never
  hit); a larger kernel (the refit on WebKB faculty) takes per-round CSR products instead;
* dense input, N + n_bags ≤ 2048 (``FULL_KERNEL_MAX_BYTES``, 32 MiB) and the memory left: the
  square kernel once per training set, cached likewise;
* otherwise every round computes its own blocks (on musk2, 5177 rows, one full dense kernel
  costs more than a whole fit's per-round blocks).
Memory (:func:`kernel_room`): the per-round blocks — K(R, R), H and the solver's copies (3 of
n × n) and K(X, R_sv) (N × n) — must fit :func:`memory_limit`, else a
:class:`~milbench.classifiers.odm.MemoryLimitError` names the largest bag; the cached kernel
takes only the room left (the packed one with its 2 × 64 MiB of build blocks).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from milbench.base import COUNT, MILClassifier, options, resolve_gamma, warn_cap
from milbench.classifiers._kernels import as_sparse_if_sparse, kernel_matrix, sq_norms
from milbench.classifiers._representatives import (
    instances_and_means,
    kernel_blocks,
    kernel_room,
    representatives_stop,
)
from milbench.classifiers.odm import ODM_CONSTRAINTS, odm_c, primal_objective, solve_odm_dual
from milbench.utils.segments import segment_argmax


class MIORDM(MILClassifier):
    """MIORDM (Luan et al. (2020), IEEE Access, Algorithm 1).

    lam, theta, mu : λ, θ, μ of Eq. 18 (λ ∈ {2⁷..2¹⁰}, θ, μ ∈ {0.6, 0.7, 0.8} in §V-B).
    kernel : "rbf" | "linear";  gamma : RBF width (None → 1/d).
    max_rounds : cap on representative re-selection rounds.
    tol, max_sweeps : stopping rule of the dual coordinate descent inside every round.
    newton_every : finish the coordinate descent's current face with an exact Newton solve
        after every that many sweeps (0 = pure Eq. 31 DCD; see odm.solve_odm_dual).
    keep : "last" (the paper: the model of the last round solved) or "best" (the round with
        the lowest Eq. 8 objective, bag margins taken at the max instance score — a safeguard
        when the alternation oscillates instead of settling, as it does on Elephant/Fox).
    random_state : seeds the random coordinate order of the solver (the optimum of every
        round is unique, so the seed only moves results within ``tol``).

    Fitted: ``representatives_`` (n_bags, d) of the last round, ``rep_index_`` (row of each
    representative in the stacked training instances; −1 while they are bag means),
    ``alpha_``, ``beta_``, ``dual_coef_`` (= y ∘ (α − β)), ``history_`` (Eq. 8 objective of
    every round, bag margins at the max instance score), ``diagnostics_`` (n_iter = rounds,
    converged, sweeps, objective = Eq. 18 primal of the kept round's ODM, mil_objective = its
    Eq. 8 value, dual gap, KKT violation, stop reason code 0 converged / 1 cycle / 2 max_rounds
    reached, dual_converged, n_support).
    ``converged`` = 1 when the representatives stop changing (Algorithm 1's rule) or repeat an
    earlier round's (a cycle: the alternation can only repeat itself) *and* every round's dual
    reached ``tol`` (``dual_converged``); 0 when ``max_rounds`` rounds or some round's
    ``max_sweeps`` sweeps ran out (each with a ConvergenceWarning).
    """

    STOP_REASONS = {"converged": 0, "cycle": 1, "max_iter": 2}

    _parameter_constraints = {
        **ODM_CONSTRAINTS,
        "max_rounds": COUNT,
        "keep": options(("last", "best")),
    }

    def __init__(self, lam=256.0, theta=0.7, mu=0.7, kernel="rbf", gamma=None, max_rounds=50,
                 tol=1e-6, max_sweeps=2000, newton_every=1, keep="last", random_state=None):
        self.lam = lam
        self.theta = theta
        self.mu = mu
        self.kernel = kernel
        self.gamma = gamma
        self.max_rounds = max_rounds
        self.tol = tol
        self.max_sweeps = max_sweeps
        self.newton_every = newton_every
        self.keep = keep
        self.random_state = random_state

    def _fit(self, X, offsets, y01):
        y = np.where(np.asarray(y01) > 0, 1.0, -1.0)
        n, N = len(y), len(X)
        # K, H and the solver's blocks of it, and the instance-to-representative kernel
        room = kernel_room("MIORDM", 3, offsets)
        self.gamma_ = resolve_gamma(self.gamma, X.shape[1])
        c = odm_c(n, self.lam, self.theta)
        yy = np.outer(y, y)
        rng = np.random.default_rng(self.random_state)

        Z, z_norms = instances_and_means(X, offsets)    # instances, then the Eq. 13 means
        gram, instance_scores = kernel_blocks(Z, z_norms, self.kernel, self.gamma_, room, N)

        rows = N + np.arange(n)                         # rows of Z holding the representatives
        rep_idx = np.full(n, -1)
        seen = set()
        alpha = beta = None
        total_sweeps = rounds = 0
        dual_converged = True
        history = []
        best = (np.inf,)
        for _ in range(int(self.max_rounds)):
            rounds += 1
            H = gram(rows, rows) * yy
            res = solve_odm_dual(H, c, self.mu, self.theta, alpha, beta, tol=self.tol,
                                 max_sweeps=self.max_sweeps, random_state=rng,
                                 newton_every=self.newton_every)
            alpha, beta = res.alpha, res.beta
            total_sweeps += res.sweeps
            dual_converged &= res.converged
            coef = y * res.u
            sv = np.flatnonzero(coef)
            scores = instance_scores(rows[sv], coef[sv])
            new_idx = segment_argmax(scores, offsets)   # Eq. 32
            # Eq. 8 (bag margins from the max instance score) at this round's w
            bag_margin = y * scores[new_idx]
            xi = np.maximum(0.0, 1.0 - self.theta - bag_margin)
            eps = np.maximum(0.0, bag_margin - 1.0 - self.theta)
            mil_obj = float(0.5 * res.u @ (H @ res.u) + self.lam / (n * (1 - self.theta) ** 2)
                            * (xi @ xi + self.mu * eps @ eps))
            history.append(mil_obj)
            if mil_obj < best[0] or self.keep == "last":
                best = (mil_obj, rows, rep_idx, alpha, beta, coef, H, res)
            stop = representatives_stop(new_idx, rep_idx, seen, rounds, self.max_rounds)
            if stop:
                break
            rows = rep_idx = new_idx

        if stop == "max_iter":
            warn_cap(self, "max_rounds", self.max_rounds, "rounds without the representatives "
                     "settling")
        if not dual_converged:
            warn_cap(self, "max_sweeps", self.max_sweeps, "coordinate-descent sweeps in some "
                     f"round with the ODM dual's KKT violation above tol={self.tol}")
        mil_obj, rows, rep_idx, alpha, beta, coef, H, res = best
        R = Z[rows].toarray() if sp.issparse(Z) else Z[rows]
        self.history_ = history
        self.representatives_ = R
        self.rep_index_ = rep_idx
        self.alpha_, self.beta_ = alpha, beta
        self.dual_coef_ = coef
        primal = primal_objective(H, res.u, self.lam, self.theta, self.mu)
        sv = np.flatnonzero(coef)
        self.diagnostics_ = {
            "n_iter": rounds,
            "converged": int(stop != "max_iter" and dual_converged),
            "sweeps": int(total_sweeps),
            "objective": primal,
            "mil_objective": mil_obj,
            "dual_gap": float(primal + res.objective),
            "kkt_violation": res.violation,
            "stop": self.STOP_REASONS[stop],
            "dual_converged": int(dual_converged),
            "n_support": int(len(sv)),
        }
        self._sv = R[sv]
        self._sv_coef = coef[sv]
        self._sv_norms = sq_norms(self._sv)

    def instance_scores(self, X):
        """f(s) = Σ_i (α_i − β_i) y_i K(x_i, s) for a stacked (N, d) instance matrix."""
        X = np.asarray(X, dtype=float)
        if len(self._sv_coef) == 0:
            return np.zeros(len(X))
        return kernel_matrix(as_sparse_if_sparse(X), as_sparse_if_sparse(self._sv), self.kernel,
                             self.gamma_, sq_norms(X), self._sv_norms) @ self._sv_coef

    def _decision(self, X, offsets):
        return np.maximum.reduceat(self.instance_scores(X), offsets[:-1])
