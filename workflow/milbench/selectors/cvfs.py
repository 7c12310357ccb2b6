"""[cvfs] CVFS-MIL, cross-view feature selection for multi-instance learning (Wu et al. 2014), §3
(Wu, Hong, Pan, Zhu, Cai & Zhang, CIKM 2014).

Per view k (features min-max scaled to [0, 1] on the training instances):

* **Bag representatives** x̂_i: a negative bag is represented by its mean instance; a positive
  bag by its instance farthest from the negative bags, i.e. argmax_{x∈B_i} min_N ‖x − x̂_N‖₂ over
  the negative-bag representatives x̂_N ("the most positive instance"; distances in view k).
* **Bag-level criterion** (Eq. 3–4): must-link weight Ŵ_ab = −1/|M| for every unordered pair of
  representatives with the same label, cannot-link +1/|C| for different labels.
* **Instance-level criterion**: −1/|C_I| for every unordered pair of instances inside one
  negative bag (they must look alike), +1/|D_I| for every pair inside one positive bag
  (they should be separable, the sparse-PCA idea).
* **Feature score** φ(s) = ½ Σ_{a,b} W_ab (f_a − f_b)² = fᵀ L f summed over both levels, i.e.
  (mean squared difference across classes − within classes, over representatives) +
  (mean squared difference inside positive bags − inside negative bags, over instances).
  Computed in closed form from per-group sums (Σf, Σf²), never by enumerating pairs.

Cross-view alternation (Algorithm 1, Eqs. 7–11), λ_k = 1/v at the start:

* **T-step**: global score λ_k^r · φ(s) for every feature s of view k; T = the global top-m
  across all views (ties by column order).
* **λ-step**: J_k = Σ_{s∈T_k} φ(s) over view k's selected features (clipped at 0), and
  λ_k = J_k^{1/(1−r)} / Σ_j J_j^{1/(1−r)} — the stationary point of Σ_k λ_k^r J_k on the simplex
  (Lagrangian, Eq. 10–11).  All J_k = 0 gives uniform λ.
* stop when the selection T repeats an earlier one (a fixed point, or a cycle) or after
  ``max_iter`` T-steps.

**Departures / garbled parts (say so):** the extraction is garbled around the sign of r and the
weight normalisation; we implement the formulas above literally, as printed
(default r = −1).  With r < 0 the λ-step gives the *larger* weight to the view with the larger
J_k, but the T-step multiplier λ_k^r then *favours the other views*, so the alternation
balances views; when a view ends up with no selected feature its λ_k is 0 and its multiplier
λ_k^r is unbounded — we floor λ_k at 1e-12 and compute the multipliers in log space
(normalised so the largest is 1; ranking is unchanged), and we stop on any repeated selection
(``diagnostics_['cycle_length']`` > 1 reports a cycle rather than a fixed point; the
selection returned is the repeated one).  The paper does not say which distance defines
"farthest from the negative bags"; we use the distance to the nearest negative-bag
representative.  Bag- and instance-level terms are added with equal weight.

Attributes after fit: ``support_`` (ranked by the final global score), ``scores_`` (φ per
column), ``lambda_`` (final view weights, after the last λ-step), ``lambdas_`` ((n_iter + 1, v):
λ before every T-step plus the final one), ``selections_`` (per-iteration selected-column
counts per view), ``diagnostics_`` (n_iter, converged, cycle_length, λ per view per iteration).
"""
from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from milbench.base import COUNT, FRACTION_OR_COUNT, n_from_fraction, warn_cap
from milbench.selectors.stage_store import StageRule, StageStore
from milbench.selectors.view_baselines import VIEW_CONSTRAINTS, ViewSelector, minmax_scale

_LAMBDA_FLOOR = 1e-12


def _seg_sum(V, offsets):
    return np.add.reduceat(V, offsets[:-1], axis=0)


def pair_sq_sum(S1, S2, n):
    """Σ over ordered pairs (a, b) of a group of (f_a − f_b)² = 2 n Σf² − 2 (Σf)²."""
    return 2.0 * n * S2 - 2.0 * S1 * S1


