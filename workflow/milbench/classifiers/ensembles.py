"""Bagging (Breiman 1996) and AdaBoost.M1 (Freund & Schapire 1996) over bags, around any milbench
classifier [mi-bagging], [mi-adaboost].

Zafra et al. (2013), Information Sciences, §4.1.2, evaluate Weka meta-learners with MI
wrappers: "AdaBoost&PART(MISimple)", "Bagging&PART(MIWrapper)" and "AdaBoost&PART(MIWrapper)".
Here the ensemble members are milbench MIL classifiers given as a registry config, e.g.
``base={"name": "mi-wrapper", "estimator": "tree"}`` (or an estimator instance), so those
configurations are written in config:

    {name: mi-bagging,  base: {name: mi-wrapper, estimator: tree}, n_estimators: 10}
    {name: mi-adaboost, base: {name: mi-simple,  estimator: tree}, n_estimators: 10}

Resampling / reweighting is over *bags*.  For MISimple (one feature vector per bag) this is exactly
Weka's AdaBoostM1/Bagging around SimpleMI.  Weka's "MIWrapper (AdaBoost&PART)" boosts the
propositional learner *inside* the wrapper (instance-level); ours boosts whole wrappers at the
bag level — a departure, stated here.  Decision trees stand in for PART (and REPTree /
DecisionStump).

* :class:`MIBagging` (Breiman 1996): each member is fitted on a bootstrap sample of the training
  bags (size ``max_samples`` × B, drawn with replacement within each class, so both classes are
  always present — a departure from plain bootstrap); bag score = mean member P(+) (members
  without ``predict_proba`` vote 0/1), ``decision_function`` = mean − 0.5.
* :class:`MIAdaBoost` (Freund & Schapire 1996 AdaBoost.M1 = two-class SAMME, Zhu et al. 2009):
  bag weights w_i = 1/B; member m is fitted with ``sample_weight`` = w when its ``fit`` accepts
  it, otherwise on a weighted resample of the bags (Weka's -Q); ε_m = Σ w·1[wrong] / Σ w;
  α_m = log((1 − ε_m)/ε_m); w_i ← w_i e^{α_m 1[wrong_i]}, renormalised.  Stops when ε_m ≥ 0.5 or
  ε_m = 0 (the member is kept, alone, only if it is the first — Weka's AdaBoostM1 rule).
  ``decision_function`` = Σ α_m (2ŷ_m − 1) / Σ α_m (hard votes, as AdaBoostM1); when boosting
  stopped with the first member alone, that member's own ``decision_function`` (Weka then
  returns the member's distribution).  A member that fits its training bags perfectly (e.g. an
  unpruned tree inside MIWrapper) ends boosting at round 1; bound the tree to boost it.
"""
from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import has_fit_parameter

from milbench import registry
from milbench.base import COUNT, SEED, MILClassifier, WeightedMILClassifier
from milbench.classifiers._boosting import STOP_CODES
from milbench.classifiers.wrapper import MIWrapper
from milbench.data.bags import unstack

# a member: a classifier registry config, an estimator, or None (MI-Wrapper around a tree)
BASE = [dict, HasMethods(["fit", "predict"]), None]


def make_member(base, seed):
    """A fresh, unfitted member from a registry config dict or an estimator instance (None:
    MI-Wrapper around a tree)."""
    if base is None:
        base = MIWrapper(estimator="tree")
    if isinstance(base, dict):
        if "name" not in base:
            raise ValueError(f"base config needs a 'name': {base!r}")
        est = registry.make("classifier", base)
    elif hasattr(base, "fit"):
        est = clone(base)
    else:
        raise TypeError(f"base must be a classifier config dict or an estimator, got {base!r}")
    if "random_state" in est.get_params() and est.get_params()["random_state"] is None:
        est.set_params(random_state=int(seed))
    return est


def _member_proba(est, bags):
    if hasattr(est, "predict_proba"):
        P = est.predict_proba(bags)
        return P[:, list(est.classes_).index(1)]
    return (est.predict(bags) == 1).astype(float)


