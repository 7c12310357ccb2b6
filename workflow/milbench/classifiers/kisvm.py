"""KI-SVM, bag level — key-instance SVM (Li, Kwok, Tsang & Zhou 2009) [kisvm].

Li, Kwok, Tsang & Zhou, "A convex method for locating regions of interest with multi-instance
learning", ECML PKDD 2009 (ref. [20] of Luan et al. (2020), IEEE Access, whose MIORDM is compared
with the bag-level variant).

The paper's Bag-KI-SVM represents every positive bag by one *key instance* (selected by an
indicator vector d_i over its instances) and every negative bag as a whole, and learns

    min_{d, f} ½‖f‖² + C Σ_i ξ_i,   y_i f(z_i(d)) ≥ 1 − ξ_i,

where z_i(d) is the key instance of positive bag i and, in the authors' released code, the
kernel mean embedding of negative bag i (K(z_i, z_j) averaged over its instances).  The
combinatorial choice of d is relaxed to a convex multiple-kernel problem: a convex combination
of the kernel matrices K_d of candidate key assignments, grown by a cutting-plane loop that adds
the most violated assignment, with the kernel weights learnt by MKL.  Bags are scored by their
highest instance output.

What is implemented here (the bag-level model, *not* the MKL relaxation):
* the same model — positive bag = one key instance, negative bag = mean embedding of its
  instances, positive bags starting as their mean embedding (the authors' uniform initial d),
  an SVM with bias (scikit-learn ``SVC`` on the precomputed n_bags × n_bags kernel) — solved by
  **alternating** minimisation instead of the cutting-plane/MKL relaxation: with the SVM fixed
  each positive bag's key instance becomes its highest-output instance (the choice of d that
  minimises the hinge losses for that f), then the SVM is refitted; until the key instances
  repeat (cycle guard) or ``max_iter`` SVM fits.  This is a local (non-convex) method where
  the paper's is convex, and it keeps one kernel (weight 1 on the newest assignment) where the
  paper mixes all generated assignments.
* kernels: "rbf" or "linear".  RBF width as in the authors' code (normalization_gaussian.m):
  K = exp(−‖x−z‖²/(2σ²)), σ = ratio × sqrt(mean squared distance over all pairs of training
  instances), i.e. γ = 1/(2 ratio² · mean_sqdist) when ``gamma`` is None; a number overrides.
  (mean_sqdist over all n² pairs = 2 × the total variance, computed in O(Nd).)

Speed, not result: the mean embeddings of all training bags against all training instances
depend on the data and γ only, so they are computed once per training set and kept in
:data:`milbench.utils.cache.CACHE` for every C of an inner-CV grid; on sparse input (the WebKB
TF-IDF passages, ~1 % non-zero) every kernel block goes through CSR products.  The same model
to round-off (benchmarks/methods/bench_miordm.py --baselines).
"""
from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.svm import SVC

from milbench.base import (
    COUNT,
    GAMMA,
    NON_NEGATIVE,
    POSITIVE,
    MILClassifier,
    options,
    resolve_gamma,
    warn_cap,
)
from milbench.classifiers._blocks import block_plan
from milbench.classifiers._kernels import (
    KERNELS,
    SPARSE_PRODUCT_FACTOR,
    as_sparse_if_sparse,
    kernel_matrix,
    sq_norms,
)
from milbench.classifiers._representatives import instances_and_means, representatives_stop
from milbench.utils.cache import CACHE, fingerprint, matrix_fingerprint, memory_limit
from milbench.utils.segments import averaging_matrix, segment_argmax


