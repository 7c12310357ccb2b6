"""Set kernel and normalised set kernel SVM (Gärtner, Flach, Kowalczyk & Smola 2002, ICML)
[mi-kernel-svm].

Zafra et al. (2013), Information Sciences, §4.1.2, call this classifier "MISMO" (Weka's SMO with
a multi-instance kernel).
For bags X, Y and an instance kernel k the set kernel is

    k_set(X, Y) = Σ_{x∈X} Σ_{y∈Y} k(x, y)                                  (Gärtner et al., Def. 1)

and it is normalised either in feature space or by averaging (Gärtner et al. §4.2):

    featurespace:  k_set(X, Y) / sqrt(k_set(X, X) · k_set(Y, Y))
    averaging:     k_set(X, Y) / (|X| · |Y|)

The Gram matrix is computed without per-bag-pair loops: stacking all instances and writing
S for the (n_bags × n_instances) 0/1 bag-indicator matrix, K_set = S K_inst Sᵀ.  We never form
S: instance-kernel blocks (aligned to bag boundaries, at most ``block_rows`` instance rows each)
are reduced with ``np.add.reduceat`` over bag offsets on both axes, which is exactly S·K·Sᵀ.
The bag Gram matrix goes to scikit-learn ``SVC(kernel="precomputed")``.  Memory: one block of
(its rows) × (the other side's instances) at a time, never less than one bag; when that block
(counted twice, for the pairwise kernel's temporaries) and the result are over
:func:`~milbench.utils.cache.memory_limit`, the blocks take fewer rows and a larger bag is
summed over chunks of its rows (the same sums in another order: round-off), or a
:class:`~milbench.classifiers.odm.MemoryLimitError` names the largest bag and the setting.

Instance kernels (scikit-learn conventions): rbf exp(−γ‖x−y‖²), poly (γ⟨x,y⟩ + coef0)^degree;
``gamma=None`` means 1/n_features.  Gärtner's optional power p on k is not a parameter: for the
RBF kernel k^p is the RBF kernel with γ·p.

C scaling is explicit (``C_scaling``): "none" → SVC C = C; "n_bags" (= "n_examples" here) →
C / number of training bags; "n_instances" → C / number of training instances.

Reproduction note (musk1, see tests/test_set_kernel.py): the frequently quoted "NSK" figures of
0.902 / 0.848 (StratifiedKFold(10, shuffle=True, random_state=0 / 1), z-score fitted on training
instances, RBF γ = 1/166, C = 100 divided by the number of training bags, accuracy pooled over
all 92 test predictions) are reproduced only by the *unnormalised* set kernel
(``normalize="none"``) — the "NSK" class of the common open-source MI-SVM package applies no
normalisation unless asked for.  With feature-space normalisation the same protocol gives
0.848 / 0.859, with averaging 0.837 / 0.837.
"""
from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
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
)
from milbench.classifiers._blocks import bag_blocks, block_plan, largest_block, row_blocks
from milbench.classifiers._svm import C_SCALINGS, scaled_C
from milbench.data.bags import stack, unstack
from milbench.utils.cache import memory_limit

INSTANCE_KERNELS = ("rbf", "poly")
NORMALIZATIONS = ("none", "averaging", "featurespace")


def make_instance_kernel(kind, gamma, degree=3, coef0=1.0):
    """Vectorised instance kernel k(A, B) -> (len(A), len(B)) matrix."""
    if kind == "rbf":
        return lambda A, B: rbf_kernel(A, B, gamma=gamma)
    if kind == "poly":
        return lambda A, B: polynomial_kernel(A, B, degree=degree, gamma=gamma, coef0=coef0)
    raise ValueError(f"instance_kernel must be one of {INSTANCE_KERNELS}, got {kind!r}")


KERNEL_BLOCK_FACTOR = 2   # bytes of an instance-kernel block over its float64 entries, allowing
                          # for a pairwise kernel's temporaries
