"""Diverse Density (Maron & Lozano-Pérez 1997), EM-DD (Zhang & Goldman 2001) and MDD (Xu 2003)
[midd], [emdd], [mdd]: the "methods based on Diverse Density" of Zafra et al. (2013),
Information Sciences, §4.1.2.

All three share one instance model, a Gaussian-like bump around a target point t with per-feature
scales s (Maron & Lozano-Pérez (1997), NIPS 10, eq. for Pr(B_ij ∈ c_t)):

    p_ij = Pr(x_ij ∈ t) = exp(−d_ij),   d_ij = Σ_k s_k² (x_ijk − t_k)²

and differ in how instance probabilities make a bag probability and how (t, s) is searched:

* :class:`MIDD`  [midd]  Maron & Lozano-Pérez (1997): noisy-or, P_i = 1 − Π_j (1 − p_ij);
  maximise DD = Π_i Pr(l_i | B_i) over (t, s) with L-BFGS from many starting points.
* :class:`EMDD`  [emdd]  Zhang & Goldman (2001), NIPS 14: most-likely-cause, P_i = max_j p_ij;
  E-step picks each bag's most likely instance, M-step maximises the single-instance DD of those
  instances.
* :class:`MDD`   [mdd]   Weka's "Modified Diverse Density, with collective assumption"
  (Xu 2003): P_i = (1/n_i) Σ_j p_ij (arithmetic mean of instance probabilities).

Numerics: the negative log-DD and its analytic gradient are computed in log space
(log(1 − e^{−d}) via expm1/log1p, positive-bag noisy-or through a log-sum-exp fallback when every
p_ij underflows), with d clamped to ≥ 1e-10.  Many starting points are optimised at once: their
objectives are independent, so one L-BFGS on the stacked parameters (a block of starts at a time)
minimises every start's objective; all distances and gradients are matrix products over the
stacked (starts × instances) arrays.

Parameters are optimised as (s, c = s·t) rather than (s, t): d_ij = Σ_k (s_k x_ijk − c_k)² is
then a convex quadratic in the parameters and L-BFGS converges several times faster (same
minimiser).  Preprocessing (``preprocess="standardize"``, Weka's default for MIDD / MIEMDD / MDD)
z-scores features with training-instance statistics; the fitted concept is folded back into raw
feature units (``scale_`` a = s/σ, ``offset_`` b = c + a·μ, ``target_`` t = b/a), so prediction
needs no transform.

Bag scores are reported in log-probability units (``decision_function`` = log P_i − log thr, or
minus a threshold learned on the training bags), which avoids ties from underflow when ranking
bags for AUROC.  ``decision_instances`` gives log p_ij (minus the same threshold) per instance.
"""
from __future__ import annotations

from numbers import Real
from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if

from milbench.base import (
    COUNT,
    COUNT_OR_ZERO,
    POSITIVE,
    SEED,
    MILClassifier,
    options,
    validate_params,
    warn_cap,
)
from milbench.classifiers._thresholds import best_thresholds
from milbench.classifiers.warm import restrict
from milbench.data.bags import stack, unstack
from milbench.utils.segments import segment_arg

LN2 = float(np.log(2.0))
_DMIN = 1e-10          # clamp on scaled squared distances (p ≤ 1 − 1e-10)
_BLOCK = 32            # starting points optimised jointly in one L-BFGS run