def bag_representatives(X, offsets, y):
    """(n_bags, d) representatives: negative bag -> mean instance; positive bag -> its instance
    with the largest distance to the nearest negative-bag mean."""
    sizes = np.diff(offsets)
    means = _seg_sum(X, offsets) / sizes[:, None]
    reps = means.copy()
    neg = np.flatnonzero(y == 0)
    pos = np.flatnonzero(y == 1)
    if len(pos) and len(neg):
        bag_of = np.repeat(np.arange(len(sizes)), sizes)
        rows = np.flatnonzero(np.isin(bag_of, pos))
        N = means[neg]
        d2 = (X[rows] ** 2).sum(1)[:, None] - 2 * X[rows] @ N.T + (N ** 2).sum(1)[None, :]
        dist = np.sqrt(np.maximum(d2.min(1), 0))        # to the nearest negative representative
        # segment argmax over the positive bags' rows (rows are grouped by bag)
        pb = bag_of[rows]
        order = np.lexsort((-dist, pb))                 # per bag, largest distance first
        first = np.r_[True, pb[order][1:] != pb[order][:-1]]
        best = rows[order[first]]
        reps[pb[order][first]] = X[best]
    return reps


def feature_scores(X, offsets, y):
    """φ(s) for every column of X (already scaled): bag-level + instance-level Laplacian scores
    (module docstring).  Closed form from group sums."""
    y = np.asarray(y)
    sizes = np.diff(offsets)
    reps = bag_representatives(X, offsets, y)
    P, N = reps[y == 1], reps[y == 0]
    n_p, n_n = len(P), len(N)
    S1p, S2p, S1n, S2n = P.sum(0), (P ** 2).sum(0), N.sum(0), (N ** 2).sum(0)
    # unordered-pair sums: same-label groups and cross pairs
    same = 0.5 * (pair_sq_sum(S1p, S2p, n_p) + pair_sq_sum(S1n, S2n, n_n))
    n_same = n_p * (n_p - 1) / 2 + n_n * (n_n - 1) / 2
    cross = n_n * S2p + n_p * S2n - 2.0 * S1p * S1n
    n_cross = n_p * n_n
    phi = np.zeros(X.shape[1])
    if n_cross:
        phi += cross / n_cross
    if n_same:
        phi -= same / n_same
    # instance level: pairs inside each bag
    S1, S2 = _seg_sum(X, offsets), _seg_sum(X * X, offsets)
    within = 0.5 * pair_sq_sum(S1, S2, sizes[:, None])          # (n_bags, d) unordered sums
    npairs = sizes * (sizes - 1) / 2
    dpos, dneg = npairs[y == 1].sum(), npairs[y == 0].sum()
    if dpos:
        phi += within[y == 1].sum(0) / dpos
    if dneg:
        phi -= within[y == 0].sum(0) / dneg
    return phi


def lambda_step(J, r):
    """Closed-form view weights λ_k = J_k^{1/(1−r)} / Σ_j J_j^{1/(1−r)} (J clipped at 0)."""
    J = np.maximum(np.asarray(J, float), 0.0)
    if not (J > 0).any():
        return np.full(len(J), 1.0 / len(J))
    e = 1.0 / (1.0 - r)
    with np.errstate(divide="ignore"):
        logw = np.where(J > 0, e * np.log(np.where(J > 0, J, 1.0)), -np.inf)
    w = np.exp(logw - logw.max())
    return w / w.sum()


def view_multipliers(lam, r):
    """λ_k^r normalised so the largest is 1 (log space; λ floored at 1e-12)."""
    logm = r * np.log(np.maximum(np.asarray(lam, float), _LAMBDA_FLOOR))
    return np.exp(logm - logm.max())