def mean_embedding_kernel(X, offsets, Z, kernel, gamma, block=1024, x_norms=None, z_norms=None):
    """(n_bags, len(Z)) matrix M[i, k] = mean_{x ∈ bag i} K(x, z_k), in column blocks of Z
    (``block`` columns, fewer when their kernel block is over :func:`memory_limit`)."""
    W = averaging_matrix(offsets)
    z_norms = sq_norms(Z) if z_norms is None else z_norms
    x_norms = sq_norms(X) if x_norms is None else x_norms
    nz, N = Z.shape[0], X.shape[0]
    out = np.empty((len(offsets) - 1, nz))
    block, _ = block_plan(   # column blocks of N × block kernel entries within memory_limit()
        block, N * min(block, nz), N, out.nbytes,
        8 * (SPARSE_PRODUCT_FACTOR if sparse.issparse(X) or sparse.issparse(Z) else 1),
        memory_limit(), offsets, f"KI-SVM mean embeddings: {out.shape[0]} bags × {nz} "
        f"instances (kernel blocks of {N} rows)", "Raise MILBENCH_MAX_MEMORY_GB or run on a "
        "node / SLURM job with more memory, or train on fewer bags / instances")
    for s in range(0, nz, block):
        e = min(s + block, nz)
        out[:, s:e] = W @ kernel_matrix(X, Z[s:e], kernel, gamma, x_norms, z_norms[s:e])
    return out