# ----------------------------------------------------------------------------- numerics
def log1mexp(x):
    """log(1 − e^{−x}) for x > 0, accurate at both ends (Mächler 2012)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x < LN2, np.log(-np.expm1(-x)), np.log1p(-np.exp(-x)))


def _rep(v, sizes):
    """(R, B) per-bag values -> (R, N) per-instance values."""
    return np.repeat(v, sizes, axis=1)


def seg_logsumexp(A, offsets):
    """Row-wise log Σ_{j in segment} exp(A[:, j]) for consecutive column segments."""
    starts = offsets[:-1]
    m = np.maximum.reduceat(A, starts, axis=1)
    s = np.add.reduceat(np.exp(A - _rep(m, np.diff(offsets))), starts, axis=1)
    return m + np.log(s)


def scaled_sq_dists(X, A, Bo, X2=None):
    """D[r, n] = Σ_k (A[r,k] X[n,k] − Bo[r,k])² for R hypotheses and N instances (matmuls).

    With A = s and Bo = s·t this is Σ_k s_k² (x_k − t_k)², the DD distance; optimising over
    (s, c = s·t) instead of (s, t) makes d a convex quadratic in the parameters, which L-BFGS
    handles far better (the minimiser is the same; c_k with s_k = 0 is a constant offset, the
    t → ∞, s → 0 limit of the original model)."""
    X2 = X * X if X2 is None else X2
    D = (A * A) @ X2.T - 2.0 * ((A * Bo) @ X.T) + np.sum(Bo * Bo, axis=1)[:, None]
    return np.maximum(D, 0.0)


def grad_from_dist_coef(C, X, A, Bo, X2=None):
    """Chain rule: given C = ∂L/∂D (R, N), return (∂L/∂A, ∂L/∂Bo), each (R, d)."""
    X2 = X * X if X2 is None else X2
    CX, CX2 = C @ X, C @ X2
    cs = C.sum(axis=1, keepdims=True)
    return 2.0 * (A * CX2 - Bo * CX), -2.0 * (A * CX - Bo * cs)


def noisy_or_nldd(D, pos_offsets, neg_offsets):
    """Negative log-DD with the noisy-or model (Maron & Lozano-Pérez 1997, eq. 2–3).

    D: (R, N) scaled squared distances, positive-bag instances first (segments ``pos_offsets``),
    then negative-bag instances (``neg_offsets``, relative to the first negative instance).
    Returns (L (R,), C = ∂L/∂D (R, N)).

    L = −Σ_{i∈+} log(1 − Π_j (1 − p_ij)) − Σ_{i∈−} Σ_j log(1 − p_ij).
    """
    D = np.maximum(D, _DMIN)
    n_pos = pos_offsets[-1]
    Dp, Dn = D[:, :n_pos], D[:, n_pos:]
    lp = log1mexp(Dp)                                     # log(1 − p) on positive instances
    sizes = np.diff(pos_offsets)
    a = -np.add.reduceat(lp, pos_offsets[:-1], axis=1)    # −log q_i, q_i = Π_j (1 − p_ij)
    lse = seg_logsumexp(-Dp, pos_offsets)                 # log Σ_j p_ij (fallback when a ≈ 0)
    logP = np.where(a > 1e-8, log1mexp(np.maximum(a, 1e-300)), lse)
    # ∂(−log P_i)/∂d_ij = (q_i / P_i) · p_ij / (1 − p_ij)
    Cp = np.exp(_rep(-a - logP, sizes) - Dp - lp)
    ln = log1mexp(Dn)
    L = -logP.sum(axis=1) - ln.sum(axis=1)
    Cn = np.exp(-Dn) / np.expm1(-Dn)                      # −p/(1 − p)
    return L, np.hstack([Cp, Cn])


def collective_nldd(D, pos_offsets, neg_offsets):
    """Negative log-likelihood with the collective assumption (Weka MDD):
    P_i = mean_j p_ij; L = −Σ_{i∈+} log P_i − Σ_{i∈−} log(1 − P_i).  Returns (L, ∂L/∂D)."""
    D = np.maximum(D, _DMIN)
    n_pos = pos_offsets[-1]
    Dp, Dn = D[:, :n_pos], D[:, n_pos:]
    psz, nsz = np.diff(pos_offsets), np.diff(neg_offsets)
    lse = seg_logsumexp(-Dp, pos_offsets)
    logP = lse - np.log(psz)
    Cp = np.exp(-Dp - _rep(lse, psz))                     # p_ij / (n_i P_i)
    Q = np.add.reduceat(-np.expm1(-Dn), neg_offsets[:-1], axis=1) / nsz   # 1 − P_i
    Q = np.maximum(Q, 1e-300)
    Cn = -np.exp(-Dn) / _rep(nsz * Q, nsz)
    L = -logP.sum(axis=1) - np.log(Q).sum(axis=1)
    return L, np.hstack([Cp, Cn])


def emdd_mstep_nldd(A, Bo, Z, Z2, ypos):
    """Single-instance negative log-DD of the M-step (Zhang & Goldman 2001, §3):
    Z (R, B, d) holds each bag's selected instance per start; ypos (B,) bool.
    L = Σ_{i∈+} d_i − Σ_{i∈−} log(1 − e^{−d_i}).  Returns (L (R,), ∂L/∂A, ∂L/∂Bo)."""
    D = (np.matmul(Z2, (A * A)[:, :, None])[:, :, 0]
         - 2.0 * np.matmul(Z, (A * Bo)[:, :, None])[:, :, 0]
         + np.sum(Bo * Bo, axis=1)[:, None])
    D = np.maximum(D, _DMIN)
    L = D[:, ypos].sum(axis=1) - log1mexp(D[:, ~ypos]).sum(axis=1)
    C = np.where(ypos[None, :], 1.0, np.exp(-D) / np.expm1(-D))   # −1/(e^d − 1) on negatives
    CZ, CZ2 = np.matmul(C[:, None, :], Z)[:, 0], np.matmul(C[:, None, :], Z2)[:, 0]
    cs = C.sum(axis=1, keepdims=True)
    return L, 2.0 * (A * CZ2 - Bo * CZ), -2.0 * (A * CZ - Bo * cs)


def lbfgs_stacked(fun_grad, A0, B0, max_iter):
    """Minimise Σ_r f_r(A_r, B_r) over the stacked (R, 2d) parameters with one L-BFGS run.

    The starts' objectives are independent, so the sum's minimiser is every start's minimiser.
    ``fun_grad(A, B) -> (L (R,), gA, gB)``.  Returns (A, B, L, n_iter, status) with scipy's
    L-BFGS-B status (0 tolerance met, 1 stopped at ``max_iter``, 2 failed line search)."""
    R, d = A0.shape

    def f(theta):
        A, Bo = theta[:R * d].reshape(R, d), theta[R * d:].reshape(R, d)
        L, gA, gB = fun_grad(A, Bo)
        return float(L.sum()), np.concatenate([gA.ravel(), gB.ravel()])

    res = minimize(f, np.concatenate([A0.ravel(), B0.ravel()]), jac=True, method="L-BFGS-B",
                   options={"maxiter": int(max_iter), "maxcor": 10})
    A, Bo = res.x[:R * d].reshape(R, d), res.x[R * d:].reshape(R, d)
    L = fun_grad(A, Bo)[0]
    return A, Bo, L, int(res.nit), int(res.status)


def bag_log_prob(X, off, scale, offset, rule):
    """(1, n_bags) log P_i of the concept d = Σ_k (scale_k x_k − offset_k)² on stacked bags
    (instances ``X``, bag ``off``sets) under the bag rule ("max", "mean" or "noisy-or")."""
    D = np.maximum(scaled_sq_dists(X, scale[None, :], offset[None, :]), _DMIN)
    if rule == "max":
        return -np.minimum.reduceat(D, off[:-1], axis=1)
    if rule == "mean":
        return seg_logsumexp(-D, off) - np.log(np.diff(off))
    if rule == "noisy-or":
        a = -np.add.reduceat(log1mexp(D), off[:-1], axis=1)
        return np.where(a > 1e-8, log1mexp(np.maximum(a, 1e-300)), seg_logsumexp(-D, off))
    raise ValueError(f"unknown bag rule {rule!r}")


def raw_concept(A, Bo, mu, sd):
    """(scale a, offset b) in raw units of a concept fitted on standardised instances (scale
    s, offset c): a = s/σ, b = c + a·μ."""
    scale = A / sd
    return scale, Bo + scale * mu


# ----------------------------------------------------------------------------- shared base
def _threshold_is_half(est):
    t = est.threshold
    return not isinstance(t, str) and float(t) == 0.5


class _DDBase(MILClassifier):
    """Shared preprocessing, starting points, scoring and thresholds of the DD family."""

    _bag_rule = "max"

    # the parameters every DD variant shares
    _parameter_constraints = {
        "threshold": [StrOptions({"train"}), Interval(Real, 0, 1, closed="neither")],
        "start_bags": [*COUNT, StrOptions({"largest"}), None],
        "max_starts": [*COUNT, None],
        "scale_init": POSITIVE,
        "preprocess": options(("standardize", "none")),
        "max_iter": COUNT,
        "random_state": SEED,
    }

    def _standardize(self, X):
        if self.preprocess == "standardize":
            mu, sd = X.mean(axis=0), X.std(axis=0)
        else:
            mu, sd = np.zeros(X.shape[1]), np.ones(X.shape[1])
        sd = np.where(sd > 0, sd, 1.0)
        return mu, sd

    def _layout(self, bags, y01):
        """Standardised instances with positive bags first; per-class offsets."""
        pos = [b for b, y in zip(bags, y01) if y == 1]
        neg = [b for b, y in zip(bags, y01) if y == 0]
        Xp, po = stack(pos)
        Xn, no = stack(neg)
        X = np.vstack([Xp, Xn])
        mu, sd = self._standardize(X)
        return (X - mu) / sd, po, no, mu, sd

    @staticmethod
    def _layout_index(po, no):
        """Bag offsets of the whole layout and the positive-bag mask."""
        off = np.concatenate([po, po[-1] + no[1:]])
        return off, np.arange(len(off) - 1) < len(po) - 1

    def _starts(self, Xs, pos_offsets, rng):
        """Starting targets: all instances of ``start_bags`` random positive bags (or of the
        largest positive bag(s) for "largest", of every positive bag for None), then at most
        ``max_starts`` of them drawn at random; duplicates removed."""
        sizes = np.diff(pos_offsets)
        n_pos = len(sizes)
        sb = self.start_bags
        if sb is None:
            chosen = np.arange(n_pos)
        elif sb == "largest":
            chosen = np.flatnonzero(sizes == sizes.max())
        else:
            chosen = np.sort(rng.choice(n_pos, size=min(int(sb), n_pos), replace=False))
        rows = np.concatenate([np.arange(pos_offsets[i], pos_offsets[i + 1]) for i in chosen])
        P = np.unique(Xs[rows], axis=0)
        if self.max_starts is not None and len(P) > int(self.max_starts):
            P = P[np.sort(rng.choice(len(P), size=int(self.max_starts), replace=False))]
        return P

    # -- scoring in raw units with the folded concept --------------------------------------
    def _instance_log_prob(self, X):
        return -scaled_sq_dists(X, self.scale_[None, :], self.offset_[None, :])[0]

    def _bag_log_prob(self, X, offsets, rule=None):
        """(1, n_bags) log P_i of the fitted concept under the bag rule."""
        return bag_log_prob(X, offsets, self.scale_, self.offset_, rule or self._bag_rule)

    def _log_threshold(self, scores, y01):
        """Log-threshold for the training bags' (1, n) log-probabilities ``scores``."""
        if self.threshold == "train":
            return float(best_thresholds(scores, y01, prefer=np.log(0.5))[1][0])
        return float(np.log(self.threshold))

    def _set_threshold(self, X, offsets, y01):
        scores = self._bag_log_prob(X, offsets)
        self.log_threshold_ = self._log_threshold(scores, y01)
        return scores

    def _decision(self, X, offsets):
        return self._bag_log_prob(X, offsets)[0] - self.log_threshold_

    def decision_instances(self, X):
        """Per-instance score log p_ij − log-threshold (> 0: the instance alone would make its bag
        positive under the max rule), for bags X (stacked order; a 2-D array is read as
        one-instance bags, i.e. as an instance matrix)."""
        Xs, _ = self._check_predict_input(X)
        return self._instance_log_prob(Xs) - self.log_threshold_

    @available_if(_threshold_is_half)
    def predict_proba(self, X):
        """Bag probabilities P_i of the model's bag rule.  Offered only when the threshold is the
        probability 0.5, so that ``predict`` is the argmax of ``predict_proba`` (ensembles then
        average probabilities; with a learned threshold they use votes)."""
        p = np.exp(self._bag_log_prob(*self._check_predict_input(X))[0])
        return np.column_stack([1.0 - p, p])

    def _fold(self, A, Bo, mu, sd):
        """Concept in raw units: d = Σ_k (a_k x_k − b_k)² with a = s/σ, b = c + a·μ;
        ``target_`` t = b/a (0 where a_k = 0, i.e. the feature is ignored)."""
        self.scale_, self.offset_ = raw_concept(A, Bo, mu, sd)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.target_ = np.where(self.scale_ != 0, self.offset_ / self.scale_, 0.0)


