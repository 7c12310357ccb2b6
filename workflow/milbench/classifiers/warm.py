"""Warm starts for the subset fitness of HyDR-MI (Zafra et al. 2013): a model fitted on one
feature subset restricted to another subset's features.  The warm evaluators that use it
(:class:`~milbench.classifiers.diverse_density.WarmDD`, :class:`~milbench.classifiers.milr.WarmMILR`)
sit beside their classifiers, whose internals they call, and are offered to HyDR-MI through
:class:`~milbench.selectors.fitness.WarmSubsetFitness`."""
from __future__ import annotations

import numpy as np


def restrict(src_cols, values, cols, fill=0.0):
    """Per-feature ``values`` (..., len(src_cols)) of sorted columns ``src_cols`` carried to the
    sorted columns ``cols``: (values (..., len(cols)) with ``fill`` where a column is new, shared
    (len(cols),) bool)."""
    src_cols, cols = np.asarray(src_cols), np.asarray(cols)
    at = np.minimum(np.searchsorted(src_cols, cols), len(src_cols) - 1)
    shared = src_cols[at] == cols
    return np.where(shared, np.asarray(values)[..., at], fill), shared
