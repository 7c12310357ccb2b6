"""MIBoost (Xu & Frank 2004, "Logistic regression and boosting for labeled bags of instances",
PAKDD, §4; Weka's ``MIBoost``) [mi-boost], one of the classifiers of Zafra et al. (2013),
Information Sciences, §4.1.2.

Boosting at the bag level with an instance-level weak learner, under the collective assumption
that a bag's log-odds is the mean of its instances' log-odds (the geometric mean of instance
probabilities, Xu & Frank eq. for Pr(y | b)):

1. bag weights W_i = N/B (N instances, B bags);
2. for m = 1..M:
   a. every instance inherits its bag's label and the weight W_i / n_i; fit the weak learner
      h_m(x) ∈ {−1, +1} (``estimator``: "stump" = DecisionStump, "tree" for REPTree) on them;
   b. bag error e_i = (1/n_i) Σ_j 1[h_m(x_ij) ≠ y_i];
   c. if every e_i ≤ 0.5 or every e_i ≥ 0.5 stop (Weka: keep this learner with weight 1 only if
      it is the first, else drop it);
   d. c_m = argmin_c Σ_i W_i exp((2e_i − 1) c) (1-D convex; solved to machine precision by
      bracketing the root of the derivative — Weka uses a quasi-Newton search); stop if c_m ≤ 0;
   e. W_i ← W_i exp((2e_i − 1) c_m), renormalised to sum to N.
3. bag score F(b) = Σ_m c_m · (1/n_b) Σ_j h_m(x_bj) — the mean over instances of the additive
   instance model, i.e. the geometric-mean bag probability P(+|b) = σ(F(b)); predict F(b) > 0.

Weka's optional discretisation of the inputs (-B bins, default off) is not offered.  scikit-
learn's DecisionTreeClassifier stands in for REPTree (no reduced-error pruning: bound it with
``estimator_params``, e.g. {"max_depth": 3} or {"min_samples_leaf": 5}; a fully grown tree is
usually perfect on its training bags at step c and MIBoost then equals a single tree).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit
from sklearn.utils.validation import has_fit_parameter

from milbench.base import COUNT, ESTIMATOR, ESTIMATOR_PARAMS, SEED, MILClassifier
from milbench.classifiers._boosting import STOP_CODES
from milbench.utils.learners import make_estimator


def solve_bag_weight(W, e):
    """c = argmin_c Σ_i W_i exp((2e_i − 1) c); +inf when no bag has e_i > 0.5 and ≤ 0 returned as
    0.0 when the minimiser is not positive."""
    d = 2.0 * np.asarray(e, float) - 1.0
    W = np.asarray(W, float)
    if not (d > 0).any():
        return np.inf
    if np.dot(W, d) >= 0:                      # derivative at 0 is ≥ 0: minimiser ≤ 0
        return 0.0
    dmax = d.max()
    # g(c) = e^{-c·dmax} Σ W d e^{c d}: same sign as the derivative, no overflow
    g = lambda c: float(np.dot(W * d, np.exp(c * (d - dmax))))  # noqa: E731
    hi = 1.0
    while g(hi) < 0:
        hi *= 2.0
        if hi > 1e6:
            return np.inf
    return brentq(g, 0.0, hi, xtol=1e-12, rtol=1e-12)


class MIBoost(MILClassifier):
    """Bag-level boosting of an instance-level weak learner (see module docstring).

    estimator : "stump" (DecisionStump, Weka's default base) or any make_estimator name whose
                ``fit`` accepts ``sample_weight`` ("tree" stands in for REPTree).
    n_estimators : maximum number of boosting rounds (Weka -I, default 10).

    ``diagnostics_["converged"]`` is always 1 and ``n_iter`` = boosting rounds kept:
    ``n_estimators`` sets the size of the additive model (boosting has no convergence criterion
    to miss, as for scikit-learn's AdaBoost), and ending early (``stop``: every bag learnt, no
    bag learnt, no gain) is the algorithm's own rule.
    """

    _parameter_constraints = {
        "estimator": ESTIMATOR,
        "estimator_params": ESTIMATOR_PARAMS,
        "n_estimators": COUNT,
        "random_state": SEED,
    }

    def __init__(self, estimator="stump", estimator_params=None, n_estimators=10,
                 random_state=None):
        self.estimator = estimator
        self.estimator_params = estimator_params
        self.n_estimators = n_estimators
        self.random_state = random_state

    def _fit(self, X, off, y01):
        sizes = np.diff(off)
        N, B = len(X), len(sizes)
        yi = np.repeat(y01, sizes)
        W = np.full(B, N / B)
        rng = np.random.default_rng(self.random_state)
        self.estimators_, self.estimator_weights_ = [], []
        stop = "max_rounds"
        for m in range(int(self.n_estimators)):
            est = make_estimator(self.estimator, self.estimator_params,
                                 int(rng.integers(2**31 - 1)))
            if not has_fit_parameter(est, "sample_weight"):
                raise ValueError(f"MIBoost needs a base estimator that accepts sample_weight; "
                                 f"{type(est).__name__} does not")
            est.fit(X, yi, sample_weight=np.repeat(W / sizes, sizes))
            wrong = (est.predict(X) != yi).astype(float)
            e = np.add.reduceat(wrong, off[:-1]) / sizes
            c = solve_bag_weight(W, e) if (e > 0.5).any() and (e < 0.5).any() else np.inf
            if not np.isfinite(c) or c <= 0:
                stop = ("perfect" if not (e > 0.5).any() else
                        "too_wrong" if not (e < 0.5).any() else "no_gain")
                if m == 0:
                    self.estimators_.append(est)
                    self.estimator_weights_.append(1.0)
                break
            self.estimators_.append(est)
            self.estimator_weights_.append(float(c))
            W = W * np.exp((2.0 * e - 1.0) * c)
            W *= N / W.sum()
        self.estimator_weights_ = np.asarray(self.estimator_weights_)
        self.diagnostics_ = {"n_iter": len(self.estimators_), "converged": 1,
                             "stop": STOP_CODES[stop]}

    def decision_instances(self, X):
        """Additive instance model Σ_m c_m h_m(x), h ∈ {−1, +1}, for bags X (stacked order)."""
        return self._instance_scores(self._check_predict_input(X)[0])

    def _instance_scores(self, Xs):
        F = np.zeros(len(Xs))
        for c, est in zip(self.estimator_weights_, self.estimators_):
            F += c * (2.0 * est.predict(Xs) - 1.0)
        return F

    def _decision(self, X, off):
        return np.add.reduceat(self._instance_scores(X), off[:-1]) / np.diff(off)

    def predict_proba(self, X):
        """Geometric-mean bag probability σ(F(b)) (Weka's MIBoost distribution)."""
        P = expit(self.decision_function(X))
        return np.column_stack([1.0 - P, P])
