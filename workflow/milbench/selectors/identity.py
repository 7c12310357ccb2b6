"""[none]: no selection (the "ORI" rows of the papers)."""
from __future__ import annotations

import numpy as np

from milbench.base import FeatureSubsetTransformer


class NoSelection(FeatureSubsetTransformer):
    """Keeps every feature; lets 'no selection' run through the same pipeline as the others."""

    def _fit(self, bags, y):
        self.support_ = np.arange(bags[0].shape[1])