SETTING = ("Raise MILBENCH_MAX_MEMORY_GB (or run on a node / SLURM job with more memory), or "
           "pass fewer bags at a time")


def _plan(off, block, cols, fixed, block_rows, what):
    """(rows, split) of the instance-kernel row blocks (_blocks.block_plan): the default
    blocks of whole bags of about ``block_rows`` instances when the largest one (``block``
    entries) and the ``fixed`` result bytes fit :func:`memory_limit`; else blocks of fewer
    rows (× ``cols``), a large bag's rows in chunks whose sums are added up (round-off only)."""
    return block_plan(block_rows, block, cols, fixed, 8 * KERNEL_BLOCK_FACTOR, memory_limit(),
                      off, what, SETTING)


def set_kernel_matrix(bags_a, bags_b, kernel, block_rows=2048):
    """Unnormalised set-kernel Gram matrix K_set = S_a K_inst S_bᵀ, shape (n_a, n_b)."""
    XA, offA = stack(bags_a)
    XB, offB = stack(bags_b)
    XA = np.asarray(XA, dtype=float)
    XB = np.asarray(XB, dtype=float)
    out = np.empty((len(offA) - 1, len(offB) - 1))
    rows, split = _plan(offA, largest_block(offA, block_rows, len(XB)), len(XB), out.nbytes,
                        block_rows, f"set kernel: {out.shape[0]} × {out.shape[1]} bags "
                                    f"({len(XA)} × {len(XB)} instances)")
    for s, e, r0, r1 in row_blocks(offA, rows, split):
        K = kernel(XA[r0:r1], XB)
        K = np.add.reduceat(K, offB[:-1], axis=1)                        # K S_bᵀ
        K = np.add.reduceat(K, np.maximum(offA[s:e] - r0, 0), axis=0)    # S_a (K S_bᵀ)
        if r0 == offA[s]:
            out[s:e] = K
        else:                                          # a later chunk of bag s's rows
            out[s:e] += K
    return out


def set_kernel_self(bags, kernel, block_rows=2048):
    """Diagonal k_set(X, X) for every bag, from bag-aligned diagonal blocks (no per-bag loop;
    a chunk of a large bag's rows against the whole bag)."""
    X, off = stack(bags)
    X = np.asarray(X, dtype=float)
    out = np.empty(len(off) - 1)
    biggest = int(np.diff(off).max(initial=0))
    block = max(((r1 - r0) ** 2 for _, _, r0, r1 in bag_blocks(off, block_rows)), default=0)
    rows, split = _plan(off, block, biggest, 0, block_rows,
                        f"set kernel self-similarities: {len(out)} bags ({len(X)} instances)")
    for s, e, r0, r1 in row_blocks(off, rows, split):
        c0, c1 = off[s], off[e]
        cidx = np.repeat(np.arange(e - s), np.diff(off[s:e + 1]))
        ridx = cidx[r0 - c0:r1 - c0]
        K = kernel(X[r0:r1], X[c0:c1])
        K *= ridx[:, None] == cidx[None, :]
        sums = np.bincount(ridx, weights=K.sum(1), minlength=e - s)
        del K                  # before the next block: one block at a time
        if r0 == c0:
            out[s:e] = sums
        else:                                          # a later chunk of bag s's rows
            out[s:e] += sums
    return out