class CVFS(ViewSelector):
    """[cvfs] CVFS-MIL (module docstring).

    Parameters: m (global number of selected features, count or fraction), r (view-weight
    exponent, ≤ −1 in the paper), max_iter (T-steps), view (restrict to one view: the
    single-view "CVFS on view k" runs), views (view sizes / ranges when the input Bags carry
    none; the pipeline sets it).
    ``diagnostics_["converged"]`` = 1 when the selection T came back unchanged (a fixed
    point), 0 when it repeated an earlier one (``cycle_length`` > 1) or ``max_iter`` T-steps
    ran out without a repeat (then a ConvergenceWarning); ``n_iter`` = T-steps.
    """

    _stage_rule = StageRule(downstream=("m", "r", "max_iter", "view"), views=True)

    _parameter_constraints = {
        "m": FRACTION_OR_COUNT,
        "r": [Interval(Real, None, 1, closed="neither")],   # the λ-step's 1/(1 − r), Eq. 11
        "max_iter": COUNT,
        **VIEW_CONSTRAINTS,
        "stages": [StageStore, None],
    }

    def __init__(self, m=200, r=-1.0, max_iter=50, view=None, views=None, stages=None):
        self.m = m
        self.r = r
        self.max_iter = max_iter
        self.view = view
        self.views = views
        self.stages = stages

    def stage_state(self, X, offsets, y, ranges=None):
        """Fold stage (see :mod:`~milbench.selectors.stage_store`): φ(s) of every view (default:
        all views; :meth:`resolve_views` first), computed per view (representatives are found
        per view); m, r, max_iter, view act downstream."""
        X = minmax_scale(X)
        phi = np.zeros(self.n_features_in_)
        for a, b in (self.view_ranges_ if ranges is None else ranges):
            phi[a:b] = feature_scores(X[:, a:b], offsets, y)
        return {"scores": phi}

    def _fit(self, X, offsets, y):
        r = float(self.r)
        allowed = self._restricted_views()
        names = [self.view_names_[k] for k in allowed]
        ranges = [self.view_ranges_[k] for k in allowed]
        state = None if self.stages is None else self.stages.lookup(self, X, offsets, y)
        if state is None:
            state = self.stage_state(X, offsets, y, ranges)
        phi = np.zeros(self.n_features_in_)
        for a, b in ranges:
            phi[a:b] = state["scores"][a:b]
        self.scores_ = phi
        cols = np.concatenate([np.arange(a, b) for a, b in ranges])
        view_of = np.concatenate([np.full(b - a, k) for k, (a, b) in enumerate(ranges)])
        m = n_from_fraction(self.m, len(cols))
        v = len(ranges)
        lam = np.full(v, 1.0 / v)
        lambdas, seen, counts = [lam], {}, []
        cycle, order = 0, None
        for it in range(int(self.max_iter)):
            g = view_multipliers(lam, r)[view_of] * phi[cols]
            order = np.argsort(-g, kind="stable")[:m]            # T-step: global top-m
            key = frozenset(order.tolist())
            J = np.bincount(view_of[order], weights=phi[cols][order], minlength=v)
            counts.append(np.bincount(view_of[order], minlength=v))
            lam_new = lambda_step(J, r)                          # λ-step
            lambdas.append(lam_new)
            if key in seen:
                cycle = it - seen[key]
                break
            seen[key] = it
            lam = lam_new
        n_iter = len(counts)
        if cycle == 0:
            warn_cap(self, "max_iter", self.max_iter, "T-steps without the selection repeating")
        self.support_ = cols[order]
        self.lambda_ = lambdas[-1]
        self.lambdas_ = np.array(lambdas)
        self.selections_ = np.array(counts)
        self.view_names_used_ = names
        diag = {"n_iter": n_iter, "converged": int(cycle == 1), "cycle_length": int(cycle),
                "m": int(m)}
        for k, n in enumerate(names):
            diag[f"lambda_{n}"] = float(self.lambda_[k])
            diag[f"n_selected_{n}"] = int(counts[-1][k])
        for t, lam_t in enumerate(self.lambdas_[:31]):
            for k, n in enumerate(names):
                diag[f"lambda_it{t}_{n}"] = float(lam_t[k])
        self.diagnostics_ = diag
