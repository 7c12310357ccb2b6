"""Feature scaling fitted on training-fold instances only."""
from __future__ import annotations

import numpy as np

from milbench.base import MILTransformer, options

KINDS = ("minmax", "zscore", "none")


class BagScaler(MILTransformer):
    """``minmax`` to [0, 1] or ``zscore``, statistics from the stacked training instances.
    Constant features map to 0 (no division by zero).  ``none`` passes a Bags container through
    (:class:`~milbench.base.MILTransformer`): (x − 0) / 1 in float64, stored back as float32,
    is x bit for bit."""

    _parameter_constraints = {
        "kind": options(KINDS),
    }

    def __init__(self, kind="minmax"):
        self.kind = kind

    def _fit(self, X, offsets, y):
        if self.kind == "none":
            self.shift_, self.scale_ = np.zeros(X.shape[1]), np.ones(X.shape[1])
            return
        if self.kind == "minmax":
            self.shift_, span = X.min(0), X.max(0) - X.min(0)
        elif self.kind == "zscore":
            self.shift_, span = X.mean(0), X.std(0)
        self.scale_ = np.where(span > 0, span, 1.0)

    def _passes_through(self):
        return self.kind == "none"

    def _transform_instances(self, X):
        return (X - self.shift_) / self.scale_