class MIBagging(MILClassifier):
    """Bagging over bags of any milbench classifier (see module docstring)."""

    _parameter_constraints = {
        "base": BASE,
        "n_estimators": COUNT,
        "max_samples": [Interval(Real, 0, 1, closed="right")],
        "random_state": SEED,
    }

    def __init__(self, base=None, n_estimators=10, max_samples=1.0, random_state=None):
        self.base = base
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.random_state = random_state

    def _fit(self, X, offsets, y01):
        bags = unstack(X, offsets)
        rng = np.random.default_rng(self.random_state)
        classes = [np.flatnonzero(y01 == c) for c in (0, 1)]
        frac = float(self.max_samples)
        self.estimators_, self.samples_ = [], []
        for _ in range(int(self.n_estimators)):
            idx = np.concatenate([rng.choice(c, size=max(1, int(round(frac * len(c)))),
                                             replace=True) for c in classes])
            est = make_member(self.base, rng.integers(2**31 - 1))
            est.fit([bags[i] for i in idx], y01[idx])
            self.estimators_.append(est)
            self.samples_.append(idx)
        self.diagnostics_ = {"n_estimators": len(self.estimators_)}

    def predict_proba(self, X):
        bags = unstack(*self._check_predict_input(X))
        P = np.mean([_member_proba(e, bags) for e in self.estimators_], axis=0)
        return np.column_stack([1.0 - P, P])

    def _decision(self, X, offsets):
        bags = unstack(X, offsets)
        return np.mean([_member_proba(e, bags) for e in self.estimators_], axis=0) - 0.5


class MIAdaBoost(WeightedMILClassifier):
    """AdaBoost.M1 / two-class SAMME over bags of any milbench classifier (see module docstring).

    ``diagnostics_["converged"]`` is always 1 and ``n_iter`` = boosting rounds kept:
    ``n_estimators`` sets the size of the ensemble (boosting has no convergence criterion to
    miss), and ending early (``stop``: a perfect or a too weak member) is AdaBoost.M1's rule.
    """

    _parameter_constraints = {
        "base": BASE,
        "n_estimators": COUNT,
        "random_state": SEED,
    }

    def __init__(self, base=None, n_estimators=10, random_state=None):
        self.base = base
        self.n_estimators = n_estimators
        self.random_state = random_state

    def _fit(self, X, offsets, y01, sample_weight=None):
        bags = unstack(X, offsets)
        rng = np.random.default_rng(self.random_state)
        B = len(bags)
        w = np.full(B, 1.0 / B) if sample_weight is None else sample_weight / sample_weight.sum()
        self.estimators_, alphas = [], []
        stop, resampled = "max_rounds", False
        for m in range(int(self.n_estimators)):
            est = make_member(self.base, rng.integers(2**31 - 1))
            if has_fit_parameter(est, "sample_weight"):
                est.fit(bags, y01, sample_weight=w * B)
            else:
                resampled = True
                idx = rng.choice(B, size=B, replace=True, p=w)
                for _ in range(100):                        # both classes needed by members
                    if len(np.unique(y01[idx])) == 2:
                        break
                    idx = rng.choice(B, size=B, replace=True, p=w)
                est.fit([bags[i] for i in idx], y01[idx])
            wrong = est.predict(bags) != y01
            eps = float(np.dot(w, wrong) / w.sum())
            if eps >= 0.5 or eps == 0.0:
                stop = "perfect" if eps == 0.0 else "too_wrong"
                if m == 0:
                    self.estimators_.append(est)
                    alphas.append(1.0)
                break
            alpha = np.log((1.0 - eps) / eps)
            self.estimators_.append(est)
            alphas.append(alpha)
            w = w * np.exp(alpha * wrong)
            w /= w.sum()
        self.estimator_weights_ = np.asarray(alphas)
        self.diagnostics_ = {"n_iter": len(self.estimators_), "converged": 1,
                             "stop": STOP_CODES[stop],
                             "resampled": int(resampled)}

    def _decision(self, X, offsets):
        bags = unstack(X, offsets)
        if len(self.estimators_) == 1:            # Weka: a lone first model is used as it is
            return self.estimators_[0].decision_function(bags)
        votes = np.array([2.0 * (e.predict(bags) == 1) - 1.0 for e in self.estimators_])
        return self.estimator_weights_ @ votes / self.estimator_weights_.sum()