class KISVM(MILClassifier):
    """Bag-level KI-SVM, alternating version (see module docstring for the departure).

    C, kernel ("rbf" | "linear") : the SVM.  gamma : RBF γ; None → the authors' width
    1/(2 ratio² · mean squared pairwise distance of the training instances).
    max_iter : cap on SVM fits (the authors' code runs at most 20 cutting-plane rounds).

    Fitted: ``key_index_`` (row of every positive bag's key instance in the stacked training
    instances; −1 for negative bags, and for positive bags still at their mean embedding when
    max_iter = 1), ``svm_``, ``diagnostics_`` (n_iter = SVM fits, converged, stop reason).
    ``converged`` = 1 when the key instances stop changing or repeat an earlier round's (a cycle:
    the alternation can only repeat itself, the analogue of the paper's cutting plane finding
    no new violated assignment), 0 when ``max_iter`` fits ran out (then a ConvergenceWarning).
    """

    STOP_REASONS = {"converged": 0, "cycle": 1, "max_iter": 2}

    _parameter_constraints = {
        "C": POSITIVE,
        "kernel": options(KERNELS),
        "gamma": GAMMA,
        "ratio": POSITIVE,
        "max_iter": COUNT,
        "tol": NON_NEGATIVE,
    }

    def __init__(self, C=1.0, kernel="rbf", gamma=None, ratio=1.0, max_iter=20, tol=1e-3):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.ratio = ratio
        self.max_iter = max_iter
        self.tol = tol

    def _fit(self, X, offsets, y01):
        X = np.asarray(X, dtype=float)
        y = np.asarray(y01).astype(int)
        n = len(y)
        if self.gamma is None:
            mean_sqdist = 2.0 * float(X.var(axis=0).sum())
            self.gamma_ = 1.0 / (2.0 * float(self.ratio) ** 2 * max(mean_sqdist, 1e-12))
        else:
            self.gamma_ = resolve_gamma(self.gamma, X.shape[1])
        kern = dict(kernel=self.kernel, gamma=self.gamma_)
        Xk, x_norms = instances_and_means(X, offsets, means=False)    # CSR when sparse
        pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
        sizes = np.diff(offsets)
        inst_bag = np.repeat(np.arange(n), sizes)
        neg_rows = np.flatnonzero(np.isin(inst_bag, neg))
        neg_off = np.concatenate([[0], np.cumsum(sizes[neg])])
        # mean embedding of every training bag against every training instance (fixed; the
        # same for every C of an inner-CV grid on this fold, so cached): M[i, x] =
        # mean_{x' ∈ bag i} K(x', x)
        M = CACHE.get(("mean-embedding", self.kernel, float(self.gamma_))
                      + matrix_fingerprint(Xk) + fingerprint(offsets),
                      lambda: mean_embedding_kernel(Xk, offsets, Xk, x_norms=x_norms,
                                                    z_norms=x_norms, **kern))
        M_neg = M[neg].T                               # (N, n_neg)
        G_negneg = np.add.reduceat(M_neg[neg_rows], neg_off[:-1], axis=0) / sizes[neg][:, None]
        # initial positive "key": the mean embedding of the bag (uniform d)
        pos_rows = np.flatnonzero(np.isin(inst_bag, pos))
        pos_off = np.concatenate([[0], np.cumsum(sizes[pos])])
        M_pos = M[pos].T                               # (N, n_pos)
        G_pospos = np.add.reduceat(M_pos[pos_rows], pos_off[:-1], axis=0) / sizes[pos][:, None]
        G_posneg = np.add.reduceat(M_neg[pos_rows], pos_off[:-1], axis=0) / sizes[pos][:, None]
        key = np.full(len(pos), -1)
        order = np.concatenate([pos, neg])
        yy = y[order]
        seen, it = set(), 0
        while True:
            it += 1
            G = np.block([[G_pospos, G_posneg], [G_posneg.T, G_negneg]])
            svm = SVC(C=self.C, kernel="precomputed", tol=self.tol).fit(G, yy)
            a = np.zeros(n)
            a[svm.support_] = svm.dual_coef_[0]
            scores = np.hstack([M_pos, M_neg]) @ a + svm.intercept_[0]   # f on all instances
            new = segment_argmax(scores[pos_rows], pos_off)
            new = pos_rows[new]
            stop = representatives_stop(new, key, seen, it, self.max_iter)
            if stop:
                break
            key = new
            M_pos = kernel_matrix(Xk, Xk[key], a_norms=x_norms, b_norms=x_norms[key], **kern)
            G_pospos = M_pos[key]
            G_posneg = M_neg[key]
        self.key_index_ = np.full(n, -1)
        self.key_index_[pos] = key
        self.svm_ = svm
        self._fit_state(X, x_norms, pos_rows, pos_off, neg_rows, neg_off, key, a, svm)
        if stop == "max_iter":
            warn_cap(self, "max_iter", self.max_iter, "SVM fits without the representatives "
                     "settling")
        self.diagnostics_ = {"n_iter": it, "converged": int(stop != "max_iter"),
                             "stop": self.STOP_REASONS[stop],
                             "n_support": int(len(svm.support_))}

    def _fit_state(self, X, x_norms, pos_rows, pos_off, neg_rows, neg_off, key, a, svm):
        n_pos = len(pos_off) - 1
        a_pos, a_neg = a[:n_pos], a[n_pos:]
        # positive part: key instances (or, if the loop stopped before any key was chosen,
        # every positive instance weighted by a_i / |B_i| — the mean embedding)
        if (key >= 0).all():
            keep = np.flatnonzero(a_pos)
            P, wP = X[key[keep]], a_pos[keep]
        else:
            sizes = np.diff(pos_off)
            P, wP = X[pos_rows], np.repeat(a_pos / sizes, sizes)
        keep_neg = np.flatnonzero(a_neg)
        sizes_n = np.diff(neg_off)
        rows = np.concatenate([np.arange(neg_off[j], neg_off[j + 1]) for j in keep_neg]) \
            if len(keep_neg) else np.zeros(0, dtype=int)
        Nn = X[neg_rows][rows]
        wN = np.repeat(a_neg[keep_neg] / sizes_n[keep_neg], sizes_n[keep_neg])
        self._expansion = np.vstack([P, Nn])
        self._weights = np.concatenate([wP, wN])
        self._exp_norms = sq_norms(self._expansion)
        self._bias = float(svm.intercept_[0])

    def instance_scores(self, X):
        """f(x) = Σ_pos a_i K(x, key_i) + Σ_neg a_j mean_{x'∈B_j} K(x, x') + b."""
        X = np.asarray(X, dtype=float)
        if len(self._weights) == 0:
            return np.full(len(X), self._bias)
        return kernel_matrix(as_sparse_if_sparse(X), as_sparse_if_sparse(self._expansion),
                             self.kernel, self.gamma_, sq_norms(X),
                             self._exp_norms) @ self._weights + self._bias

    def _decision(self, X, offsets):
        return np.maximum.reduceat(self.instance_scores(X), offsets[:-1])
