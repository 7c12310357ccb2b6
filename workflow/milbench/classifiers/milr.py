"""Multiple-instance logistic regression (Ray & Craven 2005, ICML) [milr]; the classifier of Sun,
Ng & Zhou (2010), AAAI, "Experiments".

Instance probabilities p_ij = σ(wᵀx_ij + b) are combined into a bag probability P_i:

* ``softmax``   P_i = Σ_j p_ij e^{α p_ij} / Σ_j e^{α p_ij}       (Sun et al. 2010, α = 3.5)
* ``noisy-or``  P_i = 1 − Π_j (1 − p_ij)
* ``mean``      P_i = (1/n_i) Σ_j p_ij                                 (arithmetic mean)
* ``geometric`` P_i = G(p) / (G(p) + G(1 − p)), G the geometric mean;  equivalently
                P_i = σ(mean_j z_ij) (Ray & Craven's normalised geometric mean)

Loss: ½‖w‖² + C Σ_i logloss(y_i, P_i) (intercept not penalised), minimised with L-BFGS and the
analytic gradient.  On singleton bags every combination gives P_i = p_i, so MILR is then exactly
scikit-learn's ``LogisticRegression(C=C)`` (tested).
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit, log_expit
from sklearn.linear_model import LogisticRegression

from milbench.base import (
    COUNT,
    NON_NEGATIVE,
    POSITIVE,
    MILClassifier,
    lbfgs_status,
    options,
    warn_cap,
)
from milbench.classifiers.warm import restrict
from milbench.data.bags import segment_reduce, segment_softmax_weights, stack
from milbench.utils.cache import LRUCache, ReusesFits, fit_key
from milbench.utils.hashing import array_digest
from milbench.utils.lbfgsb import lbfgsb

COMBINE = ("softmax", "noisy-or", "mean", "geometric")
_EPS = 1e-12


def bag_probability(z, offsets, combine, alpha=3.5):
    """Bag probabilities P (n_bags,) from instance logits z (stacked by bag)."""
    sizes = np.diff(offsets)
    if combine == "geometric":
        return expit(segment_reduce(z, offsets, np.add) / sizes)
    if combine == "noisy-or":
        log_not = segment_reduce(-np.logaddexp(0.0, z), offsets, np.add)  # log Π(1 − p)
        return -np.expm1(log_not)
    p = expit(z)
    if combine == "mean":
        return segment_reduce(p, offsets, np.add) / sizes
    if combine == "softmax":
        return segment_reduce(p * segment_softmax_weights(p, offsets, alpha), offsets, np.add)
    raise ValueError(f"combine must be one of {COMBINE}, got {combine!r}")


def bag_logit(P):
    """Bag scores log P − log(1 − P) (> 0: positive), P clipped away from 0 and 1."""
    P = np.clip(P, _EPS, 1 - _EPS)
    return np.log(P) - np.log1p(-P)


def milr_loss_grad(theta, X, offsets, y, C, combine, alpha, fit_intercept=True):
    """Objective ½‖w‖² + C Σ logloss(y_i, P_i) and its gradient w.r.t. (w, b)."""
    d = X.shape[1]
    w, b = theta[:d], (theta[d] if fit_intercept else 0.0)
    z = X @ w + b
    sizes = np.diff(offsets)
    rep = lambda v: np.repeat(v, sizes)  # noqa: E731 - bag value -> its instances
    if combine == "geometric":
        m = segment_reduce(z, offsets, np.add) / sizes
        nll = -(y * log_expit(m) + (1 - y) * log_expit(-m)).sum()
        dz = rep((expit(m) - y) / sizes)
    elif combine == "noisy-or":
        log_not = segment_reduce(-np.logaddexp(0.0, z), offsets, np.add)  # log(1 − P)
        log_P = np.log(np.maximum(-np.expm1(log_not), _EPS))
        nll = -(y * log_P + (1 - y) * log_not).sum()
        p = expit(z)
        ratio = np.exp(log_not - log_P)  # (1 − P)/P
        dz = p * rep(1 - y - y * ratio)
    else:
        p = expit(z)
        if combine == "mean":
            P = segment_reduce(p, offsets, np.add) / sizes
            dP_dp = rep(1.0 / sizes)
        elif combine == "softmax":
            wts = segment_softmax_weights(p, offsets, alpha)
            P = segment_reduce(p * wts, offsets, np.add)
            dP_dp = wts * (1 + alpha * (p - rep(P)))
        else:
            raise ValueError(f"combine must be one of {COMBINE}, got {combine!r}")
        Pc = np.clip(P, _EPS, 1 - _EPS)
        nll = -(y * np.log(Pc) + (1 - y) * np.log1p(-Pc)).sum()
        dl_dP = (Pc - y) / (Pc * (1 - Pc))
        dz = rep(dl_dP) * dP_dp * p * (1 - p)
    f = 0.5 * w @ w + C * nll
    gw = w + C * (X.T @ dz)
    g = np.concatenate([gw, [C * dz.sum()]]) if fit_intercept else gw
    return f, g


class FitCache(LRUCache):
    """MILR fits of this process (:mod:`milbench.utils.cache`: reused only while reuse is on),
    keyed on the training data's bytes (sha1) and every parameter.  A selector that serves
    several grid points with one fit gives MILR the same projected bags for each of them: MIDR's
    45 points with C1 ≥ C2 of a 9 × 9 grid share one A per C2 (one A with ``stop="excess"``), so
    an inner CV over (C1, C2, C) would fit MILR on identical data up to 9 (45) times per C and
    inner fold.  A hit returns the solver result a fresh fit computes (tests); the key is a
    sha1 of the training data (:func:`~milbench.utils.hashing.array_digest`)."""

    def __init__(self, max_bytes=16 * 2**20, max_entries=4096):
        super().__init__(max_bytes, max_entries, sizeof=lambda res: res.x.nbytes + 200)

    def prepare(self, res):
        res.x.flags.writeable = False
        return res


FIT_CACHE = FitCache()


class MILR(ReusesFits, MILClassifier):
    """MI logistic regression with a choice of combining function (see module docstring).

    Parameters: C (inverse L2 strength, scikit-learn convention), combine, alpha (softmax
    sharpness), fit_intercept, max_iter, tol (L-BFGS gradient tolerance), warm_start_si
    (initialise from single-instance logistic regression with inherited labels).
    ``diagnostics_["converged"]`` = 1 when L-BFGS-B met its tolerance, 0 when it stopped at
    ``max_iter`` iterations (then a ConvergenceWarning) or on a failed line search;
    ``n_iter`` = L-BFGS-B iterations.  A fit on training bags this process has already fitted
    with the same parameters reuses that solve while reuse is on (:class:`FitCache`; the same
    model).  Every parameter is part of that key (``cache_ignores`` is empty).
    """

    cache_ignores = {}

    _parameter_constraints = {
        "C": POSITIVE,
        "combine": options(COMBINE),
        "alpha": NON_NEGATIVE,
        "fit_intercept": ["boolean"],
        "max_iter": COUNT,
        "tol": NON_NEGATIVE,
        "warm_start_si": ["boolean"],
    }

    def __init__(self, C=1.0, combine="softmax", alpha=3.5, fit_intercept=True,
                 max_iter=1000, tol=1e-6, warm_start_si=False):
        self.C = C
        self.combine = combine
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start_si = warm_start_si

    def _theta0(self, X, offsets, y):
        """The starting (w, b): zeros, or single-instance logistic regression's
        (``warm_start_si``)."""
        d = X.shape[1]
        theta0 = np.zeros(d + int(self.fit_intercept))
        if self.warm_start_si:
            lr = LogisticRegression(C=self.C, fit_intercept=self.fit_intercept, max_iter=200)
            lr.fit(X, np.repeat(y, np.diff(offsets)))
            theta0[:d] = lr.coef_[0]
            if self.fit_intercept:
                theta0[d] = lr.intercept_[0]
        return theta0

    def _solve(self, X, offsets, y, theta0):
        """L-BFGS-B from ``theta0`` (scipy's, without ``minimize``'s wrapper: the same iterates,
        :mod:`milbench.utils.lbfgsb`)."""
        y = y.astype(float)
        C, combine, alpha, fit_intercept = self.C, self.combine, self.alpha, self.fit_intercept
        return lbfgsb(lambda t: milr_loss_grad(t, X, offsets, y, C, combine, alpha, fit_intercept),
                      theta0, self.max_iter, self.tol)

    def _fit(self, X, offsets, y):
        d = X.shape[1]

        def solve():
            return self._solve(X, offsets, y, self._theta0(X, offsets, y))

        res = FIT_CACHE.get(fit_key(self, array_digest(X, offsets, y)) if FIT_CACHE.active
                            else None, solve)
        self.coef_ = res.x[:d].copy()
        self.intercept_ = res.x[d] if self.fit_intercept else 0.0
        self.n_iter_ = int(res.nit)
        converged, at_cap = lbfgs_status(res)
        if at_cap:
            warn_cap(self, "max_iter", self.max_iter, "L-BFGS-B iterations before the gradient "
                     f"tolerance tol={self.tol}")
        self.diagnostics_ = {"n_iter": int(res.nit), "objective": float(res.fun),
                             "converged": converged}

    def decision_instances(self, X):
        """Instance logits wᵀx + b for a list of bags (stacked)."""
        Xs, _ = self._check_predict_input(X)
        return Xs @ self.coef_ + self.intercept_

    def _bag_probability(self, X, offsets):
        return bag_probability(X @ self.coef_ + self.intercept_, offsets, self.combine, self.alpha)

    def _decision(self, X, offsets):
        return bag_logit(self._bag_probability(X, offsets))

    def predict_proba(self, X):
        P = self._bag_probability(*self._check_predict_input(X))
        return np.column_stack([1 - P, P])

    def warm_fitness_evaluator(self, X, offsets, y, folds, restarts=0):
        """HyDR-MI's warm-started subset fitness
        (:class:`~milbench.selectors.fitness.WarmSubsetFitness`): :class:`WarmMILR` on the
        inner ``folds`` (one start: ``restarts`` is not used)."""
        return WarmMILR(self, X, offsets, y, folds)


class WarmMILR:
    """MILR fitness of feature subsets on HyDR-MI's inner folds, with warm starts.

    ``predict_warm(cols, None)`` fits from the usual start (the same predictions as refitting
    :class:`MILR` on the subset); ``predict_warm(cols, source)`` starts L-BFGS from the fold's
    weights fitted for the related subset ``source`` restricted to ``cols`` (a new feature's
    weight 0, the intercept kept).  Returns (pooled 0/1 predictions on the validation bags,
    state = (cols, (n_folds, len(cols) + 1) weights and intercepts))."""

    def __init__(self, clf, X, offsets, y, folds):
        self.clf = clf
        y = np.asarray(y).astype(int)
        bags = np.split(np.asarray(X, dtype=float), offsets[1:-1])
        self.folds = [(*stack([bags[i] for i in tr]), y[tr], *stack([bags[i] for i in va]))
                      for tr, va in folds]

    def predict_warm(self, cols, source=None):
        clf, cols = self.clf, np.asarray(cols)
        preds, kept = [], []
        for f, (Xt, ot, yt, Xv, ov) in enumerate(self.folds):
            Xc = Xt[:, cols]
            if source is None:
                theta0 = clf._theta0(Xc, ot, yt)
            else:
                w, _ = restrict(source[0], source[1][f, :-1], cols)
                theta0 = np.append(w, source[1][f, -1])[:len(cols) + int(clf.fit_intercept)]
            theta = clf._solve(Xc, ot, yt, theta0).x
            b = theta[len(cols)] if clf.fit_intercept else 0.0
            P = bag_probability(Xv[:, cols] @ theta[:len(cols)] + b, ov, clf.combine, clf.alpha)
            preds.append(bag_logit(P) > 0)
            kept.append(np.append(theta[:len(cols)], b))
        return np.concatenate(preds), (cols, np.array(kept))
