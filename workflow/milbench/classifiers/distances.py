"""Bag-to-bag Hausdorff distances (Wang & Zucker 2000) from one blocked pairwise computation.

Instances of both bag sets are stacked; squared Euclidean distances between instance blocks are
computed with one matrix product per block, then reduced per bag pair with segment reductions
(``np.minimum.reduceat``).  Zafra et al. (2013), Information Sciences, §3.1, and Wang & Zucker
(2000), ICML, define

* minimal Hausdorff   h_min(A, B) = min_{a∈A, b∈B} ||a − b||
* maximal Hausdorff   h_max(A, B) = max(max_a min_b ||a−b||, max_b min_a ||a−b||)
* average Hausdorff   h_avg(A, B) = (Σ_a min_b ||a−b|| + Σ_b min_a ||a−b||) / (|A| + |B|)

A bag set's table with itself computes only the instance blocks on and after the diagonal's
bags and mirrors them (half the products).  On sparse instances (at most
odm.SPARSE_MAX_DENSITY non-zero, e.g. the WebKB TF-IDF passages) the products go through CSR:
the same table to round-off (docs/performance.md, MIORDM's baselines on sparse data).

Memory: "min" needs the n_a × n_b result plus one block of distances at a time, (its rows) ×
(the instances it is compared with) float64 (2.5× that through CSR); "max"/"avg" also the
N_a × n_b (and N_b × n_a) per-instance tables.  The default blocks (``block_rows``; "min": at
most BLOCK_BYTES, but never less than one bag) are kept when their real peak fits ``max_bytes``
-- by default the smaller of 8 GiB and :func:`~milbench.utils.cache.memory_limit` (the SLURM
job's memory, MemAvailable or MILBENCH_MAX_MEMORY_GB).  Otherwise the blocks take the rows that
fit, a larger bag split into chunks of rows whose minima are reduced across chunks (exactly;
the distances agree with the default blocks' to BLAS round-off, whose summation order depends
on a block's shape, as between default blocks of two sizes); when not even one row fits, a
:class:`~milbench.classifiers.odm.MemoryLimitError` names the largest bag, the estimate, the
limit and ``max_bytes``.

:func:`stacked_bag_distances` takes stacked instances and bag offsets (no bag lists: HyDR-MI's
Citation-kNN fitness builds one table per feature subset).  :func:`cached_bag_distances` is
the same table through the per-process
:data:`milbench.utils.cache.CACHE`: the candidates of an inner-CV grid over a bag-distance
classifier's other parameters (Citation-kNN's R, C) share the tables of their fold.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from milbench.classifiers._blocks import block_plan, largest_block, row_blocks
from milbench.classifiers._kernels import SPARSE_PRODUCT_FACTOR, as_sparse_if_sparse, kernel_matrix
from milbench.data.bags import stack
from milbench.utils.cache import CACHE, fingerprint, memory_limit

METRICS = ("min", "max", "avg")
DEFAULT_MAX_BYTES = 8 * 2**30


def _sqdist(A, B, aa, bb):
    """Squared Euclidean distances, computed in place from precomputed row norms (A, B dense or
    both CSR)."""
    d = kernel_matrix(A, B, "linear")
    d *= -2.0
    d += aa[:, None]
    d += bb[None, :]
    np.maximum(d, 0.0, out=d)
    return d


BLOCK_BYTES = 256 * 2**20  # one distance block of _bag_min ("min": rows from this bound)


def _min_rows(block_rows, n_b_instances):
    return max(1, min(block_rows, BLOCK_BYTES // (8 * n_b_instances)))


def _bag_min(XA, aa, offA, XB, bb, offB, block_rows, split=False):
    """(n_A, n_B) minimal Hausdorff distances without the N_A × n_B table: each block of
    whole A bags is reduced over B's bags, then over its own bags, at once (a chunk of one
    bag's rows: into the minimum of its earlier chunks — exact, min is order-free)."""
    out = np.full((len(offA) - 1, len(offB) - 1), np.inf)
    for s, e, r0, r1 in row_blocks(offA, block_rows, split):
        d = _sqdist(XA[r0:r1], XB, aa[r0:r1], bb)
        m = np.minimum.reduceat(np.minimum.reduceat(d, offB[:-1], axis=1),
                                np.maximum(offA[s:e] - r0, 0), axis=0)
        np.minimum(out[s:e], m, out=out[s:e])
        del d                  # before the next block: one block at a time
    return np.sqrt(out, out=out)