class SetKernelSVM(MILClassifier):
    """SVM on the (normalised) set kernel of Gärtner et al. (2002) — Zafra et al.'s "MISMO".

    Parameters
    ----------
    instance_kernel : "rbf" | "poly"
    gamma : float or None (None = 1/n_features), degree, coef0 : instance-kernel parameters.
    normalize : "featurespace" (Gärtner's NSK, default) | "averaging" | "none" (plain set kernel);
        True / False are accepted as "featurespace" / "none".
    C : SVM cost; C_scaling : "none" | "n_bags" | "n_instances" | "n_examples" (= n_bags) —
        the effective SVC C is C divided by that count (see :func:`scaled_C`).
    tol : SVC stopping tolerance.  block_rows : memory bound for the Gram computation.

    Departure: Weka's SMO (used by Zafra et al.) also normalises features to [0, 1] inside the
    classifier; here scaling is the pipeline's job (fitted on training instances only).

    ``diagnostics_["converged"]`` = 1 when libsvm met ``tol`` before the SVC's iteration cap
    (SVC has none by default, max_iter=-1; scikit-learn warns at one); ``n_iter`` = libsvm
    iterations.
    """

    _parameter_constraints = {
        "instance_kernel": options(INSTANCE_KERNELS),
        "gamma": GAMMA,
        "degree": COUNT_OR_ZERO,
        "coef0": REAL,
        "normalize": [*options(NORMALIZATIONS), "boolean"],
        "C": POSITIVE,
        "C_scaling": options(C_SCALINGS),
        "tol": NON_NEGATIVE,
        "block_rows": COUNT,
    }

    def __init__(self, instance_kernel="rbf", gamma=None, degree=3, coef0=1.0,
                 normalize="featurespace", C=1.0, C_scaling="none", tol=1e-3,
                 block_rows=2048):
        self.instance_kernel = instance_kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.normalize = normalize
        self.C = C
        self.C_scaling = C_scaling
        self.tol = tol
        self.block_rows = block_rows

    def _normalization(self):
        norm = self.normalize
        if isinstance(norm, (bool, np.bool_)):
            return "featurespace" if norm else "none"
        return norm

    def _bag_norms(self, bags):
        if self._norm_ == "featurespace":
            return np.sqrt(set_kernel_self(bags, self._kernel_, self.block_rows))
        if self._norm_ == "averaging":
            return np.array([len(b) for b in bags], dtype=float)
        return np.ones(len(bags))

    def _fit(self, X, offsets, y01):
        bags = unstack(X, offsets)
        self._norm_ = self._normalization()
        self.gamma_ = resolve_gamma(self.gamma, bags[0].shape[1])
        self._kernel_ = make_instance_kernel(self.instance_kernel, self.gamma_, self.degree,
                                             self.coef0)
        n_inst = sum(len(b) for b in bags)
        self.C_ = scaled_C(self.C, self.C_scaling, n_bags=len(bags), n_instances=n_inst,
                           n_examples=len(bags))
        K = set_kernel_matrix(bags, bags, self._kernel_, self.block_rows)
        # training bags' k_set(X, X) is the Gram diagonal (no second pass)
        norms = np.sqrt(np.diag(K)) if self._norm_ == "featurespace" else self._bag_norms(bags)
        K /= np.outer(norms, norms)
        self.svc_ = SVC(kernel="precomputed", C=self.C_, tol=self.tol).fit(K, y01)
        sv = self.svc_.support_
        # keep only support bags: columns of non-support bags have zero dual weight
        self._n_train_ = len(bags)
        self.support_bags_ = [bags[i].copy() for i in sv]     # not views of the training matrix
        self._support_norms_ = norms[sv]
        self.diagnostics_ = {"n_support_bags": int(len(sv)), "C_effective": self.C_,
                             "n_iter": int(np.sum(self.svc_.n_iter_)),
                             "converged": int(self.svc_.max_iter < 0
                                              or np.all(self.svc_.n_iter_ < self.svc_.max_iter))}

    def _decision(self, X, offsets):
        bags = unstack(X, offsets)
        sv = self.svc_.support_
        K = np.zeros((len(bags), self._n_train_))
        if len(sv):
            Ksv = set_kernel_matrix(bags, self.support_bags_, self._kernel_, self.block_rows)
            K[:, sv] = Ksv / np.outer(self._bag_norms(bags), self._support_norms_)
        return self.svc_.decision_function(K)
