"""scikit-learn-compatible bases for MIL estimators.

``__init__`` stores parameters only; ``fit(X, y)`` takes a :class:`~milbench.data.bags.Bags` or a
list of (n_i, d) arrays with 0/1 or ±1 labels and returns self; ``decision_function`` gives
bag scores (positive class when > 0) and is separate from ``predict``.
"""
from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Protocol, runtime_checkable

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions

from milbench.data.bags import BagError, Bags, check_bags, unstack


def validate_params(est):
    """Check the parameters an estimator declares in scikit-learn's ``_parameter_constraints``
    (types, ranges, options), then the rules between parameters that those cannot express (its
    optional ``_check_parameter_rules()``), before any work: a negative C is an error, not a
    silently bad fit.  ``fit`` calls it, and so does the workflow's parse-time method check."""
    if hasattr(est, "_parameter_constraints"):
        est._validate_params()
    check = getattr(est, "_check_parameter_rules", None)
    if check is not None:
        check()


def warn_cap(est, param, cap, what, stacklevel=3):
    """Convergence is never silent: a fit that stopped at its cap warns with
    scikit-learn's ``ConvergenceWarning``, naming the estimator, the cap and the parameter to
    raise, e.g. "MISVM stopped at max_iter=50 SVM fits without the witnesses settling; raise
    max_iter".  ``what`` completes the sentence after the cap.  Every iterative estimator also
    reports ``diagnostics_["converged"]`` (1 or 0, an int) and ``diagnostics_["n_iter"]``."""
    warnings.warn(f"{type(est).__name__} stopped at {param}={cap} {what}; raise {param}",
                  ConvergenceWarning, stacklevel=stacklevel)


def lbfgs_status(res):
    """(converged, at_cap) of a scipy L-BFGS-B result: converged when it met its tolerance
    (``res.success``); at its cap when it stopped at ``maxiter`` / ``maxfun`` (status 1).
    An abnormal line-search stop (status 2) is neither."""
    return int(bool(res.success)), int(res.status) == 1


class MILClassifier(ClassifierMixin, BaseEstimator):
    """Base for bag classifiers.  ``fit`` validates the input once (:func:`check_bags`) and
    hands subclasses the stacked form: they implement ``_fit(X, offsets, y01)`` and
    ``_decision(X, offsets)`` on the (N, d) float64 instance matrix and its bag offsets."""

    def fit(self, X, y):
        validate_params(self)
        Xs, offsets, y01, classes = check_bags(X, y)
        self.classes_ = classes
        self.n_features_in_ = Xs.shape[1]
        self._fit(Xs, offsets, y01)
        return self

    def _check_predict_input(self, X):
        """(instances, offsets) of bags to score, checked like ``fit``'s and for their width."""
        Xs, offsets, _, _ = check_bags(X)
        if Xs.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {Xs.shape[1]} features; fitted with {self.n_features_in_}")
        return Xs, offsets

    def decision_function(self, X):
        """Bag scores; > 0 means the positive class. Used for AUROC."""
        return np.asarray(self._decision(*self._check_predict_input(X)), dtype=float)

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.three_d_array = True
        return tags


