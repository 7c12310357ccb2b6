"""MIRSVM — multi-instance SVM with bag representatives (Melki, Cano & Ventura 2018) [mirsvm].

Melki, Cano & Ventura, Pattern Recognition 79 (2018) 228–241, as summarised by Luan et al.
(2020), IEEE Access, §II-A and §V-B: every bag — positive or negative — is represented by exactly
one instance; an SVM is trained on the n representatives with the bag labels; then each bag's
representative becomes its instance with the highest SVM output (for a positive bag the most
positive instance, for a negative bag the least negative one, i.e. the one nearest the positive
side); repeat until the representatives stop changing.  Representatives start as one random
instance per bag (the initialisation Luan et al. (2020), Eq. 12, attribute to MIRSVM).  A bag's
score is the highest output among its instances.

Choices (stated, not hidden):
* The SVM is scikit-learn's ``SVC`` (soft margin, hinge loss, bias) on the representatives —
  Melki et al. solve the same bag-representative dual with their own QP solver.
* Besides "representatives unchanged" the loop stops when an earlier set of representatives
  comes back (cycle) or after ``max_iter`` SVM fits; the last SVM fitted is kept.
* ``gamma=None`` means 1/n_features.  Ties in argmax go to the first instance of the bag.

Speed, not result: every round needs only blocks of the training instances' kernel, K(R, R)
for the SVM and K(X, R_sv) for the new representatives, so they come from MIORDM's
:func:`~milbench.classifiers.miordm.kernel_blocks` — on sparse input (the WebKB TF-IDF
passages, ~1 % non-zero) CSR products and the packed kernel of the training instances,
computed once and shared by every C of an inner-CV grid on the same fold; the same model to
round-off (benchmarks/methods/bench_miordm.py --baselines).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.svm import SVC

from milbench.base import (
    COUNT,
    GAMMA,
    NON_NEGATIVE,
    POSITIVE,
    SEED,
    MILClassifier,
    options,
    resolve_gamma,
    warn_cap,
)
from milbench.classifiers._kernels import KERNELS, as_sparse_if_sparse, kernel_matrix, sq_norms
from milbench.classifiers._representatives import (
    instances_and_means,
    kernel_blocks,
    kernel_room,
    representatives_stop,
)
from milbench.utils.segments import segment_argmax


def random_instance_per_bag(offsets, rng):
    """Global row index of one uniformly random instance of every bag."""
    sizes = np.diff(offsets)
    return offsets[:-1] + np.floor(rng.random(len(sizes)) * sizes).astype(np.int64)


class MIRSVM(MILClassifier):
    """MIRSVM (Melki et al. 2018): one representative per bag, re-selected by an SVM.

    C, kernel ("rbf" | "linear"), gamma (None → 1/d) : the SVM.
    init : "random" (paper) or "mean" (first SVM on bag means, as MIORDM's Eq. 13).
    max_iter : cap on SVM fits.  random_state : seeds the random initial representatives.

    Fitted: ``rep_index_`` (row of each bag's representative in the stacked training
    instances), ``representatives_``, ``svm_`` and ``diagnostics_`` (n_iter = SVM fits,
    converged, stop reason).  ``converged`` = 1 when the representatives stop changing (Melki
    et al.'s rule) or repeat an earlier round's (a cycle: the alternation can only repeat
    itself), 0 when ``max_iter`` fits ran out (then a ConvergenceWarning).
    """

    STOP_REASONS = {"converged": 0, "cycle": 1, "max_iter": 2}

    _parameter_constraints = {
        "C": POSITIVE,
        "kernel": options(KERNELS),
        "gamma": GAMMA,
        "init": options(("random", "mean")),
        "max_iter": COUNT,
        "tol": NON_NEGATIVE,
        "random_state": SEED,
    }

    def __init__(self, C=1.0, kernel="rbf", gamma=None, init="random", max_iter=50, tol=1e-3,
                 random_state=None):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _fit(self, X, offsets, y01):
        y = np.asarray(y01).astype(int)
        n, N = len(y), len(X)
        self.gamma_ = resolve_gamma(self.gamma, X.shape[1])
        Z, z_norms = instances_and_means(X, offsets, means=self.init == "mean")
        room = kernel_room("MIRSVM", 1, offsets)    # the SVM's Gram and the scoring block
        gram, instance_scores = kernel_blocks(Z, z_norms, self.kernel, self.gamma_, room, N)
        rng = np.random.default_rng(self.random_state)
        if self.init == "random":
            rep = rows = random_instance_per_bag(offsets, rng)
        else:
            rep, rows = np.full(n, -1), N + np.arange(n)      # rows of Z holding the means
        seen, it = {rep.tobytes()}, 0
        while True:
            it += 1
            svm = SVC(C=self.C, kernel="precomputed", tol=self.tol)
            svm.fit(gram(rows, rows), y)
            scores = instance_scores(rows[svm.support_], svm.dual_coef_[0]) + svm.intercept_[0]
            new = segment_argmax(scores, offsets)
            stop = representatives_stop(new, rep, seen, it, self.max_iter)
            if stop:
                break
            rep = rows = new
        R = Z[rows]
        self.rep_index_ = rep
        self.representatives_ = R.toarray() if sp.issparse(R) else R
        self.svm_ = svm
        self._sv = self.representatives_[svm.support_]
        self._sv_norms = sq_norms(self._sv)
        if stop == "max_iter":
            warn_cap(self, "max_iter", self.max_iter, "SVM fits without the representatives "
                     "settling")
        self.diagnostics_ = {"n_iter": it, "converged": int(stop != "max_iter"),
                             "stop": self.STOP_REASONS[stop],
                             "n_support": int(len(svm.support_))}

    def instance_scores(self, X):
        """SVM output f(x) for a stacked (N, d) instance matrix."""
        X = np.asarray(X, dtype=float)
        K = kernel_matrix(as_sparse_if_sparse(X), as_sparse_if_sparse(self._sv), self.kernel,
                          self.gamma_, sq_norms(X), self._sv_norms)
        return K @ self.svm_.dual_coef_[0] + self.svm_.intercept_[0]

    def _decision(self, X, offsets):
        return np.maximum.reduceat(self.instance_scores(X), offsets[:-1])
