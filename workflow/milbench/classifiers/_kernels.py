"""Instance kernels shared by the kernel classifiers (MIORDM, KI-SVM, MIRSVM, MILDM, MI-SVM,
the bag distances): the RBF / linear kernel matrix of dense or CSR operands, squared row norms,
the detection of sparse instances, and the symmetric kernel packed as its lower triangle (with
its per-process cached forms)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import dspmv

from milbench.utils.cache import CACHE, fingerprint, matrix_fingerprint

KERNELS = ("rbf", "linear")
SPARSE_PRODUCT_FACTOR = 2.5   # kernel_matrix through CSR: the sparse product (≤ 12 bytes an
                              # entry) and its dense copy, over the float64 result's bytes
SPARSE_MAX_DENSITY = 0.05     # kernel products through CSR below this fraction of non-zeros


def as_sparse_if_sparse(X):
    """X as a CSR matrix when at most ``SPARSE_MAX_DENSITY`` of its entries are non-zero (the
    TF-IDF passages of WebKB: ~1 %), else X itself."""
    if SPARSE_MAX_DENSITY > 0 and np.count_nonzero(X) <= SPARSE_MAX_DENSITY * X.size:
        return sp.csr_matrix(X)
    return X


def sq_norms(A):
    """Squared row norms of a dense array or a scipy sparse matrix."""
    if sp.issparse(A):
        return np.asarray(A.multiply(A).sum(axis=1), dtype=float).ravel()
    return np.einsum("ij,ij->i", A, A)


def kernel_matrix(A, B, kernel="rbf", gamma=1.0, a_norms=None, b_norms=None):
    """(len(A), len(B)) kernel matrix: rbf exp(−γ‖a−b‖²) or linear aᵀb (float64).

    A and B may be dense arrays or scipy sparse matrices (CSR); with a sparse operand the Gram
    ABᵀ is a sparse product (the RBF through ‖a‖² + ‖b‖² − 2aᵀb as for dense input), the
    same numbers up to the summation order of the products (round-off)."""
    if sp.issparse(A) or sp.issparse(B):
        A = A.astype(float, copy=False) if sp.issparse(A) else np.asarray(A, dtype=float)
        B = B.astype(float, copy=False) if sp.issparse(B) else np.asarray(B, dtype=float)
        G = A @ B.T
        G = G.toarray() if sp.issparse(G) else np.asarray(G)
    else:
        A = np.asarray(A, dtype=float)
        B = np.asarray(B, dtype=float)
        G = A @ B.T
    if kernel == "linear":
        return G
    if kernel != "rbf":
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    an = sq_norms(A) if a_norms is None else a_norms
    bn = sq_norms(B) if b_norms is None else b_norms
    G *= -2.0
    G += an[:, None]
    G += bn[None, :]
    np.maximum(G, 0.0, out=G)
    G *= -gamma
    np.exp(G, out=G)
    return G


def cached_kernel(X, kernel="rbf", gamma=1.0):
    """K(X, X) of :func:`kernel_matrix` through the per-process :data:`~milbench.utils.cache.CACHE`
    (read-only): the Gram matrix of Eq. 27 depends only on the data, the kernel and γ, so the
    candidates of an inner-CV grid over λ, θ, μ share it."""
    X = np.asarray(X, dtype=float)
    return CACHE.get(("kernel", kernel, float(gamma), fingerprint(X)),
                     lambda: kernel_matrix(X, X, kernel, gamma))


def packed_size(n):
    """Entries of the packed lower triangle (diagonal included) of an n × n symmetric matrix."""
    return n * (n + 1) // 2


PACKED_BLOCK_BYTES = 64 * 2**20   # a row block of packed_kernel


def packed_kernel(Zs, kernel="rbf", gamma=1.0, norms=None, block_bytes=PACKED_BLOCK_BYTES):
    """Lower triangle of K(Z, Z), rows packed one after another (row i: K[i, :i+1]) — the
    symmetric kernel in half the memory, built from row blocks of :func:`kernel_matrix` at
    most ``block_bytes`` each.  With a CSR ``Zs`` every entry is the number the per-block
    sparse product gives (the same products summed in the same order), so
    :func:`packed_block` returns exactly the blocks :func:`kernel_matrix` would compute."""
    n = Zs.shape[0]
    norms = sq_norms(Zs) if norms is None else norms
    starts = packed_size(np.arange(n + 1))
    P = np.empty(starts[-1])
    step = max(1, int(block_bytes) // (8 * max(n, 1)))
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        B = kernel_matrix(Zs[i0:i1], Zs[:i1], kernel, gamma, norms[i0:i1], norms[:i1])
        P[starts[i0]:starts[i1]] = B[np.arange(i1)[None, :] <= np.arange(i0, i1)[:, None]]
    return P


def packed_block(P, rows, cols):
    """K[rows][:, cols] from the packed lower triangle of :func:`packed_kernel`."""
    itype = np.int32 if len(P) < 2**31 else np.int64
    n = int(round((np.sqrt(8 * len(P) + 1) - 1) / 2))
    starts = packed_size(np.arange(n, dtype=np.int64)).astype(itype)
    r = np.asarray(rows, dtype=itype)[:, None]
    c = np.asarray(cols, dtype=itype)[None, :]
    idx = starts[np.maximum(r, c)]
    idx += np.minimum(r, c)
    return P.take(idx)


def packed_matvec(P, cols, coef):
    """K[:, cols] @ coef over all rows of the packed kernel (BLAS dspmv: one pass over the
    triangle instead of gathering the block; equal to the block product up to round-off)."""
    n = int(round((np.sqrt(8 * len(P) + 1) - 1) / 2))
    x = np.zeros(n)
    x[np.asarray(cols)] = coef
    return dspmv(n, 1.0, P, x, lower=0)     # row-major lower triangle = column-major upper


def cached_packed_kernel(Zs, kernel="rbf", gamma=1.0, norms=None):
    """:func:`packed_kernel` of a CSR matrix through :data:`~milbench.utils.cache.CACHE`,
    keyed by the CSR arrays' contents (a fraction of the dense bytes to hash)."""
    key = ("packed-kernel", kernel, float(gamma)) + matrix_fingerprint(Zs)
    return CACHE.get(key, lambda: packed_kernel(Zs, kernel, gamma, norms))