class _GlobalDD(_DDBase):
    """DD variants whose whole-data likelihood is optimised directly (MIDD, MDD).

    ``diagnostics_["converged"]`` = 1 when the L-BFGS-B runs taken to ``max_iter`` (the
    refinement of the ``n_refine`` best starts, or every start without screening) met their
    tolerance, 0 when one stopped at ``max_iter`` (then a ConvergenceWarning) or on a failed
    line search; ``n_iter`` = L-BFGS-B iterations of those runs (the longest block; the
    screening iterations are in ``lbfgs_iterations``, the total).
    """

    _nldd = staticmethod(noisy_or_nldd)

    _parameter_constraints = {
        **_DDBase._parameter_constraints,
        "screen_iter": COUNT,
        "n_refine": [*COUNT, None],
    }

    def _optimise(self, Xs, po, no, A0, B0):
        """L-BFGS of the negative log-DD from the stacked starts (scales ``A0``, offsets ``B0``,
        a block of ``_BLOCK`` starts at a time): ``screen_iter`` iterations each, then the
        ``n_refine`` lowest continued to ``max_iter``.  Returns (A, Bo, L, L-BFGS iterations,
        [(iterations, status) of every run capped by ``max_iter``]): the screening runs stop
        at ``screen_iter`` by design, so only the refinement (or, without screening, every
        block's run) says whether the kept starts converged."""
        X2 = Xs * Xs

        def fun_grad(A, Bo):
            D = scaled_sq_dists(Xs, A, Bo, X2)
            L, C = self._nldd(D, po, no)
            return (L, *grad_from_dist_coef(C, Xs, A, Bo, X2))

        refine = self.n_refine is not None and len(A0) > int(self.n_refine)
        first_iter = self.screen_iter if refine else self.max_iter
        As, Bs, Ls, its, runs = [], [], [], 0, []
        for a in range(0, len(A0), _BLOCK):
            A, Bo, L, nit, status = lbfgs_stacked(fun_grad, A0[a:a + _BLOCK], B0[a:a + _BLOCK],
                                                  first_iter)
            As.append(A), Bs.append(Bo), Ls.append(L)
            its += nit
            runs.append((nit, status))
        A, Bo, L = np.vstack(As), np.vstack(Bs), np.concatenate(Ls)
        if refine:                          # continue only the most promising starts
            keep = np.argsort(L, kind="stable")[:int(self.n_refine)]
            A, Bo, L, nit, status = lbfgs_stacked(fun_grad, A[keep], Bo[keep], self.max_iter)
            its += nit
            runs = [(nit, status)]
        return A, Bo, L, its, runs

    def _kept(self, fold, cols, A0, B0):
        """HyDR-MI's warm evaluator (:class:`WarmDD`): the kept hypothesis (scale, offset on
        the standardised ``cols``) and log-threshold of a fit on one inner :class:`DDFold`
        from the starts (A0, B0), as :meth:`_fit` keeps it."""
        A, Bo, L, _, _ = self._optimise(fold.Xs[:, cols], fold.po, fold.no, A0, B0)
        best = int(np.argmin(L))
        scale, offset = raw_concept(A[best], Bo[best], fold.mu[cols], fold.sd[cols])
        scores = bag_log_prob(fold.X_train[:, cols], fold.off_train, scale, offset,
                              self._bag_rule)
        return A[best], Bo[best], self._log_threshold(scores, fold.y_train)

    def warm_fitness_evaluator(self, X, offsets, y, folds, restarts=2):
        """HyDR-MI's warm-started subset fitness
        (:class:`~milbench.selectors.fitness.WarmSubsetFitness`): a :class:`WarmDD` on the
        inner ``folds``; None when ``random_state`` is neither None nor an int (shared state)."""
        return warm_dd(self, X, offsets, y, folds, restarts)

    def _fit(self, X, offsets, y01):
        rng = np.random.default_rng(self.random_state)
        Xs, po, no, mu, sd = self._layout(unstack(X, offsets), y01)
        P = self._starts(Xs, po, rng)
        A0 = np.full_like(P, float(self.scale_init))
        A, Bo, L, its, runs = self._optimise(Xs, po, no, A0, A0 * P)
        if any(status == 1 for _, status in runs):
            warn_cap(self, "max_iter", self.max_iter, "L-BFGS-B iterations of the negative "
                     "log-DD (stacked starts)")
        best = int(np.argmin(L))
        self._fold(A[best], Bo[best], mu, sd)
        scores = self._set_threshold(X, offsets, y01)
        train_acc = float(np.mean((scores[0] > self.log_threshold_) == (y01 == 1)))
        self.nldd_ = float(L[best])
        self.diagnostics_ = {"n_starts": int(len(P)), "nldd": self.nldd_,
                             "n_iter": int(max(nit for nit, _ in runs)),
                             "converged": int(all(status == 0 for _, status in runs)),
                             "lbfgs_iterations": int(its), "train_accuracy": train_acc,
                             "log_threshold": self.log_threshold_}


