"""MILDM — multi-instance learning with discriminative bag mapping (Wu et al. 2018) [mildm]
(aMILGDM).

Wu, Pan, Zhu, Zhang & Wu, IEEE TKDE 30(6) 2018, as used by Luan et al. (2020), IEEE Access, §V-B
("aMILGDM": the instance pool is *all* training instances, global discriminative mapping, then
kNN).

1. Instance pool P = every instance of every training bag.
2. Bag mapping: bag B ↦ φ(B) ∈ R^{|P|}, φ_k(B) = max_{x∈B} exp(−γ‖x − p_k‖²)
   = exp(−γ · min_{x∈B} ‖x − p_k‖²) — the similarity of B to pool instance p_k.
3. Discriminative instance pool (DIP): each pool instance is scored by how well its column
   f_k = (φ_k(B_1), …, φ_k(B_n)) separates the training bags under pairwise label constraints
   (the must-link / cannot-link design of CVFS-MIL, Wu et al. (2014), §3):
       h(p_k) = ½ Σ_{i,j} W_ij (f_ki − f_kj)² = f_kᵀ L f_k,   L = D − W,
       W_ij = −1/|M| if y_i = y_j (must-link pairs M),  +1/|C| if y_i ≠ y_j (cannot-link C),
   i.e. same-label bags should look alike and different-label bags unlike.  The top ``m`` pool
   instances by h form the DIP.  (The global criterion; the paper's local variant MILLDM,
   which restricts W to nearest-neighbour bag pairs, is not implemented.)
4. Every bag is mapped onto the DIP, φ_DIP(B) ∈ R^m, and a single-instance classifier is
   trained on the mapped training bags — kNN as in MIORDM's comparison (``estimator="knn"``);
   any :func:`milbench.utils.learners.make_estimator` name (e.g. "svm") works.

Choices (stated, not hidden): γ = None means 1/d; ``m`` is a fraction of the pool or a count
(n_from_fraction); the DIP is chosen once by the global score (the TKDE paper's optimisation
of the pool selection reduces to this top-m rule for the global criterion).  The bag score is
the classifier's ``decision_function`` when it has one, else P(positive) − ½.

Speed, not result: φ over the whole pool and the scores h depend on the training bags and γ
only, so an inner-CV grid over ``m`` computes them once per fold (:data:`milbench.utils.cache.
CACHE`); on sparse input (the WebKB TF-IDF passages, ~1 % non-zero) the products go through
CSR.  The same model to round-off (benchmarks/methods/bench_miordm.py --baselines).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from milbench.base import (
    ESTIMATOR,
    ESTIMATOR_PARAMS,
    FRACTION_OR_COUNT,
    GAMMA,
    MILClassifier,
    n_from_fraction,
    resolve_gamma,
)
from milbench.classifiers._blocks import block_plan
from milbench.classifiers._kernels import (
    SPARSE_PRODUCT_FACTOR,
    as_sparse_if_sparse,
    kernel_matrix,
    sq_norms,
)
from milbench.utils.cache import CACHE, fingerprint, matrix_fingerprint, memory_limit
from milbench.utils.learners import make_estimator


def bag_similarity_mapping(X, offsets, P, gamma, block_cols=1024, x_norms=None, p_norms=None):
    """(n_bags, len(P)) matrix φ[i, k] = exp(−γ min_{x ∈ bag i} ‖x − p_k‖²) in column blocks
    (``block_cols``, fewer when their temporaries are over :func:`memory_limit`);
    the products xᵀp through CSR when X and P are sparse (CSR matrices, or dense arrays that
    _kernels.as_sparse_if_sparse turns into CSR)."""
    X, P = (A if sp.issparse(A) else as_sparse_if_sparse(np.asarray(A, dtype=float))
            for A in (X, P))
    x_norms = sq_norms(X) if x_norms is None else x_norms
    p_norms = sq_norms(P) if p_norms is None else p_norms
    n_pool, N = P.shape[0], X.shape[0]
    out = np.empty((len(offsets) - 1, n_pool))
    # three N × block_cols temporaries (norm sum, product, its double), the product through CSR
    per = 8 * (3 + (SPARSE_PRODUCT_FACTOR - 1 if sp.issparse(X) else 0))
    block_cols, _ = block_plan(
        block_cols, N * min(block_cols, n_pool), N, out.nbytes, per, memory_limit(), offsets,
        f"MILDM bag similarities: {out.shape[0]} bags × {n_pool} pool instances (blocks of "
        f"{N} rows)", "Raise MILBENCH_MAX_MEMORY_GB or run on a node / SLURM job with more "
        "memory, or map fewer bags at a time")
    for s in range(0, n_pool, block_cols):
        e = min(s + block_cols, n_pool)
        d = x_norms[:, None] + p_norms[None, s:e] - 2.0 * kernel_matrix(X, P[s:e], "linear")
        np.maximum(d, 0.0, out=d)
        out[:, s:e] = np.minimum.reduceat(d, offsets[:-1], axis=0)
        del d                  # before the next block: one block at a time
    np.multiply(out, -gamma, out=out)
    return np.exp(out, out=out)


def label_laplacian(y01):
    """L = D − W with W_ij = −1/|M| (same label, i ≠ j), +1/|C| (different labels)."""
    y = np.asarray(y01).astype(int)
    same = y[:, None] == y[None, :]
    np.fill_diagonal(same, False)
    n_must = same.sum() / 2
    n_cannot = (y[:, None] != y[None, :]).sum() / 2
    W = np.where(same, -1.0 / max(n_must, 1), 0.0)
    W = np.where(y[:, None] != y[None, :], 1.0 / max(n_cannot, 1), W)
    return np.diag(W.sum(1)) - W


class MILDM(MILClassifier):
    """aMILGDM (Wu et al. 2018): all-instance pool, global discriminative mapping, kNN.

    m : DIP size (fraction of the pool in (0, 1] or a count).  gamma : similarity width
    (None → 1/d).  estimator / estimator_params : the classifier on mapped bags
    (default kNN with scikit-learn's default k = 5).

    Fitted: ``pool_`` (all training instances), ``pool_scores_`` (h per pool instance),
    ``dip_`` (indices of the selected pool instances, best first), ``estimator_``.
    ``transform(bags)`` gives the (n_bags, m) mapping onto the DIP; ``map_pool(bags)`` the
    (n_bags, |pool|) mapping onto the whole pool.
    """

    _parameter_constraints = {
        "m": FRACTION_OR_COUNT,
        "gamma": GAMMA,
        "estimator": ESTIMATOR,
        "estimator_params": ESTIMATOR_PARAMS,
        "random_state": ["random_state"],
    }

    def __init__(self, m=0.1, gamma=None, estimator="knn", estimator_params=None,
                 random_state=None):
        self.m = m
        self.gamma = gamma
        self.estimator = estimator
        self.estimator_params = estimator_params
        self.random_state = random_state

    def _fit(self, X, offsets, y01):
        self.gamma_ = resolve_gamma(self.gamma, X.shape[1])
        self.pool_ = np.asarray(X, dtype=float)
        self._pool_norms = sq_norms(self.pool_)
        # φ and h depend on the training bags (and γ) only, not on m: an inner-CV grid over m
        # computes them once per fold (read-only entries of the cache)
        pool = as_sparse_if_sparse(self.pool_)      # CSR on sparse data: products and key
        key = (("bag-similarity", float(self.gamma_)) + matrix_fingerprint(pool)
               + fingerprint(offsets))
        Phi = CACHE.get(key, lambda: bag_similarity_mapping(
            pool, offsets, pool, self.gamma_, x_norms=self._pool_norms,
            p_norms=self._pool_norms))
        self.pool_scores_ = CACHE.get(
            key + fingerprint(np.asarray(y01)),
            lambda: (Phi * (label_laplacian(y01) @ Phi)).sum(axis=0))   # f_kᵀ L f_k for all k
        m = n_from_fraction(self.m, len(self.pool_))
        self.dip_ = np.argsort(-self.pool_scores_, kind="stable")[:m]
        self.estimator_ = make_estimator(self.estimator, self.estimator_params,
                                         random_state=self.random_state)
        self.estimator_.fit(Phi[:, self.dip_], np.asarray(y01).astype(int))
        self.diagnostics_ = {"pool_size": int(len(self.pool_)), "dip_size": int(m)}

    def map_pool(self, X):
        """Bags → (n_bags, |pool|) similarities to every pool instance."""
        Xs, offsets = self._check_predict_input(X)
        return bag_similarity_mapping(Xs, offsets, self.pool_, self.gamma_,
                                      p_norms=self._pool_norms)

    def transform(self, X):
        """Bags → (n_bags, m) similarities to the DIP instances (φ_DIP)."""
        Xs, offsets = self._check_predict_input(X)
        dip = self.pool_[self.dip_]
        return bag_similarity_mapping(Xs, offsets, dip, self.gamma_,
                                      p_norms=self._pool_norms[self.dip_])

    def _decision(self, Xs, offsets):
        Z = bag_similarity_mapping(Xs, offsets, self.pool_[self.dip_], self.gamma_,
                                   p_norms=self._pool_norms[self.dip_])
        est = self.estimator_
        if hasattr(est, "decision_function"):
            return est.decision_function(Z)
        return est.predict_proba(Z)[:, list(est.classes_).index(1)] - 0.5
