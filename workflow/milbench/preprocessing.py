"""Feature scaling fitted on training-fold instances only."""
from __future__ import annotations

import numpy as np

from milbench.base import MILTransformer, options

KINDS = ("minmax", "zscore", "none")


class BagScaler(MILTransformer):
    """``minmax`` to [0, 1] or ``zscore``, statistics from the stacked training instances.
    Constant features map to 0 (no division by zero)."""

    _parameter_constraints = {
        "kind": options(KINDS),
    }

    def __init__(self, kind="minmax"):
        self.kind = kind

    def _fit(self, bags, y):
        X = np.concatenate(bags)
        if self.kind == "minmax":
            self.shift_, span = X.min(0), X.max(0) - X.min(0)
        elif self.kind == "zscore":
            self.shift_, span = X.mean(0), X.std(0)
        else:
            self.shift_, span = np.zeros(X.shape[1]), np.ones(X.shape[1])
        self.scale_ = np.where(span > 0, span, 1.0)

    def _transform_instances(self, X):
        return (X - self.shift_) / self.scale_
