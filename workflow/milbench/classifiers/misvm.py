"""mi-SVM and MI-SVM (Andrews, Tsochantaridis & Hofmann, NIPS 2003) [mi-svm], [MI-svm].

Both are the paper's alternating heuristics around a standard soft-margin SVM (scikit-learn
``SVC``; linear, RBF or polynomial kernel).  A bag's score is the max of its instances' SVM
outputs, F(B) = max_{x∈B} f(x), f(x) = ⟨w, φ(x)⟩ + b.

mi-SVM (instance level, Andrews et al. Fig. 1 / optimisation problem (2)):
  initialise y_i = Y_I for every instance; repeat: fit the SVM on all instances with the
  imputed labels; for instances of positive bags set y_i = sgn f_i (f_i = 0 counts as +1); in
  every positive bag whose instances are now all negative set y_{argmax f_i} = +1 (at least one
  positive per positive bag); negative-bag instances stay −1; until the imputed labels repeat
  (or ``max_iter`` SVM fits).

MI-SVM (bag level, Andrews et al. Fig. 2 / problem (5)):
  initialise each positive bag's witness as its mean instance x̄_I; repeat: fit the SVM on
  {witnesses (+1)} ∪ {all instances of negative bags (−1)}; set s(I) = argmax_{i∈I} f_i; until
  the selectors repeat (or ``max_iter`` fits).

Departures / choices (stated, not hidden):
* MI-SVM: in Andrews' problem (5) all instances of one negative bag share one slack ξ_I (dual:
  Σ_{i∈I} α_i ≤ C).  SVC cannot express that coupling, so every negative instance has its own
  slack (the usual practical reading, identical to mi-SVM's treatment of negatives).
* C scaling is a parameter, ``C_scaling`` ∈ {"none", "n_bags", "n_instances", "n_examples"}:
  the SVC's C is C divided by that count of the *training* set ("n_examples" = number of
  examples in the SVM: all instances for mi-SVM, negative instances + positive bags for MI-SVM,
  the convention of the misvm package).  Default "none": C is passed to SVC unchanged.
* ``gamma=None`` means 1/n_features (fixed at fit, not re-estimated per iteration).
* ``precompute``: "auto" computes the training-instance kernel matrix once and trains SVC with
  ``kernel="precomputed"`` (the matrix is re-used across iterations; MI-SVM sub-indexes it) when
  there are at most ``precompute_max`` training instances; otherwise SVC's native kernel is used.
  Both give the same model up to solver round-off.  The float64 matrix takes 8n² bytes, and
  MI-SVM's sub-indexed copy as much again.  ``precompute_max=None`` (default) is
  :data:`PRECOMPUTE_MAX_DENSE` (3000) instances, or :data:`PRECOMPUTE_MAX_SPARSE` (8000, 512 MB)
  for a sparse pool, whose matrix is a cheap sparse product.  Above
  :func:`~milbench.utils.cache.memory_limit` (the matrix and the copies a fit takes of it:
  2 × 8n² for mi-SVM, 3 × 8n² for MI-SVM, 2.5 × 8n² while a sparse pool's product is
  densified) "auto" takes SVC's native kernel and ``precompute=True`` raises
  :class:`~milbench.classifiers.odm.MemoryLimitError`.
* Sparse input (at most ``odm.SPARSE_MAX_DENSITY`` of the instances' entries non-zero, e.g. the
  WebKB TF-IDF passages, ~1 %): the instance pool is kept as CSR, so the kernel products (and
  libsvm's own kernel evaluations on the native path) run over the non-zeros only — the same
  numbers up to summation order (what it saves on WebKB: docs/performance.md).  On dense data
  (musk2, RBF) precomputing above 3000 instances does not always pay, hence two caps.
* ``solver``: "libsvm" (default, scikit-learn's SVC: SMO to a KKT tolerance ``tol``) or "ipm"
  (linear kernel only: the same primal / dual, the bias unregularised as libsvm keeps it, solved
  by a primal-dual interior point method to 1e-10, :mod:`milbench.classifiers._linear_svm`).
  On many instances with few features at a large C, SMO can take millions of pair updates
  (scikit-learn's libsvm has no cap on them; protein, 17k instances × 8 features, C = 32: one
  of mi-SVM's fits ran over 10 CPU-minutes) where the interior point method takes a few dozen
  O(n d²) iterations; its objective is the optimum's, never above libsvm's.  Being exact where
  libsvm stops at its tolerance, it can impute different labels on a near-tie, so the two are
  separate settings, not a speed-up of one model.
* Ties in argmax go to the first instance of the bag (deterministic).

Instance outputs: ``decision_instances(X)`` (f for every instance, stacked in bag order) and
``predict_instances(X)`` (class labels of instances, f > 0).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel
from sklearn.svm import SVC

from milbench.base import (
    COUNT,
    COUNT_OR_ZERO,
    GAMMA,
    NON_NEGATIVE,
    POSITIVE,
    REAL,
    MILClassifier,
    options,
    resolve_gamma,
    warn_cap,
)
from milbench.classifiers._blocks import memory_limit_error
from milbench.classifiers._kernels import SPARSE_PRODUCT_FACTOR, as_sparse_if_sparse
from milbench.classifiers._linear_svm import LinearSVMIPM
from milbench.classifiers._svm import C_SCALINGS, scaled_C
from milbench.utils.cache import memory_limit

KERNELS = ("linear", "rbf", "poly")
SOLVERS = ("libsvm", "ipm")
PRECOMPUTE_MAX_DENSE = 3000      # training instances up to which "auto" precomputes the kernel
PRECOMPUTE_MAX_SPARSE = 8000     # ... when the pool is sparse (CSR): a 512 MB float64 matrix


class _InstanceSVM:
    """SVC on a subset of a fixed pool of training rows, native or precomputed kernel; a sparse
    pool is held as CSR (:func:`~milbench.classifiers._kernels.as_sparse_if_sparse`)."""

    def __init__(self, X, kernel, gamma, degree, coef0, tol, precompute, cache_size, solver):
        self.X = X
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.tol, self.cache_size, self.solver = tol, cache_size, solver
        self.precompute = precompute
        self.K = self.kfun(X, X) if precompute else None
        self.n_fits = 0
        self.n_capped = 0      # interior point fits stopped at their cap (libsvm has none)

    def kfun(self, A, B):
        if self.kernel == "linear":
            return linear_kernel(A, B)
        if self.kernel == "rbf":
            return rbf_kernel(A, B, gamma=self.gamma)
        return polynomial_kernel(A, B, degree=self.degree, gamma=self.gamma, coef0=self.coef0)

    def fit(self, rows, y, C, extra=None):
        """Fit on pool rows ``rows`` (plus optional extra (m, d) rows appended) with labels y."""
        self.rows = np.asarray(rows)
        self.extra = extra
        self.n_fits += 1
        if self.precompute:
            n = self.X.shape[0]
            full = len(self.rows) == n and (self.rows == np.arange(n)).all()
            K = self.K if full else self.K[np.ix_(self.rows, self.rows)]
            if extra is not None:
                Kxe = self.kfun(self.X[self.rows], extra)
                K = np.block([[K, Kxe], [Kxe.T, self.kfun(extra, extra)]])
            self.svc = SVC(kernel="precomputed", C=C, tol=self.tol, cache_size=self.cache_size)
            self.svc.fit(K, y)
        else:
            Xt = self.X[self.rows]
            if extra is not None:
                Xt = sp.vstack([Xt, extra], format="csr") if sp.issparse(Xt) \
                    else np.vstack([Xt, extra])
            self.svc = LinearSVMIPM(C=C) if self.solver == "ipm" else \
                SVC(kernel=self.kernel, gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                    C=C, tol=self.tol, cache_size=self.cache_size)
            self.svc.fit(Xt, y)
            self.n_capped += self.solver == "ipm" and not self.svc.converged_
        return self

    def decision_pool(self, sub):
        """f(x) for pool rows ``sub`` (cheap with a precomputed kernel)."""
        if not self.precompute:
            return self.svc.decision_function(self.X[sub])
        # f = Σ_sv dual_coef · k(x, sv) + intercept (scikit-learn's binary sign convention)
        sv, coef = self.svc.support_, self.svc.dual_coef_[0]
        n = len(self.rows)
        own = sv < n
        f = self.K[np.ix_(sub, self.rows[sv[own]])] @ coef[own] + self.svc.intercept_[0]
        if (~own).any():
            f += self.kfun(self.X[sub], self.extra[sv[~own] - n]) @ coef[~own]
        return f

    def freeze(self):
        """Drop the pool; keep only what prediction on new data needs."""
        sv = self.svc.support_
        n = len(self.rows)
        own = sv < n
        pts = np.empty((len(sv), self.X.shape[1]))
        pool = self.X[self.rows[sv[own]]]
        pts[own] = pool.toarray() if sp.issparse(pool) else pool
        if (~own).any():
            pts[~own] = self.extra[sv[~own] - n]
        self.sv_points = as_sparse_if_sparse(pts) if sp.issparse(self.X) else pts
        self.K = self.X = self.extra = None
        return self

    def decision(self, Xq):
        if not self.precompute:
            return self.svc.decision_function(Xq)
        if sp.issparse(self.sv_points):
            Xq = sp.csr_matrix(Xq)
        return self.kfun(Xq, self.sv_points) @ self.svc.dual_coef_[0] + self.svc.intercept_[0]


class _MISVMBase(MILClassifier):
    _PRECOMPUTE_COPIES = 2      # n × n float64 matrices at the peak: the kernel + one block of it
    _parameter_constraints = {
        "kernel": options(KERNELS),
        "C": POSITIVE,
        "C_scaling": options(C_SCALINGS),
        "gamma": GAMMA,
        "degree": COUNT_OR_ZERO,
        "coef0": REAL,
        "max_iter": COUNT,
        "tol": NON_NEGATIVE,
        "precompute": [*options(("auto",)), "boolean"],
        "precompute_max": [None, *COUNT_OR_ZERO],
        "cache_size": POSITIVE,
        "solver": options(SOLVERS),
    }

    def __init__(self, kernel="linear", C=1.0, C_scaling="none", gamma=None, degree=3,
                 coef0=1.0, max_iter=50, tol=1e-3, precompute="auto", precompute_max=None,
                 cache_size=200, solver="libsvm"):
        self.kernel = kernel
        self.C = C
        self.C_scaling = C_scaling
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.max_iter = max_iter
        self.tol = tol
        self.precompute = precompute
        self.precompute_max = precompute_max
        self.cache_size = cache_size
        self.solver = solver

    def _check_parameter_rules(self):
        if self.solver == "ipm" and self.kernel != "linear":
            raise ValueError(f"{type(self).__name__}: solver='ipm' solves the linear SVM only; "
                             f"got kernel={self.kernel!r} (use solver='libsvm')")
        if self.solver == "ipm" and self.precompute is True:
            raise ValueError(f"{type(self).__name__}: solver='ipm' works on the instances "
                             "themselves; precompute=True needs solver='libsvm'")

    def _setup(self, X, off):
        X = np.asarray(X, dtype=float)
        self.gamma_ = resolve_gamma(self.gamma, X.shape[1])
        pool = as_sparse_if_sparse(X)
        cap = self.precompute_max
        if cap is None:
            cap = PRECOMPUTE_MAX_SPARSE if sp.issparse(pool) else PRECOMPUTE_MAX_DENSE
        pre = len(X) <= cap if self.precompute == "auto" else bool(self.precompute)
        pre = pre and self.solver == "libsvm"    # the interior point method works on X itself
        # peak: the n × n kernel (a CSR product and its dense copy: 2.5×) or the kernel and
        # the sub-indexed copies a fit / scoring takes of it (_PRECOMPUTE_COPIES)
        need = 8 * len(X) ** 2 * max(SPARSE_PRODUCT_FACTOR if sp.issparse(pool) else 1,
                                     self._PRECOMPUTE_COPIES)
        limit = memory_limit()
        if pre and limit is not None and need > limit:
            if self.precompute != "auto":
                raise memory_limit_error(
                    f"{type(self).__name__}: the precomputed kernel of {len(X)} training "
                    "instances", need, limit, off,
                    "Use precompute='auto' (SVC's own kernel above the memory limit; the same "
                    "model up to solver round-off), lower precompute_max, or raise "
                    "MILBENCH_MAX_MEMORY_GB")
            pre = False
        svm = _InstanceSVM(pool, self.kernel, self.gamma_, self.degree, self.coef0, self.tol, pre,
                           self.cache_size, self.solver)
        return X, off, svm

    def decision_instances(self, X):
        """SVM output f(x) for every instance, stacked in bag order."""
        return self.svm_.decision(self._check_predict_input(X)[0])

    def predict_instances(self, X):
        """Instance class labels (``classes_[1]`` where f(x) > 0), stacked in bag order."""
        return self.classes_[(self.decision_instances(X) > 0).astype(int)]

    def _decision(self, X, offsets):
        return np.maximum.reduceat(self.svm_.decision(X), offsets[:-1])


class MiSVM(_MISVMBase):
    """mi-SVM of Andrews et al. (2003): instance-label imputation (see module docstring).

    Parameters: kernel "linear" | "rbf" | "poly"; C; C_scaling "none" | "n_bags" |
    "n_instances" | "n_examples" (= n_instances here); gamma (None = 1/d), degree, coef0;
    max_iter (SVM fits); tol (SVC); precompute "auto" | True | False, precompute_max (None: by
    the pool's sparsity, see the module docstring); solver "libsvm" | "ipm" (linear kernel).
    After fit: ``diagnostics_`` {n_iter (SVM fits), converged, n_label_changes_last, n_support,
    C_effective, n_svm_capped (solver "ipm": SVM fits stopped at its iteration cap, each with
    a ConvergenceWarning)}.
    ``converged`` = 1 when an SVM fit left the imputed labels unchanged (Andrews et al. Fig. 1's
    stopping rule), 0 when ``max_iter`` fits ran out first (then a ConvergenceWarning).
    """

    def _fit(self, X, off, y01):
        X, off, svm = self._setup(X, off)
        sizes = np.diff(off)
        bag_of = np.repeat(np.arange(len(sizes)), sizes)
        in_pos = y01[bag_of] == 1
        C = scaled_C(self.C, self.C_scaling, n_bags=len(sizes), n_instances=len(X),
                     n_examples=len(X))
        rows = np.arange(len(X))
        labels = in_pos.astype(int)           # y_i = Y_I initially
        converged, changes = False, -1
        pos_rows = np.flatnonzero(in_pos)
        for _ in range(self.max_iter):
            svm.fit(rows, labels, C)
            f = np.full(len(X), -np.inf)         # negatives are fixed: only + bags are scored
            f[pos_rows] = svm.decision_pool(pos_rows)
            new = np.where(in_pos, (f >= 0).astype(int), 0)
            # at least one positive instance per positive bag: its argmax
            n_pos = np.add.reduceat(new, off[:-1])
            empty = np.flatnonzero((n_pos == 0) & (y01 == 1))
            if len(empty):
                fmax = np.maximum.reduceat(f, off[:-1])
                hit = (f == fmax[bag_of]) & np.isin(bag_of, empty)
                first = np.flatnonzero(hit)
                first = first[np.unique(bag_of[first], return_index=True)[1]]
                new[first] = 1
            changes = int((new != labels).sum())
            if changes == 0:
                converged = True
                break
            labels = new
        if not converged:
            warn_cap(self, "max_iter", self.max_iter,
                     "SVM fits without the imputed instance labels settling")
        self.svm_ = svm.freeze()
        self.instance_labels_ = labels
        self.C_ = C
        self.diagnostics_ = {"n_iter": svm.n_fits, "converged": int(converged),
                             "n_label_changes_last": changes,
                             "n_support": int(len(svm.svc.support_)), "C_effective": C,
                             "n_svm_capped": svm.n_capped}


class MISVM(_MISVMBase):
    """MI-SVM of Andrews et al. (2003): witness selection per positive bag (module docstring).

    Parameters as :class:`MiSVM`; "n_examples" C scaling = negative instances + positive bags.
    After fit: ``witnesses_`` (row of each positive bag's witness in the stacked training
    instances) and ``diagnostics_`` {n_iter (SVM fits), converged, n_selector_changes_last,
    n_support, C_effective, n_svm_capped}.  ``converged`` = 1 when the last SVM fit selects
    the witnesses it was trained on (Andrews et al. Fig. 2's stopping rule), 0 when
    ``max_iter`` fits ran out first (then a ConvergenceWarning).
    """

    _PRECOMPUTE_COPIES = 3      # the kernel, its sub-indexed copy and np.block's with the means

    def _fit(self, X, off, y01):
        X, off, svm = self._setup(X, off)
        sizes = np.diff(off)
        bag_of = np.repeat(np.arange(len(sizes)), sizes)
        pos_bags = np.flatnonzero(y01 == 1)
        neg_rows = np.flatnonzero(y01[bag_of] == 0)
        n_ex = len(neg_rows) + len(pos_bags)
        C = scaled_C(self.C, self.C_scaling, n_bags=len(sizes), n_instances=len(X),
                     n_examples=n_ex)
        labels = np.r_[np.zeros(len(neg_rows), int), np.ones(len(pos_bags), int)]
        pos_mask = y01[bag_of] == 1
        pos_off = np.concatenate([[0], np.cumsum(sizes[pos_bags])])
        pos_rows = np.flatnonzero(pos_mask)
        # initial witnesses: positive-bag means (not training rows -> passed as extra points)
        means = np.add.reduceat(X[pos_rows], pos_off[:-1], axis=0) / sizes[pos_bags][:, None]
        local_bag = np.repeat(np.arange(len(pos_bags)), sizes[pos_bags])

        def witnesses():                  # s(I) = argmax_{i∈I} f_i of the current SVM
            f = svm.decision_pool(pos_rows)
            fmax = np.maximum.reduceat(f, pos_off[:-1])
            hit = np.flatnonzero(f == fmax[local_bag])
            return pos_rows[hit[np.unique(local_bag[hit], return_index=True)[1]]]

        selectors, converged, changes = None, False, -1
        svm.fit(neg_rows, labels, C, extra=means)
        for _ in range(self.max_iter - 1):
            new = witnesses()
            if selectors is not None:
                changes = int((new != selectors).sum())
                if changes == 0:
                    converged = True
                    break
            selectors = new
            svm.fit(np.r_[neg_rows, selectors], labels, C)
        else:                             # cap reached: did the last fit settle the witnesses?
            if selectors is not None:
                changes = int((witnesses() != selectors).sum())
                converged = changes == 0
            if not converged:
                warn_cap(self, "max_iter", self.max_iter,
                         "SVM fits without the witnesses settling")
        self.svm_ = svm.freeze()
        self.witnesses_ = selectors
        self.C_ = C
        self.diagnostics_ = {"n_iter": svm.n_fits, "converged": int(converged),
                             "n_selector_changes_last": changes,
                             "n_support": int(len(svm.svc.support_)), "C_effective": C,
                             "n_svm_capped": svm.n_capped}
