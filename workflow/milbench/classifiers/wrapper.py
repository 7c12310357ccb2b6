"""MIWrapper (Frank & Xu 2003, "Applying propositional learning algorithms to multi-instance
data"; Weka's ``MIWrapper``) [mi-wrapper], one of the classifiers of Zafra et al. (2013),
Information Sciences, §4.1.2.

Training: every instance inherits its bag's label and a weight, and one single-instance
scikit-learn classifier (``estimator``: any name :func:`milbench.utils.learners.make_estimator` knows)
is fitted on all instances.  Weights (``weighting``):

* ``"inverse"`` (default; Weka's -A 3): w_ij = N / (B · n_i), proportional to 1/|bag|, so every
  bag carries the same total weight and the average instance weight is 1;
* ``"none"``: w_ij = 1.

Bag weights passed as ``fit(..., sample_weight=...)`` multiply these (used by bag-level boosting).
Estimators whose ``fit`` takes no ``sample_weight`` (e.g. k-NN) are fitted unweighted (a
warning is issued when weighting would matter).

Prediction aggregates instance class probabilities p_ij = P(+ | x_ij) (``aggregation``):

* ``"arithmetic"`` (Weka's default -P 1): P_i = mean_j p_ij;
* ``"geometric"``: P_i ∝ Π_j p_ij^{1/n_i} normalised against Π_j (1 − p_ij)^{1/n_i}, i.e.
  log-odds(P_i) = mean_j log-odds(p_ij), with p clipped to [0.001, 0.999] as Weka does;
* ``"max"``: P_i = max_j p_ij.

``decision_function`` is P_i − 0.5 (arithmetic, max) or the mean log-odds (geometric); both are
> 0 exactly when P_i > 0.5.  Estimators without ``predict_proba`` (LinearSVC, SVC without
probability=True) give p = σ(decision_function) — a departure: Weka's SMO without logistic models
gives 0/1 probabilities.  On singleton bags with ``weighting`` "inverse" or "none" every weight is
1 and MIWrapper equals its base classifier (tested).

The learners of Zafra et al., PART (rules) and REPTree are stood in for by scikit-learn's
DecisionTreeClassifier (``estimator="tree"``); DecisionStump by ``"stump"``; SMO by ``"svm"``;
NaiveBayes by ``"naive-bayes"``.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.special import expit
from sklearn.base import clone
from sklearn.utils.validation import has_fit_parameter

from milbench.base import ESTIMATOR, ESTIMATOR_PARAMS, WeightedMILClassifier, options
from milbench.utils.learners import make_estimator, reusable, sklearn_checked

AGGREGATIONS = ("arithmetic", "geometric", "max")
WEIGHTINGS = ("inverse", "none")
_CLIP = 1e-3          # Weka MIWrapper clips instance probabilities to [0.001, 0.999] (geometric)


def instance_weights(sizes, weighting, bag_weight=None):
    """Per-instance training weights from bag sizes (stacked order)."""
    sizes = np.asarray(sizes)
    if weighting == "inverse":
        w = np.repeat(sizes.sum() / (len(sizes) * sizes), sizes).astype(float)
    elif weighting == "none":
        w = np.ones(sizes.sum())
    else:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}")
    if bag_weight is not None:
        bw = np.asarray(bag_weight, dtype=float)
        w = w * np.repeat(bw * len(bw) / bw.sum(), sizes)
    return w


def positive_proba(est, X):
    """P(class 1 | x) from a fitted scikit-learn classifier trained on 0/1 labels."""
    if hasattr(est, "predict_proba"):
        P = est.predict_proba(X)
        return P[:, list(est.classes_).index(1)]
    return expit(est.decision_function(X))


def fit_instances(est, X, yi, w, weighted=None):
    """Fit ``est`` on instances with weights ``w`` (unweighted, with a warning when the weights
    matter, if its ``fit`` takes no ``sample_weight``; ``weighted``: whether it does, if known)."""
    if has_fit_parameter(est, "sample_weight") if weighted is None else weighted:
        return est.fit(X, yi, sample_weight=w)
    if not np.allclose(w, w[0]):
        warnings.warn(f"{type(est).__name__} takes no sample_weight; MIWrapper fits it "
                      "unweighted", stacklevel=3)
    return est.fit(X, yi)


def aggregate(p, off, aggregation):
    """(decision, P(+)) per bag from instance probabilities ``p`` of bags stacked at ``off``."""
    sizes = np.diff(off)
    if aggregation == "arithmetic":
        P = np.add.reduceat(p, off[:-1]) / sizes
        return P - 0.5, P
    if aggregation == "max":
        P = np.maximum.reduceat(p, off[:-1])
        return P - 0.5, P
    pc = np.clip(p, _CLIP, 1 - _CLIP)
    z = np.add.reduceat(np.log(pc) - np.log1p(-pc), off[:-1]) / sizes
    return z, expit(z)


class MIWrapper(WeightedMILClassifier):
    """Instances inherit bag labels -> any scikit-learn classifier -> aggregate probabilities."""

    _parameter_constraints = {
        "estimator": ESTIMATOR,
        "estimator_params": ESTIMATOR_PARAMS,
        "aggregation": options(AGGREGATIONS),
        "weighting": options(WEIGHTINGS),
        "random_state": ["random_state"],
    }

    def __init__(self, estimator="logistic", estimator_params=None, aggregation="arithmetic",
                 weighting="inverse", random_state=None):
        self.estimator = estimator
        self.estimator_params = estimator_params
        self.aggregation = aggregation
        self.weighting = weighting
        self.random_state = random_state

    def _fit(self, X, off, y01, bag_weight=None):
        sizes = np.diff(off)
        est = make_estimator(self.estimator, self.estimator_params, self.random_state)
        fit_instances(est, X, np.repeat(y01, sizes),
                      instance_weights(sizes, self.weighting, bag_weight))
        self.estimator_ = est

    def _instance_proba(self, X):
        return positive_proba(self.estimator_, X)

    def _bag_scores(self, X, off):
        """(decision, P(+)) per bag."""
        return aggregate(self._instance_proba(X), off, self.aggregation)

    def _decision(self, X, offsets):
        return self._bag_scores(X, offsets)[0]

    def predict_proba(self, X):
        P = self._bag_scores(*self._check_predict_input(X))[1]
        return np.column_stack([1.0 - P, P])

    def decision_instances(self, X):
        """Instance scores whose bag aggregate is ``decision_function``: p − 0.5 (arithmetic,
        max) or clipped log-odds (geometric), for bags X in stacked order (a 2-D array is read
        as one-instance bags, i.e. as an instance matrix)."""
        Xs, _ = self._check_predict_input(X)
        p = self._instance_proba(Xs)
        if self.aggregation == "geometric":
            pc = np.clip(p, _CLIP, 1 - _CLIP)
            return np.log(pc) - np.log1p(-pc)
        return p - 0.5

    def fitness_evaluator(self, X, offsets, y, folds):
        """Fast feature-subset scoring for HyDR-MI
        (:class:`~milbench.selectors.fitness.SubsetFitness`: the same predictions as refitting
        ``clone(self)`` on each fold's bags restricted to the subset); None when it cannot be
        exact."""
        est = make_estimator(self.estimator, self.estimator_params, self.random_state)
        return SubsetInstances(est, X, offsets, y, folds, self.weighting, self.aggregation) \
            if reusable(est) else None


class SubsetInstances:
    """MI-Wrapper predictions on inner folds for a feature subset: each fold's instance rows,
    labels and weights are precomputed; a subset is scored by column selection and one clone
    of the base estimator per subset, refitted fold after fold."""

    def __init__(self, est, X, offsets, y, folds, weighting, aggregation):
        self.est, self.X, self.aggregation = est, X, aggregation
        self.weighted = has_fit_parameter(est, "sample_weight")
        sizes, y01 = np.diff(offsets), np.asarray(y).astype(np.int8)
        starts = np.asarray(offsets[:-1])

        def rows(idx):
            return np.repeat(starts[idx] - np.concatenate([[0], np.cumsum(sizes[idx])[:-1]]),
                             sizes[idx]) + np.arange(sizes[idx].sum())

        self.folds = [(rows(tr), np.repeat(y01[tr], sizes[tr]),
                       instance_weights(sizes[tr], weighting),
                       rows(va), np.concatenate([[0], np.cumsum(sizes[va])]))
                      for tr, va in folds]

    def predict(self, cols):
        """Pooled 0/1 predictions on the folds' validation bags (fold order)."""
        Xc = self.X[:, cols]
        est, out = clone(self.est), []           # one per call: evaluators serve threads too
        with sklearn_checked():
            for rows_tr, yi, w, rows_va, off_va in self.folds:
                fit_instances(est, Xc[rows_tr], yi, w, self.weighted)
                out.append(aggregate(positive_proba(est, Xc[rows_va]), off_va,
                                     self.aggregation)[0] > 0)
        return np.concatenate(out)
