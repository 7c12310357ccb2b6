"""[lda] The LDA baseline of Sun, Ng & Zhou (2010), AAAI, "Experiments: Configuration".

Every instance inherits its bag's label (instances of negative bags are negative, all instances
of positive bags are labelled positive), then scikit-learn's LinearDiscriminantAnalysis is fitted
on the stacked training instances.  With two classes LDA yields one dimension, as in the paper.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from milbench.base import NON_NEGATIVE, PROBABILITY, MILTransformer, options
from milbench.selectors.stage_store import (
    StageRule,
    StageStore,
    pack_attributes,
    unpack_attributes,
)


class BagLDA(MILTransformer):
    """Instance-level LDA with inherited bag labels (2 classes -> 1 output dimension).

    Parameters are passed to :class:`sklearn.discriminant_analysis.LinearDiscriminantAnalysis`
    (``solver``, ``shrinkage``, ``tol``); ``n_components`` is always 1 for binary bags.
    """

    _stage_rule = StageRule()

    _parameter_constraints = {                   # as LinearDiscriminantAnalysis declares them
        "solver": options(("svd", "lsqr", "eigen")),
        "shrinkage": [*options(("auto",)), *PROBABILITY, None],
        "tol": NON_NEGATIVE,
        "stages": [StageStore, None],
    }

    def __init__(self, solver="svd", shrinkage=None, tol=1e-4, stages=None):
        self.solver = solver
        self.shrinkage = shrinkage
        self.tol = tol
        self.stages = stages

    def stage_state(self, X, offsets, y01):
        """Fold stage (see :mod:`~milbench.selectors.stage_store`): the fitted discriminant's
        attributes."""
        yi = np.repeat(y01, np.diff(offsets))
        lda = self._make_lda()
        with warnings.catch_warnings():  # constant columns (87 in the Corel sets) are expected
            warnings.filterwarnings("ignore", message="Variables are collinear")
            lda.fit(X, yi)
        return pack_attributes(lda, "lda.")

    def _make_lda(self):
        return LinearDiscriminantAnalysis(solver=self.solver, shrinkage=self.shrinkage,
                                          tol=self.tol, n_components=1)

    def _fit(self, X, offsets, y01):
        state = None if self.stages is None else self.stages.lookup(self, X, offsets, y01)
        if state is None:
            state = self.stage_state(X, offsets, y01)
        self.lda_ = unpack_attributes(self._make_lda(), state, "lda.")
        self.n_components_ = 1
        self.diagnostics_ = {"n_components": 1}

    def _transform_instances(self, X):
        return self.lda_.transform(X)