class MIDD(_GlobalDD):
    """Diverse Density, noisy-or (Maron & Lozano-Pérez (1997), NIPS 10) [midd].

    Maximises DD(t, s) = Π_{i∈+} (1 − Π_j (1 − p_ij)) · Π_{i∈−} Π_j (1 − p_ij) by L-BFGS with the
    analytic gradient, started at every instance of ``start_bags`` randomly chosen positive bags
    (at most ``max_starts`` of them, seeded by ``random_state``) with all scales = ``scale_init``;
    the start reaching the highest DD is kept.  (Maron starts from every positive instance; Weka's
    MIDD from every instance of the largest positive bag: ``start_bags="largest"``,
    ``max_starts=None``.)  Speed (a departure: Maron runs every start to convergence): all starts
    get ``screen_iter`` L-BFGS iterations, then only the ``n_refine`` with the lowest negative
    log-DD continue to ``max_iter`` (``n_refine=None`` runs every start to ``max_iter``).

    Bag score: ``bag_rule="max"`` (default) log max_j p_ij, the most-likely-cause score; or
    ``"noisy-or"`` log P_i of the training model (Weka's MIDD prediction).  Threshold:
    ``threshold="train"`` (default) picks the cut on the training bags' scores with the highest
    training accuracy (midpoints between sorted scores; ties broken towards p = 0.5); a float
    uses that fixed probability (Weka: 0.5).
    """

    _parameter_constraints = {
        **_GlobalDD._parameter_constraints,
        "bag_rule": options(("max", "noisy-or")),
    }

    def __init__(self, threshold="train", bag_rule="max", start_bags=3, max_starts=50,
                 scale_init=1.0, preprocess="standardize", max_iter=300, screen_iter=30,
                 n_refine=5, random_state=None):
        self.threshold = threshold
        self.bag_rule = bag_rule
        self.start_bags = start_bags
        self.max_starts = max_starts
        self.scale_init = scale_init
        self.preprocess = preprocess
        self.max_iter = max_iter
        self.screen_iter = screen_iter
        self.n_refine = n_refine
        self.random_state = random_state

    @property
    def _bag_rule(self):
        return self.bag_rule


