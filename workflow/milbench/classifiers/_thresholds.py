"""Exhaustive threshold search on bag scores, shared by the diverse-density classifiers (the
threshold on log P of MI-DD / EM-DD / MDD) and the optimal ball (its radius)."""
from __future__ import annotations

import numpy as np


def best_thresholds(scores, y01, weights=None, ends=True, prefer=None):
    """Exhaustive threshold search on training bags, vectorised over rows.

    scores (R, B); bag b is called positive when score > thr.  Candidate thresholds are the
    midpoints between consecutive distinct sorted scores (plus, if ``ends``, one below all and one
    above all).  Returns (best weighted accuracy (R,), threshold (R,)); among equally accurate
    thresholds the lowest is taken when ``prefer`` is None, else the one closest to ``prefer``.
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    R, B = scores.shape
    w = np.ones(B) if weights is None else np.asarray(weights, dtype=float)
    w = w / w.sum()
    order = np.argsort(scores, axis=1, kind="stable")
    s = np.take_along_axis(scores, order, axis=1)
    yo, wo = y01[order], w[order]
    zeros = np.zeros((R, 1))
    neg_ok = np.hstack([zeros, np.cumsum(wo * (yo == 0), axis=1)])                # below cut
    pos_ok = np.hstack([np.cumsum((wo * (yo == 1))[:, ::-1], axis=1)[:, ::-1], zeros])
    acc = neg_ok + pos_ok                                                          # (R, B+1)
    thr = np.empty((R, B + 1))
    thr[:, 1:B] = 0.5 * (s[:, :-1] + s[:, 1:])
    thr[:, 0] = s[:, 0] - 1.0
    thr[:, B] = s[:, -1] + 1.0
    valid = np.ones((R, B + 1), dtype=bool)
    valid[:, 1:B] = s[:, 1:] > s[:, :-1]
    if not ends:
        valid[:, 0] = valid[:, B] = False
    acc = np.where(valid, acc, -np.inf)
    best = acc.max(axis=1, keepdims=True)
    tie = acc >= best - 1e-12
    key = thr if prefer is None else np.abs(thr - prefer)
    pick = np.argmin(np.where(tie, key, np.inf), axis=1)
    return best[:, 0], thr[np.arange(R), pick]
