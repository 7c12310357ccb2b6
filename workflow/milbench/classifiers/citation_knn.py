"""Citation-kNN (Wang & Zucker 2000, ICML) [citation-knn]; a baseline of Luan et al. (2020), IEEE
Access, §V.

Bags are compared with the minimal Hausdorff distance h_min(A, B) = min_{a∈A, b∈B} ‖a − b‖
(``metric="min"``; "max" / "avg" Hausdorff also accepted), computed for all bag pairs at once
by :func:`milbench.classifiers.distances.bag_distances`, through the per-process table cache
(:func:`~milbench.classifiers.distances.cached_bag_distances`): the candidates of an inner-CV grid over R
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

Feature-subset fitness (HyDR-MI's GA, :meth:`CitationKNN.fitness_evaluator`): the Hausdorff
distance of two bags does not depend on which other bags a fold holds, so one table of all the
GA's training bags per subset serves every inner fold (sliced), instead of a training and a
query table per fold.

Memory: the tables are computed in blocks within ``max_bytes`` of
:func:`~milbench.classifiers.distances.bag_distances` (bags larger than a block split into
chunks of rows), else a :class:`~milbench.classifiers.odm.MemoryLimitError` names the largest
bag and the setting.
"""
from __future__ import annotations

import numpy as np

from milbench.base import COUNT_OR_ZERO, MILClassifier, options
from milbench.classifiers.distances import METRICS, cached_bag_distances, stacked_bag_distances
from milbench.data.bags import unstack


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
        "references": COUNT_OR_ZERO,
        "citers": COUNT_OR_ZERO,
        "metric": options(METRICS),
    }

    def __init__(self, references=2, citers=4, metric="min"):
        self.references = references
        self.citers = citers
        self.metric = metric

    def _fit(self, X, offsets, y01):
        bags = unstack(X, offsets)
        self.train_bags_ = bags
        self.y_ = y01.astype(int)
        self.citer_radius_ = citer_radius(cached_bag_distances(bags, metric=self.metric),
                                          self.citers)
        self.diagnostics_ = {"n_train_bags": len(bags)}

    def _check_parameter_rules(self):
        """The rule between parameters (validate_params): at least one vote."""
        if self.references + self.citers < 1:
            raise ValueError("references + citers must be at least 1")

    def votes(self, X):
        """(positive votes, negative votes) per query bag."""
        return self._votes(unstack(*self._check_predict_input(X)))

    def _votes(self, bags):
        D = cached_bag_distances(bags, self.train_bags_, self.metric)    # (n_query, n_train)
        return vote_counts(D, self.y_, self.references, self.citers, self.citer_radius_)

    def _decision(self, X, offsets):
        p, n = self._votes(unstack(X, offsets))
        total = p + n
        return np.where(total > 0, (p - n) / np.maximum(total, 1), 0.0)

    def fitness_evaluator(self, X, offsets, y, folds):
        """Fast feature-subset scoring for HyDR-MI
        (:class:`~milbench.selectors.fitness.SubsetFitness`): the same predictions as refitting
        ``clone(self)`` on each fold's bags restricted to the subset (:class:`SubsetHausdorff`)."""
        return SubsetHausdorff(self, X, offsets, y, folds)


def citer_radius(D_train, citers):
    """C-th smallest distance from each training bag to the *other* training bags, from the
    (n, n) training table (its diagonal is ignored); −inf when C = 0 or n = 1."""
    n = len(D_train)
    c = min(citers, n - 1)
    if c < 1:
        return np.full(n, -np.inf)
    D = np.array(D_train, dtype=float)        # a copy: cached tables are read-only
    np.fill_diagonal(D, np.inf)
    return np.partition(D, c - 1, axis=1)[:, c - 1]


def vote_counts(D, y, references, citers, radius):
    """(positive, negative) votes of query bags with distances ``D`` (n_query, n_train) to
    training bags labelled ``y``: the R nearest (stable: training order on ties) and the
    training bags whose citer ``radius`` reaches the query (t cites b iff h(t, b) ≤ radius_t)."""
    R = min(references, D.shape[1])
    if R > 0:
        ref_pos = y[np.argsort(D, axis=1, kind="stable")[:, :R]].sum(1)
    else:
        ref_pos = np.zeros(len(D), int)
    if citers > 0:
        cites = D <= radius[None, :]
        cit_pos = (cites & (y == 1)).sum(1)
        cit_neg = (cites & (y == 0)).sum(1)
    else:
        cit_pos = cit_neg = np.zeros(len(D), int)
    return ref_pos + cit_pos, R - ref_pos + cit_neg


class SubsetHausdorff:
    """Citation-kNN predictions on HyDR-MI's inner folds for a feature subset: one Hausdorff
    table of every bag the folds use, per subset, sliced into each fold's training and query
    tables (symmetric minimal-Hausdorff table: half the products of a single query table)."""

    def __init__(self, clf, X, offsets, y, folds):
        self.references, self.citers, self.metric = clf.references, clf.citers, clf.metric
        self.X, self.offsets = np.asarray(X, dtype=float), np.asarray(offsets)
        self.y, self.folds = np.asarray(y).astype(int), folds

    def predict(self, cols):
        """Pooled 0/1 predictions on the folds' validation bags (fold order)."""
        # X[:, cols] can come out Fortran-ordered; a C-ordered copy keeps the BLAS products
        # (and so exact distance ties) the same as the refit path's
        D = stacked_bag_distances(np.ascontiguousarray(self.X[:, cols]), self.offsets,
                                  metric=self.metric)
        out = []
        for tr, va in self.folds:
            radius = citer_radius(D[np.ix_(tr, tr)], self.citers)
            p, n = vote_counts(D[np.ix_(va, tr)], self.y[tr], self.references, self.citers,
                               radius)
            out.append(p > n)
        return np.concatenate(out)
