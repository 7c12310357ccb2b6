"""[none]: no selection, the "ORI" rows of the papers (e.g. Sun, Ng & Zhou 2010; Zafra et al.
2013)."""
from __future__ import annotations

import numpy as np

from milbench.base import FeatureSubsetTransformer


class NoSelection(FeatureSubsetTransformer):
    """Keeps every feature; lets 'no selection' run through the same pipeline as the others.
    A Bags container passes through as it is (the same instances bit for bit, uncopied)."""

    _parameter_constraints = {}

    def _fit(self, X, offsets, y):
        self.support_ = np.arange(X.shape[1])