def _self_bag_min(X, aa, off, block_rows, split=False):
    """Symmetric (n, n) minimal Hausdorff table of one bag set: each block of whole bags
    (or chunk of one bag) against its bags and the bags after them (half the products of
    :func:`_bag_min`), mirrored once a block's bags are complete."""
    n = len(off) - 1
    out = np.full((n, n), np.inf)
    for s, e, r0, r1 in row_blocks(off, block_rows, split):
        c0 = off[s]
        d = _sqdist(X[r0:r1], X[c0:], aa[r0:r1], aa[c0:])
        m = np.minimum.reduceat(np.minimum.reduceat(d, off[s:-1] - c0, axis=1),
                                np.maximum(off[s:e] - r0, 0), axis=0)
        np.minimum(out[s:e, s:], m, out=out[s:e, s:])
        if r1 == off[e]:
            out[e:, s:e] = out[s:e, e:].T
        del d
    return np.sqrt(out, out=out)


def _instance_to_bag_min(XA, aa, XB, bb, offB, block_rows):
    """(N_A, n_B): every instance of A's distance to its nearest instance in each bag of B."""
    out = np.empty((XA.shape[0], len(offB) - 1))
    for s in range(0, XA.shape[0], block_rows):
        d = _sqdist(XA[s:s + block_rows], XB, aa[s:s + block_rows], bb)
        out[s:s + block_rows] = np.minimum.reduceat(d, offB[:-1], axis=1)
        del d
    return np.sqrt(out, out=out)


def _self_instance_to_bag_min(X, aa, off, block_rows, split=False):
    """Symmetric case: only blocks on and above the diagonal, row blocks aligned to bags (or
    chunks of one bag, whose mirror part is reduced into the minimum of the earlier chunks)."""
    N = X.shape[0]
    out = np.full((N, len(off) - 1), np.inf)
    for s, e, r0, r1 in row_blocks(off, block_rows, split):
        c0, r_end = off[s], off[e]
        d = _sqdist(X[r0:r1], X[c0:], aa[r0:r1], aa[c0:])
        out[r0:r1, s:] = np.minimum.reduceat(d, off[s:-1] - c0, axis=1)
        if r_end < N:  # instances after the block's bags vs its bags (mirror part)
            m = np.minimum.reduceat(d[:, r_end - c0:], np.maximum(off[s:e] - r0, 0), axis=0).T
            np.minimum(out[r_end:, s:e], m, out=out[r_end:, s:e])
        del d
    return np.sqrt(out, out=out)


def bag_distances(bags_a, bags_b=None, metric="min", block_rows=4096, max_bytes=None):
    """(n_a, n_b) matrix of Hausdorff distances between two bag lists (or a bag list with itself).

    ``block_rows`` bounds the temporary block (block_rows × N_b float64); ``max_bytes`` (None:
    min(8 GiB, :func:`memory_limit`)) bounds the whole computation (see :func:`_plan`).
    """
    XA, offA = stack(bags_a)
    XB, offB = (None, None) if bags_b is None else stack(bags_b)
    return stacked_bag_distances(XA, offA, XB, offB, metric, block_rows, max_bytes)