class MDD(_GlobalDD):
    """Modified Diverse Density with the collective assumption (Weka ``MDD``; Xu 2003) [mdd].

    Zafra et al. (2013, §4.1.2) list "MDD" among their Weka classifiers without defining it;
    Weka's MDD is "Modified Diverse Density algorithm, with collective assumption": every
    instance contributes equally, P_i = (1/n_i) Σ_j p_ij with p_ij = exp(−Σ_k s_k²(x_ijk − t_k)²),
    and L = −Σ_{i∈+} log P_i − Σ_{i∈−} log(1 − P_i) is minimised over (t, s) by L-BFGS (analytic
    gradient).  Weka writes the scale as a divisor, (x − t)²/s²; ours multiplies (s ↔ 1/s, the
    same model).  Starts, screening and threshold as :class:`MIDD`; Weka starts from every
    instance of the largest positive bag (``start_bags="largest"``) and predicts P_i > 0.5
    (``threshold=0.5``, our default).
    """

    _bag_rule = "mean"
    _nldd = staticmethod(collective_nldd)

    def __init__(self, threshold=0.5, start_bags=3, max_starts=50, scale_init=1.0,
                 preprocess="standardize", max_iter=300, screen_iter=30, n_refine=5,
                 random_state=None):
        self.threshold = threshold
        self.start_bags = start_bags
        self.max_starts = max_starts
        self.scale_init = scale_init
        self.preprocess = preprocess
        self.max_iter = max_iter
        self.screen_iter = screen_iter
        self.n_refine = n_refine
        self.random_state = random_state


