"""The alternating representative loop shared by MIORDM (Luan et al. (2020), IEEE Access,
Algorithm 1, Eqs. 13 and 32), KI-SVM (Li et al. 2009) and MIRSVM (Melki et al. 2018): the
candidate rows Z = [X; bag means], the kernel blocks every round reads (packed for sparse Z,
cached square for small dense Z, else per-call products), the memory they may take, and the
rule that ends the alternation."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from milbench.classifiers import _kernels
from milbench.classifiers._blocks import memory_limit_error
from milbench.classifiers._kernels import (
    as_sparse_if_sparse,
    cached_kernel,
    cached_packed_kernel,
    kernel_matrix,
    packed_block,
    packed_matvec,
    packed_size,
    sq_norms,
)
from milbench.utils.cache import memory_limit
from milbench.utils.segments import segment_mean

FULL_KERNEL_MAX_BYTES = 32 * 2**20   # cap on the kernel of all instances and bag means
PACKED_KERNEL_MAX_BYTES = 150 * 2**20   # sparse input: cap on the packed (half) kernel


def representatives_stop(new, current, seen, iteration, max_iter):
    """Why a representative-alternation loop (MIORDM Eq. 32, KI-SVM, MIRSVM) stops after its
    ``iteration``-th fit: "converged" (the new representatives equal the current ones), "cycle"
    (they were chosen in an earlier round), "max_iter" (the cap), or None to go on.  Adds
    ``new`` to ``seen``."""
    if np.array_equal(new, current):
        return "converged"
    key = np.asarray(new).tobytes()
    if key in seen:
        return "cycle"
    seen.add(key)
    return "max_iter" if iteration >= int(max_iter) else None


def instances_and_means(X, offsets, means=True):
    """Z = [X; bag means] (Eq. 13; Z = X when ``means`` is False) in float64 and its squared row
    norms: a CSR matrix built without a dense float64 copy when X is sparse
    (:func:`as_sparse_if_sparse`), else dense.  The sparse means add the same non-zeros in the
    same (row) order as :func:`~milbench.utils.segments.segment_mean`."""
    Xs = as_sparse_if_sparse(X)
    if not sp.issparse(Xs):
        X = np.asarray(X, dtype=float)
        Z = np.vstack([X, segment_mean(X, offsets)]) if means else X
        return Z, sq_norms(Z)
    Xs = Xs.astype(float)
    if not means:
        return Xs, sq_norms(Xs)
    sizes = np.diff(offsets)
    member = sp.csr_matrix((np.ones(Xs.shape[0]), np.arange(Xs.shape[0]), offsets),
                           shape=(len(sizes), Xs.shape[0]))
    bag_mean_rows = (member @ Xs).tocsr()
    bag_mean_rows.sort_indices()
    bag_mean_rows.data /= np.repeat(sizes, np.diff(bag_mean_rows.indptr))
    Z = sp.vstack([Xs, bag_mean_rows], format="csr")
    return Z, sq_norms(Z)


PACKED_BUILD_BYTES = 2 * _kernels.PACKED_BLOCK_BYTES   # packed_kernel's row block, mask and pick


def kernel_room(name, n_square, offsets):
    """Bytes left for a cached kernel (:func:`kernel_blocks`' ``room``; np.inf: no limit) under
    :func:`memory_limit` once a representative alternation on bags ``offsets`` has its
    per-round blocks: ``n_square`` n × n matrices and the N × n instance-to-representative
    kernel; :class:`~milbench.classifiers._blocks.MemoryLimitError` when they alone do not fit."""
    n, N = len(offsets) - 1, int(offsets[-1])
    need = 8 * (n_square * n * n + N * n)
    limit = memory_limit()
    if limit is None:
        return np.inf
    if need > limit:
        raise memory_limit_error(
            f"{name}: {n} bags and {N} instances ({n_square} kernel blocks of n × n and one "
            "of N × n per round)", need, limit, offsets,
            "Raise MILBENCH_MAX_MEMORY_GB or run on a node / SLURM job with more memory, or "
            "train on fewer bags / instances")
    return limit - need


def kernel_blocks(Z, z_norms, kernel, gamma, room, n_scored):
    """Blocks of K(Z, Z) for a representative alternation (module docstring: packed kernel for
    sparse Z, square kernel for small dense Z, else per-call products), as two functions:
    ``gram(rows, cols)`` = K(Z[rows], Z[cols]) and ``scores(cols, coef)`` =
    K(Z[:n_scored], Z[cols]) @ coef.  ``room``: bytes the kernel may take (np.inf: no limit).
    The three ways give the same numbers to round-off."""
    packed = 8 * packed_size(Z.shape[0])
    if (sp.issparse(Z) and packed <= min(PACKED_KERNEL_MAX_BYTES, _kernels.CACHE.max_bytes // 5)
            and packed + PACKED_BUILD_BYTES <= room):
        P = cached_packed_kernel(Z, kernel, gamma, z_norms)

        def gram(rows, cols):
            return packed_block(P, rows, cols)

        def scores(cols, coef):                          # one pass over the triangle
            return packed_matvec(P, cols, coef)[:n_scored]
        return gram, scores
    if not sp.issparse(Z) and 8 * Z.shape[0] ** 2 <= min(FULL_KERNEL_MAX_BYTES, room):
        K = cached_kernel(Z, kernel, gamma)

        def gram(rows, cols):
            return K[rows][:, cols]
    else:
        def gram(rows, cols):
            return kernel_matrix(Z[rows], Z[cols], kernel, gamma, z_norms[rows], z_norms[cols])

    def scores(cols, coef):
        return gram(slice(n_scored), cols) @ coef
    return gram, scores