def _plan(offA, offB, same, metric, block_rows, max_bytes, sparse):
    """(rows, split) of the row blocks (:func:`block_plan`): the default blocks (``block_rows``;
    "min": at most BLOCK_BYTES of distances, whole bags) when their real peak — the result and
    per-instance tables plus the largest block, (its rows) × (the instances it is compared
    with) — fits ``max_bytes``; else smaller blocks, a large bag split into chunks of rows."""
    NA, NB = int(offA[-1]), int(offB[-1])
    nA, nB = len(offA) - 1, len(offB) - 1
    if metric == "min":
        fixed = 8 * nA * nB
        rows, cols = _min_rows(block_rows, NB), NB
        block = largest_block(offA, rows, NB, same)
    else:   # rowmin (+ colmin) tables, then the two reduced tables and the result
        fixed = 8 * (NA * nB + (0 if same else NB * nA) + 3 * nA * nB)
        rows, cols = block_rows, max(NA, NB)
        block = largest_block(offA, rows, NA, True) if same else \
            max(min(rows, NA) * NB, min(rows, NB) * NA)           # rowmin, colmin blocks
    big = offA if np.diff(offA).max(initial=0) >= np.diff(offB).max(initial=0) else offB
    return block_plan(
        rows, block, cols, fixed, 8 * (SPARSE_PRODUCT_FACTOR if sparse else 1), max_bytes, big,
        f"bag_distances: {nA} × {nB} bags ({NA} × {NB} instances, metric {metric!r})",
        "Raise max_bytes (default min(8 GiB, MILBENCH_MAX_MEMORY_GB or the SLURM job's "
        "memory / MemAvailable)), run on a node / SLURM job with more memory, or pass fewer "
        "bags at a time (rows of the result are independent)")


def stacked_bag_distances(XA, offA, XB=None, offB=None, metric="min", block_rows=4096,
                          max_bytes=None):
    """:func:`bag_distances` of stacked bags: instances ``XA`` (N_a, d) with bag ``offA``sets
    (and ``XB``, ``offB``; None: the A bags with themselves)."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    XA = np.asarray(XA, dtype=float)
    aa = np.einsum("ij,ij->i", XA, XA)
    if XB is None:
        XB, offB, bb = XA, offA, aa
    else:
        XB = np.asarray(XB, dtype=float)
        bb = np.einsum("ij,ij->i", XB, XB)
    same = XB is XA
    XA = as_sparse_if_sparse(XA)          # products through CSR on sparse data (WebKB TF-IDF)
    XB = XA if same else as_sparse_if_sparse(XB)
    if sp.issparse(XA) != sp.issparse(XB):
        XA, XB = (M.toarray() if sp.issparse(M) else M for M in (XA, XB))
    if max_bytes is None:
        max_bytes = min(DEFAULT_MAX_BYTES, memory_limit() or DEFAULT_MAX_BYTES)
    rows, split = _plan(np.asarray(offA), np.asarray(offB), same, metric, block_rows,
                        max_bytes, sp.issparse(XA))
    if metric == "min":
        if same:
            return _self_bag_min(XA, aa, offA, rows, split)
        return _bag_min(XA, aa, offA, XB, bb, offB, rows, split)
    if same:
        rowmin = colmin = _self_instance_to_bag_min(XA, aa, offA, rows, split)
    else:
        rowmin = _instance_to_bag_min(XA, aa, XB, bb, offB, rows)
        colmin = _instance_to_bag_min(XB, bb, XA, aa, offA, rows)
    if metric == "max":
        ab = np.maximum.reduceat(rowmin, offA[:-1], axis=0)       # max_a min_b
        ba = np.maximum.reduceat(colmin, offB[:-1], axis=0).T     # max_b min_a
        return np.maximum(ab, ba)
    ab = np.add.reduceat(rowmin, offA[:-1], axis=0)
    ba = np.add.reduceat(colmin, offB[:-1], axis=0).T
    return (ab + ba) / (np.diff(offA)[:, None] + np.diff(offB)[None, :])


def cached_bag_distances(bags_a, bags_b=None, metric="min"):
    """:func:`bag_distances` (default blocks and bound) through the per-process cache, keyed by
    the bags' contents (instances and offsets) and the metric; the result is read-only."""
    key = ("hausdorff", metric, fingerprint(*stack(bags_a)),
           None if bags_b is None else fingerprint(*stack(bags_b)))
    return CACHE.get(key, lambda: bag_distances(bags_a, bags_b, metric))