class EMDD(_DDBase):
    """EM-DD (Zhang & Goldman (2001), NIPS 14) [emdd], vectorised over all starting points.

    For every start h = (t = a positive-bag instance, s = ``scale_init``):
      E-step: in each bag pick the instance with the highest p_ij = exp(−Σ s_k²(x_ijk − t_k)²)
              (most-likely-cause model);
      M-step: maximise the single-instance DD of the picked instances,
              Π_{i∈+} p_i* · Π_{i∈−} (1 − p_i*), over (t, s) by L-BFGS with the analytic gradient;
      repeat while the most-likely-cause NLDD of the whole training set,
              Σ_{i∈+} min_j d_ij − Σ_{i∈−} log(1 − e^{−min_j d_ij}),
      strictly decreases (at most ``max_em_iter`` rounds; the last non-improving step is undone).
    Starts: every instance of ``start_bags`` (default 3, as Weka's MIEMDD) random positive bags,
    at most ``max_starts``.  All starts' E-steps are one (starts × instances) distance matrix and
    segment argmin; all M-steps run as one stacked L-BFGS per block of starts.

    Hypothesis choice (``select``): ``"error"`` (default, Weka) keeps the start with the lowest
    training error at the threshold (ties: lower NLDD); ``"nldd"`` the highest DD.  Zhang &
    Goldman picked the hypothesis with the lowest error on the *test* fold, which we do not do.
    Threshold: a bag is positive when max_j p_ij > ``threshold`` (default 0.5, as in the paper and
    Weka); ``threshold="train"`` instead learns the cut on the training bags per start.

    ``diagnostics_["converged"]`` = 1 when the kept start's EM stopped because its NLDD no
    longer decreased (Zhang & Goldman's rule), 0 when ``max_em_iter`` rounds ran out first
    (then a ConvergenceWarning); ``n_iter`` = the kept start's accepted EM rounds.  An M-step
    is an inner L-BFGS-B of at most ``max_iter`` iterations; the number of stacked M-step runs
    stopped there is ``mstep_lbfgs_capped`` (any descent step serves EM, so it is no failure).
    """

    _parameter_constraints = {
        **_DDBase._parameter_constraints,
        "select": options(("error", "nldd")),
        "max_em_iter": COUNT_OR_ZERO,
    }

    def __init__(self, threshold=0.5, select="error", start_bags=3, max_starts=None,
                 scale_init=1.0, max_em_iter=10, preprocess="standardize", max_iter=50,
                 random_state=None):
        self.threshold = threshold
        self.select = select
        self.start_bags = start_bags
        self.max_starts = max_starts
        self.scale_init = scale_init
        self.max_em_iter = max_em_iter
        self.preprocess = preprocess
        self.max_iter = max_iter
        self.random_state = random_state

    @staticmethod
    def _estep(Xs, X2, off, ypos, A, Bo):
        """Most-likely instance per bag and whole-data MLC NLDD for each hypothesis."""
        D = scaled_sq_dists(Xs, A, Bo, X2)
        dmin, idx = segment_arg(D, off, np.minimum, axis=1)
        dmin = np.maximum(dmin, _DMIN)
        nldd = dmin[:, ypos].sum(axis=1) - log1mexp(dmin[:, ~ypos]).sum(axis=1)
        return idx, nldd, dmin

    def _em(self, Xs, X2, off, ypos, A, Bo):
        """EM from the stacked starting hypotheses (A = scales, Bo = offsets c = a·t, each
        (R, d)) on standardised instances ``Xs`` in layout order (positive bags first).
        Returns (A, Bo, nldd, dmin, n_em, lbfgs_iterations, active, mstep_capped): one row
        per start, ``active`` True where EM was still improving at ``max_em_iter`` rounds,
        ``mstep_capped`` the number of stacked M-step runs stopped at ``max_iter``."""
        A, Bo = A.copy(), Bo.copy()
        idx, nldd, dmin = self._estep(Xs, X2, off, ypos, A, Bo)
        n_em = np.zeros(len(A), dtype=int)
        active = np.ones(len(A), dtype=bool)
        lbfgs_its = capped = 0
        for _ in range(int(self.max_em_iter)):
            act = np.flatnonzero(active)
            if len(act) == 0:
                break
            An, Bn = A[act].copy(), Bo[act].copy()
            for a in range(0, len(act), _BLOCK):              # M-step, a block of starts at once
                blk = slice(a, a + _BLOCK)
                Z = Xs[idx[act[blk]]]                          # (r, n_bags, d) picked instances
                Z2 = Z * Z
                fg = lambda A_, B_, Z=Z, Z2=Z2: emdd_mstep_nldd(A_, B_, Z, Z2, ypos)  # noqa: E731
                An[blk], Bn[blk], _, nit, status = lbfgs_stacked(fg, An[blk], Bn[blk],
                                                                 self.max_iter)
                lbfgs_its += nit
                capped += status == 1
            idx_n, nldd_n, dmin_n = self._estep(Xs, X2, off, ypos, An, Bn)   # next E-step
            better = nldd_n < nldd[act]
            upd = act[better]
            A[upd], Bo[upd], idx[upd] = An[better], Bn[better], idx_n[better]
            nldd[upd], dmin[upd] = nldd_n[better], dmin_n[better]
            n_em[upd] += 1
            active[act[~better]] = False
        return A, Bo, nldd, dmin, n_em, lbfgs_its, active, int(capped)

    def _select(self, nldd, dmin, ypos):
        """The kept start (``select``) and every start's (training accuracy, log-threshold)."""
        scores = -dmin                                      # log max_j p_ij, (R, B) layout order
        if self.threshold == "train":
            acc, thr = best_thresholds(scores, ypos.astype(int), prefer=np.log(0.5))
        else:
            thr = np.full(len(nldd), np.log(self.threshold))
            acc = np.mean((scores > thr[:, None]) == ypos[None, :], axis=1)
        if self.select == "error":
            best = int(np.lexsort((nldd, -acc))[0])
        else:
            best = int(np.argmin(nldd))
        return best, acc, thr

    def _fit(self, X, offsets, y01):
        rng = np.random.default_rng(self.random_state)
        Xs, po, no, mu, sd = self._layout(unstack(X, offsets), y01)
        X2 = Xs * Xs
        off, ypos = self._layout_index(po, no)
        P = self._starts(Xs, po, rng)
        A = np.full_like(P, float(self.scale_init))           # scales a and offsets c = a·t
        A, Bo, nldd, dmin, n_em, lbfgs_its, active, capped = self._em(Xs, X2, off, ypos, A,
                                                                       A * P)
        best, acc, thr = self._select(nldd, dmin, ypos)
        if active[best]:
            warn_cap(self, "max_em_iter", self.max_em_iter, "EM rounds with the kept start's "
                     "most-likely-cause NLDD still decreasing")
        self._fold(A[best], Bo[best], mu, sd)
        self.log_threshold_ = float(thr[best])
        self.nldd_ = float(nldd[best])
        self.diagnostics_ = {"n_starts": int(len(P)), "nldd": self.nldd_,
                             "train_accuracy": float(acc[best]),
                             "n_iter": int(n_em[best]),
                             "converged": int(not active[best]),
                             "mean_em_iterations": float(n_em.mean()),
                             "lbfgs_iterations": int(lbfgs_its),
                             "mstep_lbfgs_capped": capped,
                             "log_threshold": self.log_threshold_}

    def _kept(self, fold, cols, A0, B0):
        """HyDR-MI's warm evaluator (:class:`WarmDD`): the kept hypothesis (scale, offset on
        the standardised ``cols``) and log-threshold of EM on one inner :class:`DDFold` from the
        starts (A0, B0), as :meth:`_fit` keeps it."""
        Xs = fold.Xs[:, cols]
        A, Bo, nldd, dmin = self._em(Xs, Xs * Xs, fold.off, fold.ypos, A0, B0)[:4]
        best, _, thr = self._select(nldd, dmin, fold.ypos)
        return A[best], Bo[best], float(thr[best])

    def warm_fitness_evaluator(self, X, offsets, y, folds, restarts=2):
        """HyDR-MI's warm-started subset fitness
        (:class:`~milbench.selectors.fitness.WarmSubsetFitness`): a :class:`WarmDD` on the
        inner ``folds``; None when ``random_state`` is neither None nor an int (shared state)."""
        return warm_dd(self, X, offsets, y, folds, restarts)