def check_sample_weight(sample_weight, n_bags):
    """None, or one finite non-negative weight per bag (not all zero) as a float array."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=float)
    if w.shape != (n_bags,) or (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
        raise BagError("sample_weight must be one finite non-negative weight per bag, not all zero")
    return w


class WeightedMILClassifier(MILClassifier):
    """A bag classifier that takes per-bag ``sample_weight`` (used by bag-level boosting).
    Subclasses implement ``_fit(X, offsets, y01, sample_weight)``; the weights are validated
    here."""

    def fit(self, X, y, sample_weight=None):
        validate_params(self)
        Xs, offsets, y01, classes = check_bags(X, y)
        self.classes_ = classes
        self.n_features_in_ = Xs.shape[1]
        self._fit(Xs, offsets, y01, check_sample_weight(sample_weight, len(offsets) - 1))
        return self


class MILTransformer(TransformerMixin, BaseEstimator):
    """Base for selectors / reducers. Subclasses implement ``_fit(X, offsets, y01)`` (the
    stacked float64 instances and bag offsets of :func:`check_bags`) and
    ``_transform_instances(X)`` mapping a stacked (N, d) instance matrix to (N, k).

    ``transform`` keeps the container type: Bags in -> Bags out, list in -> list out.  A
    transformer that changes no value (``_passes_through``: ``scale: none``, a selection of every
    column in order) returns a Bags container itself, uncopied: a transductive fit transforms
    every page it is not trained on, and a float64 round trip of them all would cost more than
    some fits (docs/performance.md).
    """

    def fit(self, X, y=None):
        validate_params(self)
        Xs, offsets, y01, _ = check_bags(X, y, require_both_classes=y is not None)
        self.n_features_in_ = Xs.shape[1]
        self._fit(Xs, offsets, y01)
        return self

    def transform(self, X):
        if isinstance(X, Bags):
            if self._passes_through():
                return self._check_width(X)
            return X.with_instances(self._transform_instances(X.instances.astype(float)))
        Xs, offsets, _, _ = check_bags(X)
        return unstack(self._transform_instances(Xs), offsets)

    def _passes_through(self):
        """Whether ``_transform_instances`` returns every value as it is, bit for bit."""
        return False

    def _check_width(self, bags):
        """``bags`` (a Bags container), after checking it has the features fitted on."""
        if bags.n_features != self.n_features_in_:
            raise ValueError(f"{type(self).__name__}: X has {bags.n_features} features; "
                             f"fitted with {self.n_features_in_}")
        return bags

    def fit_transform(self, X, y=None, **fit_params):
        return self.fit(X, y).transform(X)


class FeatureSubsetTransformer(MILTransformer):
    """Transformer that keeps a subset of columns ``self.support_`` (indices, ranked)."""

    def _transform_instances(self, X):
        return X[:, self.support_]

    def _passes_through(self):
        support = np.asarray(self.support_)
        return support.dtype.kind in "iu" and np.array_equal(support,
                                                             np.arange(self.n_features_in_))

    def get_support(self, indices=True):
        if indices:
            return np.asarray(self.support_)
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.support_] = True
        return mask


@runtime_checkable
class StagedSelector(Protocol):
    """A selector with a fold stage: the expensive, classifier-independent part of its fit,
    computed once per training fold and served to every fit sharing it from a ``StageStore``
    (:mod:`milbench.selectors.stage_store`; planned and stored by
    :mod:`milbench.experiment.stages`).

    A selector class claims a stage by declaring ``_stage_rule`` (a ``StageRule``); it then
    takes a ``stages`` parameter (None or a ``StageStore``) and implements :meth:`stage_state`,
    and its ``_fit`` computes that same state itself when the store has none, so a served fit
    and a normal one give identical results.  When the state depends on the feature views
    (``StageRule.views``) it also implements ``resolve_views(X, n_features)`` (as
    :class:`~milbench.selectors.view_baselines.ViewSelector` does), which the experiment calls
    on the training container before :meth:`stage_state`.  Checked by
    :func:`milbench.testing.check_stage_protocol`.
    """

    stages: object

    def stage_state(self, X, offsets, y01) -> dict:
        """The state of stacked float64 training instances ``X`` (N, d), bag ``offsets``
        (n_bags + 1,) and 0/1 labels ``y01``, as ``dict[str, np.ndarray]``."""


# The parameter constraints estimators declare most (scikit-learn ``_parameter_constraints``).
POSITIVE = [Interval(Real, 0, None, closed="neither")]
NON_NEGATIVE = [Interval(Real, 0, None, closed="left")]
REAL = [Interval(Real, None, None, closed="neither")]
COUNT = [Interval(Integral, 1, None, closed="left")]
COUNT_OR_ZERO = [Interval(Integral, 0, None, closed="left")]
PROBABILITY = [Interval(Real, 0, 1, closed="both")]
# a size given as a fraction or a count (n_from_fraction)
FRACTION_OR_COUNT = [Interval(Real, 0, 1, closed="right"), Interval(Integral, 1, None, closed="left")]
# an RBF / polynomial width; None means 1 / n_features
GAMMA = [*POSITIVE, None]
# a seed for numpy's ``default_rng``: scikit-learn's random_state (None, an int, a RandomState)
# or a numpy Generator; estimators that hand the seed to scikit-learn declare "random_state"
SEED = ["random_state", np.random.Generator]
# a single-instance scikit-learn classifier by name (milbench.utils.learners.make_estimator)
# and its parameters
ESTIMATOR = [str]
ESTIMATOR_PARAMS = [dict, None]
# the views of a multi-view data set: view sizes, (start, stop) pairs, or name -> (start, stop)
VIEWS = ["array-like", dict, None]


def options(values):
    """Constraint: one of ``values`` (strings)."""
    return [StrOptions(set(values))]


def resolve_gamma(gamma, n_features):
    """A kernel width declared as ``GAMMA``: ``gamma`` itself, or 1 / n_features when None."""
    return 1.0 / max(int(n_features), 1) if gamma is None else float(gamma)


def n_from_fraction(value, total):
    """A target size given as a fraction of ``total`` (0 < value <= 1) or an integer count."""
    if isinstance(value, (float, np.floating)) and 0 < value <= 1 and not float(value).is_integer():
        return max(1, int(round(value * total)))
    if isinstance(value, float) and value == 1.0:
        return total
    n = int(value)
    if n < 1:
        raise ValueError(f"target size must be a fraction in (0, 1] or a positive integer, got {value}")
    return min(n, total)
