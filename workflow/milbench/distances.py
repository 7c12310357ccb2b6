"""Bag-to-bag Hausdorff distances from one blocked pairwise computation (no per-bag-pair loops).

Instances of both bag sets are stacked; squared Euclidean distances between instance blocks are
computed with one matrix product per block, then reduced per bag pair with segment reductions
(``np.minimum.reduceat``).  hydr-mi.txt §3.1 and Wang & Zucker (2000) define

* minimal Hausdorff   h_min(A, B) = min_{a∈A, b∈B} ||a − b||
* maximal Hausdorff   h_max(A, B) = max(max_a min_b ||a−b||, max_b min_a ||a−b||)
* average Hausdorff   h_avg(A, B) = (Σ_a min_b ||a−b|| + Σ_b min_a ||a−b||) / (|A| + |B|)
"""
from __future__ import annotations

import numpy as np

from .bags import stack

METRICS = ("min", "max", "avg")


def _sqdist(A, B):
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    np.maximum(d, 0.0, out=d)
    return d


def bag_distances(bags_a, bags_b=None, metric="min", block_rows=4096):
    """(n_a, n_b) matrix of Hausdorff distances between two bag lists (or a bag list with itself).

    ``block_rows`` bounds memory: one block holds block_rows × N_b float64 distances.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    XA, offA = stack(bags_a)
    XB, offB = (XA, offA) if bags_b is None else stack(bags_b)
    XA = np.asarray(XA, dtype=float)
    XB = np.asarray(XB, dtype=float)
    nA, nB = len(offA) - 1, len(offB) - 1
    sizeA, sizeB = np.diff(offA), np.diff(offB)
    # per instance of A: min distance to each bag of B -> (N_A, n_B)
    rowmin = np.empty((len(XA), nB))
    for s in range(0, len(XA), block_rows):
        d = _sqdist(XA[s:s + block_rows], XB)
        rowmin[s:s + block_rows] = np.minimum.reduceat(d, offB[:-1], axis=1)
    np.sqrt(rowmin, out=rowmin)
    if metric == "min":
        return np.minimum.reduceat(rowmin, offA[:-1], axis=0)
    # per instance of B: min distance to each bag of A -> (N_B, n_A)
    if bags_b is None:
        colmin = rowmin  # symmetric case: same matrix
    else:
        colmin = np.empty((len(XB), nA))
        for s in range(0, len(XB), block_rows):
            d = _sqdist(XB[s:s + block_rows], XA)
            colmin[s:s + block_rows] = np.minimum.reduceat(d, offA[:-1], axis=1)
        np.sqrt(colmin, out=colmin)
    if metric == "max":
        ab = np.maximum.reduceat(rowmin, offA[:-1], axis=0)          # (nA, nB): max_a min_b
        ba = np.maximum.reduceat(colmin, offB[:-1], axis=0).T        # (nA, nB): max_b min_a
        return np.maximum(ab, ba)
    ab = np.add.reduceat(rowmin, offA[:-1], axis=0)
    ba = np.add.reduceat(colmin, offB[:-1], axis=0).T
    return (ab + ba) / (sizeA[:, None] + sizeB[None, :])
