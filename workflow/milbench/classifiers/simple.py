"""MI-Simple (Dong 2006, Weka SimpleMI; hydr-mi.txt §4.1.2): summarise each bag by per-feature
statistics, then train any single-instance scikit-learn classifier on the bag vectors.

``statistic``: ``minmax`` (per-feature min and max concatenated, Weka's "minimax"), ``mean``
(arithmetic mean), ``meanminmax`` (all three).
"""
from __future__ import annotations

import numpy as np

from ..bags import segment_reduce, stack
from ..base import MILClassifier
from ..estimators import make_estimator

STATISTICS = ("minmax", "mean", "meanminmax")


def bag_statistics(bags, statistic="minmax"):
    """(n_bags, k·d) bag summary vectors, vectorised with segment reductions."""
    X, offsets = stack(bags)
    sizes = np.diff(offsets)[:, None]
    parts = {
        "mean": lambda: [segment_reduce(X, offsets, np.add) / sizes],
        "minmax": lambda: [segment_reduce(X, offsets, np.minimum),
                           segment_reduce(X, offsets, np.maximum)],
    }
    if statistic == "meanminmax":
        return np.hstack(parts["mean"]() + parts["minmax"]())
    if statistic not in parts:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    return np.hstack(parts[statistic]())


class MISimple(MILClassifier):
    """Bag statistics -> scikit-learn classifier named by ``estimator`` (see milbench.estimators)."""

    def __init__(self, estimator="logistic", estimator_params=None, statistic="minmax",
                 random_state=None):
        self.estimator = estimator
        self.estimator_params = estimator_params
        self.statistic = statistic
        self.random_state = random_state

    def _fit(self, bags, y):
        self.estimator_ = make_estimator(self.estimator, self.estimator_params, self.random_state)
        self.estimator_.fit(bag_statistics(bags, self.statistic), y)

    def _decision(self, bags):
        Z = bag_statistics(bags, self.statistic)
        if hasattr(self.estimator_, "decision_function"):
            return self.estimator_.decision_function(Z)
        return self.estimator_.predict_proba(Z)[:, 1] - 0.5
