"""What a classifier implements to offer HyDR-MI (Zafra et al. 2013, §3.2) a faster subset
fitness than refitting it on every inner fold for every chromosome.

HyDR-MI's fitness of a feature subset is sensitivity × specificity of the target classifier on
inner folds of the training bags.  The reference path refits ``clone(classifier)`` on each
fold's bags restricted to the subset (:class:`milbench.selectors.hydr.RefitEvaluator`).  A
classifier can do better by implementing one or both methods below (structural protocols: no
base class, nothing to import):

* :class:`SubsetFitness` -- ``fitness_evaluator(X, offsets, y, folds)`` returns an object whose
  ``predict(cols)`` gives the pooled 0/1 predictions on the folds' validation bags (fold order)
  for the subset ``cols``, *equal* to the reference path's, or None when it cannot be exact
  (MI-Simple, MI-Wrapper, Citation-kNN);
* :class:`WarmSubsetFitness` -- ``warm_fitness_evaluator(X, offsets, y, folds, restarts)``
  returns an object whose ``predict_warm(cols, source)`` returns (predictions, state): a fit
  started from ``source``, the state of a related subset (None: a cold fit, the reference
  path's predictions), or None when it cannot (EM-DD, MIDD, MDD, MILR; ``warm_start=True``).

``X`` (instances × the filter's features, C-contiguous float64) and ``offsets`` are the
training bags stacked, ``y`` their 0/1 labels, ``folds`` the inner (training, validation)
index pairs over the bags.  The evaluator reproduces the fit / predict path of the class that
defines the method: a subclass that overrides any of :data:`FIT_PATH` does not offer the
inherited method (:func:`offered`), so a changed classifier falls back to the reference path
instead of being scored as its parent.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from milbench.base import validate_params

#: the methods whose override makes an inherited subset evaluator not reproduce the class
FIT_PATH = ("fit", "predict", "decision_function", "_fit", "_decision")


class SubsetPredictor(Protocol):
    def predict(self, cols: np.ndarray) -> np.ndarray: ...


class WarmSubsetPredictor(Protocol):
    def predict_warm(self, cols: np.ndarray, source: object) -> tuple[np.ndarray, object]: ...


@runtime_checkable
class SubsetFitness(Protocol):
    """A classifier offering an exact fast subset fitness (module docstring)."""

    def fitness_evaluator(self, X, offsets, y, folds) -> SubsetPredictor | None: ...


@runtime_checkable
class WarmSubsetFitness(Protocol):
    """A classifier offering a warm-started subset fitness (module docstring)."""

    def warm_fitness_evaluator(self, X, offsets, y, folds,
                               restarts) -> WarmSubsetPredictor | None: ...


#: the method each protocol asks for
METHOD = {SubsetFitness: "fitness_evaluator", WarmSubsetFitness: "warm_fitness_evaluator"}


def offered(classifier, protocol):
    """``classifier``'s bound method of ``protocol`` (:class:`SubsetFitness` or
    :class:`WarmSubsetFitness`), after checking its parameters as a fit would; None when it
    does not implement it, or when its class overrides a :data:`FIT_PATH` method of the class
    that defines it."""
    if not isinstance(classifier, protocol):
        return None
    name = METHOD[protocol]
    cls = type(classifier)
    owner = next((c for c in cls.__mro__ if name in vars(c)), None)
    if owner is None or any(getattr(cls, m, None) is not getattr(owner, m, None) for m in FIT_PATH):
        return None
    validate_params(classifier)              # what the reference path checks on every fit
    return getattr(classifier, name)

