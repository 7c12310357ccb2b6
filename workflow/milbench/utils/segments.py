"""Reductions over the bag segments of stacked instances: rows ``offsets[i]:offsets[i + 1]``
of an array (or columns, with ``axis=1``) belong to bag i.  Every bag holds at least one
instance (``ufunc.reduceat`` gives a wrong value for an empty segment)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def segment_arg(V, offsets, ufunc, axis=0):
    """Segment reduction (``np.minimum`` / ``np.maximum``) of ``V`` along ``axis`` and the
    index (along that axis of ``V``, counted from 0) of the first element attaining it; ties go
    to the lowest index.  Returns (reduced, index) with index int64."""
    offsets = np.asarray(offsets)
    starts = offsets[:-1]
    red = ufunc.reduceat(V, starts, axis=axis)
    hit = V == np.repeat(red, np.diff(offsets), axis=axis)
    n = V.shape[axis]
    itype = np.int32 if n < 2**31 else np.int64
    shape = [1] * V.ndim
    shape[axis] = n
    pos = np.arange(n, dtype=itype).reshape(shape)
    arg = np.minimum.reduceat(np.where(hit, pos, itype(n)), starts, axis=axis)
    return red, arg.astype(np.int64)


def segment_argmax(scores, offsets):
    """Global row index of the first maximum of the 1-d ``scores`` inside every bag segment."""
    return segment_arg(scores, offsets, np.maximum)[1]


def segment_mean(X, offsets):
    """(n_bags, d) mean of the rows of every bag segment of the 2-d ``X``."""
    return np.add.reduceat(X, offsets[:-1], axis=0) / np.diff(offsets)[:, None]


def averaging_matrix(offsets):
    """Sparse (n_bags, N) matrix with 1/|B_i| on bag i's rows: W @ A averages A over bags."""
    sizes = np.diff(offsets)
    n = len(sizes)
    return sp.csr_matrix((np.repeat(1.0 / sizes, sizes), np.arange(offsets[-1]),
                          offsets), shape=(n, int(offsets[-1])))
