"""Citation-kNN (Wang & Zucker, ICML 2000) [citation-knn]; a baseline in miordm.txt §V.

Bags are compared with the minimal Hausdorff distance h_min(A, B) = min_{a∈A, b∈B} ‖a − b‖
(``metric="min"``; "max" / "avg" Hausdorff also accepted), computed for all bag pairs at once
by :func:`milbench.distances.bag_distances`, through the per-process table cache
(:func:`~milbench.distances.cached_bag_distances`): the candidates of an inner-CV grid over R
and C share the training and query tables of their fold.  For a query bag b:

* references: the R training bags nearest to b;
* citers: the training bags t that would count b among their C nearest neighbours, ranking b
  against the *other training bags* (t cites b iff |{t' ≠ t : h(t, t') < h(t, b)}| < C, i.e.
  h(t, b) ≤ the C-th smallest distance from t to another training bag — ties count as citing);
* p = positive references + positive citers, n = negative references + negative citers;
  label positive iff p > n.  **Ties (p = n) are labelled negative**, as in Wang & Zucker.

``decision_function`` = (p − n) / (p + n) ∈ [−1, 1] (0 when there are no votes), a monotone
vote score for AUROC; ``predict`` thresholds it at > 0, so a tie gives the negative class.
Ties in the reference ranking are broken by training order (stable sort).  Defaults R = 2,
C = 4 are the values Wang & Zucker report as best on Musk.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval

from ..base import MILClassifier, options
from ..distances import METRICS, cached_bag_distances


class CitationKNN(MILClassifier):
    """Citation-kNN: R references + C citers under a Hausdorff bag distance, majority vote.

    Parameters
    ----------
    references : int, R ≥ 0 (R + C ≥ 1).   citers : int, C ≥ 0.
    metric : "min" (minimal Hausdorff, the paper's choice) | "max" | "avg".
    After fit: ``diagnostics_`` {n_train_bags}.  Departure: none in the rule; the paper does
    not say how distance ties are ranked (we use training order / inclusive citer ties).
    """

    _parameter_constraints = {
        "references": [Interval(Integral, 0, None, closed="left")],
        "citers": [Interval(Integral, 0, None, closed="left")],
        "metric": options(METRICS),
    }

    def __init__(self, references=2, citers=4, metric="min"):
        self.references = references
        self.citers = citers
        self.metric = metric

    def _fit(self, bags, y01):
        R, C = self.references, self.citers
        if R + C < 1:
            raise ValueError("references + citers must be at least 1")
        self.train_bags_ = bags
        self.y_ = y01.astype(int)
        n = len(bags)
        D = cached_bag_distances(bags, metric=self.metric).copy()   # the cached table is read-only
        np.fill_diagonal(D, np.inf)
        c = min(C, n - 1)
        # C-th smallest distance from each training bag to the other training bags
        self.citer_radius_ = (np.partition(D, c - 1, axis=1)[:, c - 1] if c >= 1
                              else np.full(n, -np.inf))
        self.diagnostics_ = {"n_train_bags": n}

    def votes(self, X):
        """(positive votes, negative votes) per query bag."""
        bags = self._check_predict_input(X)
        return self._votes(bags)

    def _votes(self, bags):
        D = cached_bag_distances(bags, self.train_bags_, self.metric)    # (n_query, n_train)
        y = self.y_
        R = min(self.references, D.shape[1])
        if R > 0:
            ref = np.argsort(D, axis=1, kind="stable")[:, :R]
            ref_pos = y[ref].sum(1)
        else:
            ref_pos = np.zeros(len(D), int)
        ref_neg = R - ref_pos
        if self.citers > 0:
            cites = D <= self.citer_radius_[None, :]
            cit_pos = (cites & (y == 1)).sum(1)
            cit_neg = (cites & (y == 0)).sum(1)
        else:
            cit_pos = cit_neg = np.zeros(len(D), int)
        return ref_pos + cit_pos, ref_neg + cit_neg

    def _decision(self, bags):
        p, n = self._votes(bags)
        total = p + n
        return np.where(total > 0, (p - n) / np.maximum(total, 1), 0.0)
