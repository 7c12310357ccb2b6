"""MI-Simple (Dong 2006, MSc thesis, University of Waikato; Weka's SimpleMI) [mi-simple]: summarise
each bag by per-feature statistics, then train any single-instance scikit-learn classifier on the
bag vectors.  One of the classifiers of Zafra et al. (2013), Information Sciences, §4.1.2.

``statistic``: ``minmax`` (per-feature min and max concatenated, Weka's "minimax"), ``mean``
(arithmetic mean), ``meanminmax`` (all three).

Feature-subset fitness (HyDR-MI's GA, :meth:`MISimple.fitness_evaluator`): the statistics of
``X[:, cols]`` are the columns ``cols`` of the statistics of ``X``, so they are computed once for
all features and every chromosome is scored by column selection.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import clone

from milbench.base import ESTIMATOR, ESTIMATOR_PARAMS, MILClassifier, options
from milbench.data.bags import segment_reduce, stack
from milbench.utils.learners import make_estimator, reusable, sklearn_checked

STATISTICS = ("minmax", "mean", "meanminmax")


def statistic_blocks(X, offsets, statistic="minmax"):
    """The (n_bags, d) per-feature statistic blocks of stacked bags, in output column order."""
    parts = {
        "mean": lambda: [segment_reduce(X, offsets, np.add) / np.diff(offsets)[:, None]],
        "minmax": lambda: [segment_reduce(X, offsets, np.minimum),
                           segment_reduce(X, offsets, np.maximum)],
    }
    if statistic == "meanminmax":
        return parts["mean"]() + parts["minmax"]()
    if statistic not in parts:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    return parts[statistic]()


def bag_statistics(bags, statistic="minmax"):
    """(n_bags, k·d) bag summary vectors, vectorised with segment reductions."""
    return np.hstack(statistic_blocks(*stack(bags), statistic))


def bag_decision(est, Z):
    """Bag scores (> 0: positive) of a scikit-learn classifier fitted on bag vectors ``Z``."""
    if hasattr(est, "decision_function"):
        return est.decision_function(Z)
    return est.predict_proba(Z)[:, 1] - 0.5


class MISimple(MILClassifier):
    """Bag statistics -> scikit-learn classifier named by ``estimator`` (see milbench.utils.learners)."""

    _parameter_constraints = {
        "estimator": ESTIMATOR,
        "estimator_params": ESTIMATOR_PARAMS,
        "statistic": options(STATISTICS),
        "random_state": ["random_state"],
    }

    def __init__(self, estimator="logistic", estimator_params=None, statistic="minmax",
                 random_state=None):
        self.estimator = estimator
        self.estimator_params = estimator_params
        self.statistic = statistic
        self.random_state = random_state

    def _fit(self, X, offsets, y):
        self.estimator_ = make_estimator(self.estimator, self.estimator_params, self.random_state)
        self.estimator_.fit(np.hstack(statistic_blocks(X, offsets, self.statistic)), y)

    def _decision(self, X, offsets):
        return bag_decision(self.estimator_, np.hstack(statistic_blocks(X, offsets,
                                                                        self.statistic)))

    def fitness_evaluator(self, X, offsets, y, folds):
        """Fast feature-subset scoring for HyDR-MI
        (:class:`~milbench.selectors.fitness.SubsetFitness`: the same predictions as refitting
        ``clone(self)`` on each fold's bags restricted to the subset); None when it cannot be
        exact."""
        est = make_estimator(self.estimator, self.estimator_params, self.random_state)
        if not reusable(est):
            return None
        return SubsetStatistics(est, np.stack(statistic_blocks(X, offsets, self.statistic)),
                                np.asarray(y).astype(np.int8), folds)


class SubsetStatistics:
    """MI-Simple predictions on inner folds for a feature subset, by column selection of the
    precomputed (k, n_bags, d) statistic blocks; one clone of the base estimator per subset,
    refitted fold after fold."""

    def __init__(self, est, blocks, y01, folds):
        self.est, self.blocks, self.y, self.folds = est, blocks, y01, folds

    def predict(self, cols):
        """Pooled 0/1 predictions on the folds' validation bags (fold order)."""
        k, n, _ = self.blocks.shape
        Z = self.blocks[:, :, cols].transpose(1, 0, 2).reshape(n, k * len(cols))
        est, out = clone(self.est), []           # one per call: evaluators serve threads too
        with sklearn_checked():
            for tr, va in self.folds:
                est.fit(Z[tr], self.y[tr])
                out.append(bag_decision(est, Z[va]) > 0)
        return np.concatenate(out)
