"""Bag-to-bag Hausdorff distances from one blocked pairwise computation (no per-bag-pair loops).

Instances of both bag sets are stacked; squared Euclidean distances between instance blocks are
computed with one matrix product per block, then reduced per bag pair with segment reductions
(``np.minimum.reduceat``).  hydr-mi.txt §3.1 and Wang & Zucker (2000) define

* minimal Hausdorff   h_min(A, B) = min_{a∈A, b∈B} ||a − b||
* maximal Hausdorff   h_max(A, B) = max(max_a min_b ||a−b||, max_b min_a ||a−b||)
* average Hausdorff   h_avg(A, B) = (Σ_a min_b ||a−b|| + Σ_b min_a ||a−b||) / (|A| + |B|)

Memory: the per-instance table is N_a × n_b float64 (plus one block of block_rows × N_b);
:func:`bag_distances` refuses inputs whose tables exceed ``max_bytes`` with a clear error.
"""
from __future__ import annotations

import numpy as np

from .bags import stack

METRICS = ("min", "max", "avg")
DEFAULT_MAX_BYTES = 8 * 2**30


def _sqdist(A, B, aa, bb):
    """Squared Euclidean distances, computed in place from precomputed row norms."""
    d = A @ B.T
    d *= -2.0
    d += aa[:, None]
    d += bb[None, :]
    np.maximum(d, 0.0, out=d)
    return d


def _instance_to_bag_min(XA, aa, XB, bb, offB, block_rows):
    """(N_A, n_B): every instance of A's distance to its nearest instance in each bag of B."""
    out = np.empty((len(XA), len(offB) - 1))
    for s in range(0, len(XA), block_rows):
        d = _sqdist(XA[s:s + block_rows], XB, aa[s:s + block_rows], bb)
        out[s:s + block_rows] = np.minimum.reduceat(d, offB[:-1], axis=1)
    return np.sqrt(out, out=out)


def _self_instance_to_bag_min(X, aa, off, block_rows):
    """Symmetric case: only blocks on and above the diagonal, row blocks aligned to bags."""
    n = len(off) - 1
    out = np.empty((len(X), n))
    s = 0
    while s < n:
        e = int(np.searchsorted(off, off[s] + block_rows, side="right")) - 1
        e = min(max(e, s + 1), n)
        r0, r1 = off[s], off[e]
        d = _sqdist(X[r0:r1], X[r0:], aa[r0:r1], aa[r0:])
        out[r0:r1, s:] = np.minimum.reduceat(d, off[s:-1] - r0, axis=1)
        if r1 < len(X):  # instances after the block vs this block's bags (mirror part)
            out[r1:, s:e] = np.minimum.reduceat(d[:, r1 - r0:], off[s:e] - r0, axis=0).T
        s = e
    return np.sqrt(out, out=out)


def bag_distances(bags_a, bags_b=None, metric="min", block_rows=4096, max_bytes=DEFAULT_MAX_BYTES):
    """(n_a, n_b) matrix of Hausdorff distances between two bag lists (or a bag list with itself).

    ``block_rows`` bounds the temporary block (block_rows × N_b float64).
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    XA, offA = stack(bags_a)
    XA = np.asarray(XA, dtype=float)
    aa = np.einsum("ij,ij->i", XA, XA)
    nA = len(offA) - 1
    if bags_b is None:
        XB, offB, bb = XA, offA, aa
    else:
        XB, offB = stack(bags_b)
        XB = np.asarray(XB, dtype=float)
        bb = np.einsum("ij,ij->i", XB, XB)
    nB = len(offB) - 1
    need = 8 * (len(XA) * nB + (len(XB) * nA if metric != "min" and bags_b is not None else 0)
                + min(block_rows, len(XA)) * len(XB))
    if need > max_bytes:
        raise MemoryError(
            f"bag_distances: {len(XA)} × {nB} instance-to-bag table needs {need / 2**30:.1f} GiB "
            f"(limit {max_bytes / 2**30:.1f} GiB); pass fewer bags at a time (rows of the "
            "result are independent) or raise max_bytes")
    if bags_b is None:
        rowmin = colmin = _self_instance_to_bag_min(XA, aa, offA, block_rows)
    else:
        rowmin = _instance_to_bag_min(XA, aa, XB, bb, offB, block_rows)
        colmin = None if metric == "min" else _instance_to_bag_min(XB, bb, XA, aa, offA, block_rows)
    if metric == "min":
        return np.minimum.reduceat(rowmin, offA[:-1], axis=0)
    if metric == "max":
        ab = np.maximum.reduceat(rowmin, offA[:-1], axis=0)       # max_a min_b
        ba = np.maximum.reduceat(colmin, offB[:-1], axis=0).T     # max_b min_a
        return np.maximum(ab, ba)
    ab = np.add.reduceat(rowmin, offA[:-1], axis=0)
    ba = np.add.reduceat(colmin, offB[:-1], axis=0).T
    return (ab + ba) / (np.diff(offA)[:, None] + np.diff(offB)[None, :])
