"""[pca]: principal components of all training instances (midr.txt baseline "PCA")."""
from __future__ import annotations

import numpy as np

from ..base import MILTransformer, n_from_fraction


class BagPCA(MILTransformer):
    """PCA fitted on the stacked training instances; ``dims`` is a fraction of D or a count."""

    def __init__(self, dims=0.3, random_state=None):
        self.dims = dims
        self.random_state = random_state

    def _fit(self, bags, y):
        from sklearn.decomposition import PCA
        X = np.concatenate(bags)
        k = min(n_from_fraction(self.dims, X.shape[1]), X.shape[0])
        self.pca_ = PCA(n_components=k, svd_solver="full", random_state=self.random_state).fit(X)
        self.n_components_ = k

    def _transform_instances(self, X):
        return self.pca_.transform(X)