def warm_dd(clf, X, offsets, y, folds, restarts):
    """A :class:`WarmDD` for ``clf``, or None when its ``random_state`` is shared state."""
    if not (clf.random_state is None or isinstance(clf.random_state, (int, np.integer))):
        return None
    validate_params(clf)
    return WarmDD(clf, X, offsets, y, folds, restarts)


class DDFold(NamedTuple):
    """One inner fold of :class:`WarmDD`: the training bags' standardised layout (instances,
    positive / negative offsets, whole-layout offsets and positive-bag mask, μ, σ), the raw
    training bags (stacked, labels) and the raw validation bags (stacked)."""
    Xs: np.ndarray
    po: np.ndarray
    off: np.ndarray
    ypos: np.ndarray
    no: np.ndarray
    mu: np.ndarray
    sd: np.ndarray
    X_train: np.ndarray
    off_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    off_val: np.ndarray


class WarmDD:
    """Diverse-density fitness (EM-DD, MIDD, MDD) of feature subsets on HyDR-MI's inner folds,
    with warm starts.

    Each fold's training bags are laid out and standardised once for all features (a subset's
    standardisation is those columns).  ``predict_warm(cols, None)`` is the cold fit: every
    data-driven start, the same predictions as refitting the classifier on the subset.
    ``predict_warm(cols, source)``, ``source`` being the state returned for a related subset,
    starts the search (EM-DD: EM; MIDD / MDD: L-BFGS of the whole-data NLDD) per fold from the
    source's kept hypothesis restricted to ``cols`` -- a feature the source lacked starts at the
    value of the positive instance nearest to that hypothesis (on the shared features) with
    scale ``scale_init``, as a data-driven start would -- plus ``restarts`` of the data-driven
    starts (a random draw from them, seeded like the cold fit); the hypothesis is kept as in the
    classifier's ``fit``.  Returns (pooled 0/1 predictions on the validation bags, state =
    (cols, (n_folds, 2, len(cols)) kept scales and offsets)).
    """

    def __init__(self, clf, X, offsets, y, folds, restarts=2):
        self.clf, self.restarts = clf, int(restarts)
        y = np.asarray(y).astype(int)
        bags = np.split(np.asarray(X, dtype=float), offsets[1:-1])
        self.folds = []
        for tr, va in folds:
            Xs, po, no, mu, sd = clf._layout([bags[i] for i in tr], y[tr])
            off, ypos = clf._layout_index(po, no)
            self.folds.append(DDFold(Xs, po, off, ypos, no, mu, sd,
                                     *stack([bags[i] for i in tr]), y[tr],
                                     *stack([bags[i] for i in va])))

    def _warm_start(self, source, f, cols, Xs, n_pos):
        """The source's fold-``f`` hypothesis on ``cols`` (scale a, offset c = a·t)."""
        (a, c), shared = restrict(source[0], source[1][f], cols)
        x = Xs[int(np.argmin(scaled_sq_dists(Xs[:n_pos], a[None], c[None])[0]))]
        s0 = float(self.clf.scale_init)
        return np.where(shared, a, s0), np.where(shared, c, s0 * x)

    def predict_warm(self, cols, source=None):
        clf, cols = self.clf, np.asarray(cols)
        preds, kept = [], []
        for f, fold in enumerate(self.folds):
            Xs, po = fold.Xs[:, cols], fold.po
            rng = np.random.default_rng(clf.random_state)
            P = clf._starts(Xs, po, rng)
            A0 = np.full_like(P, float(clf.scale_init))
            B0 = A0 * P
            if source is not None:
                pick = np.sort(rng.choice(len(P), size=min(self.restarts, len(P)), replace=False))
                a, c = self._warm_start(source, f, cols, Xs, po[-1])
                A0, B0 = np.vstack([a, A0[pick]]), np.vstack([c, B0[pick]])
            A, Bo, log_thr = clf._kept(fold, cols, A0, B0)
            scale, offset = raw_concept(A, Bo, fold.mu[cols], fold.sd[cols])
            logp = bag_log_prob(fold.X_val[:, cols], fold.off_val, scale, offset,
                                clf._bag_rule)[0]
            preds.append(logp - log_thr > 0)
            kept.append((A, Bo))
        return np.concatenate(preds), (cols, np.array(kept))
