"""[pca]: PCA of all training instances, the "PCA" baseline of Sun, Ng & Zhou (2010), AAAI,
"Experiments"."""
from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA

from milbench.base import FRACTION_OR_COUNT, MILTransformer, n_from_fraction
from milbench.selectors.stage_store import StageRule, StageStore


def truncated_pca(state, k, random_state=None):
    """A fitted ``PCA(k, svd_solver="full")`` from a full-SVD state: the same attributes as a
    k-component fit (its SVD is the full one, sliced; signs are flipped per component)."""

    def head(a):        # as sklearn: a copy of the first k, memory layout kept
        return np.array(a[:k], copy=True)

    ev = state["explained_variance"]
    n, d = int(state["n_samples"][0]), len(state["mean"])
    p = PCA(n_components=k, svd_solver="full", random_state=random_state)
    p._fit_svd_solver = "full"
    p.n_features_in_ = d
    p.mean_ = np.array(state["mean"], copy=True)
    p.noise_variance_ = np.mean(ev[k:]) if k < min(n, d) else 0.0
    p.n_samples_ = n
    p.n_components_ = k
    p.components_ = head(state["components"])
    p.explained_variance_ = head(ev)
    p.explained_variance_ratio_ = head(state["explained_variance_ratio"])
    p.singular_values_ = head(state["singular_values"])
    return p


class BagPCA(MILTransformer):
    """PCA fitted on the stacked training instances; ``dims`` is a fraction of D or a count.
    Fold stage (see :mod:`~milbench.selectors.stage_store`): the full SVD; ``dims`` only truncates
    it."""

    _stage_rule = StageRule(downstream=("dims",), ignored=("random_state",))

    _parameter_constraints = {
        "dims": FRACTION_OR_COUNT,
        "random_state": ["random_state"],
        "stages": [StageStore, None],
    }

    def __init__(self, dims=0.3, random_state=None, stages=None):
        self.dims = dims
        self.random_state = random_state
        self.stages = stages

    def stage_state(self, X, offsets, y):
        """Fold stage (see :mod:`~milbench.selectors.stage_store`): the full SVD of the stacked
        instances."""
        full = PCA(svd_solver="full").fit(X)
        return {"mean": full.mean_, "components": full.components_,
                "explained_variance": full.explained_variance_,
                "explained_variance_ratio": full.explained_variance_ratio_,
                "singular_values": full.singular_values_,
                "n_samples": np.array([X.shape[0]], dtype=np.int64)}

    def _fit(self, X, offsets, y):
        state = None if self.stages is None else self.stages.lookup(self, X, offsets, y)
        if state is None:
            state = self.stage_state(X, offsets, y)
        n, d = int(state["n_samples"][0]), len(state["mean"])
        k = min(n_from_fraction(self.dims, d), n)
        self.pca_ = truncated_pca(state, k, self.random_state)
        self.n_components_ = k

    def _transform_instances(self, X):
        return self.pca_.transform(X)
