"""A researcher's own MIL method, outside the library: each bag becomes the mean and the max of
its instances (an attention-free pooling), then an L2 logistic regression on those vectors.

Named in a config as ``pooling:MeanMaxPooling`` with ``code: [examples/own_method]``; see
examples/own_method/config.yaml and docs/usage.md, "Your own method, in three steps".
"""
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

# list of arrays or Bags -> stacked float64 instances, bag offsets, 0/1 labels; per-bag views
from milbench.data.bags import check_bags, unstack


class MeanMaxPooling(ClassifierMixin, BaseEstimator):
    """pooling: "mean", "max" or "meanmax" (both, concatenated); C: inverse L2 strength."""

    def __init__(self, pooling="meanmax", C=1.0):
        self.pooling = pooling
        self.C = C

    def _embed(self, bags):
        parts = {"mean": [np.array([b.mean(0) for b in bags])],
                 "max": [np.array([b.max(0) for b in bags])]}
        if self.pooling not in ("mean", "max", "meanmax"):
            raise ValueError(f"pooling must be mean, max or meanmax, got {self.pooling!r}")
        chosen = parts["mean"] + parts["max"] if self.pooling == "meanmax" else parts[self.pooling]
        return np.hstack(chosen)

    def fit(self, X, y):
        if not self.C > 0:
            raise ValueError(f"C must be > 0, got {self.C!r}")
        Xs, offsets, y01, self.classes_ = check_bags(X, y)
        Z = self._embed(unstack(Xs, offsets))
        self.n_features_in_ = Xs.shape[1]
        self.scaler_ = StandardScaler().fit(Z)
        self.model_ = LogisticRegression(C=self.C, max_iter=1000).fit(self.scaler_.transform(Z), y01)
        return self

    def decision_function(self, X):
        Xs, offsets, _, _ = check_bags(X)
        if Xs.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {Xs.shape[1]} features; fitted with {self.n_features_in_}")
        Z = self._embed(unstack(Xs, offsets))
        return self.model_.decision_function(self.scaler_.transform(Z))

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
