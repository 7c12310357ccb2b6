"""[big], [iig], [fs]: the multi-view MI feature-selection baselines of CVFS-MIL (Wu et al. 2014,
§4.1) under the view-combination strategies I / II / III (the per-view ensemble classifier that
strategy III needs is :class:`milbench.classifiers.view_ensemble.ViewEnsemble`).

Baseline scores (the paper only names them; its ref. [5], Gan & Yin, is not available here, so
the exact scores are our definitions, stated below):

* [big] **bag-level information gain**: every bag is summarised per feature by a bag statistic
  (default ``max`` over its instances, the standard-MI witness), and the feature's score is the
  information gain of the best binary split (C4.5 style threshold on the sorted values) of
  that bag-level value w.r.t. the bag labels.
* [iig] **instance-level information gain**: the same best-split information gain on the
  instances, each inheriting its bag's label.
* [fs] **pairwise bag reliability**: for every positive bag P and negative bag N the feature's
  directed 1-D Hausdorff distance r_s(P, N) = max_{x∈P} min_{z∈N} |x_s − z_s| (how reliably the
  feature lets P's most distinctive instance stand apart from N), and for every pair of
  distinct negative bags the symmetric 1-D Hausdorff distance h_s(N, N') (negatives should look
  alike); score = mean r_s(P, N) − mean h_s(N, N').  Features are min-max scaled on the
  training instances first.  This compares every pair of bags feature by feature, which is
  what makes FS the slowest baseline in the paper's Fig. 9.

View strategies (``strategy`` parameter): ``"I"`` top-m/v features of each view (m split as
evenly as possible, remainders to the first views), concatenated; ``"II"`` views
concatenated, global top-m of the raw scores; ``"III"`` the same selection as I, to be used
with the :class:`~milbench.classifiers.view_ensemble.ViewEnsemble` classifier (one classifier per view, averaged) — strategy III is
a classifier-level combination, so the selector only has to keep the views apart.
``view`` restricts a selector to one view (the paper's single-view "X+MI" baselines).

Views come from the input :class:`~milbench.data.bags.Bags` (``X.views``, when it carries named
views) or from the ``views`` parameter (a list of view sizes, a list of (start, stop) pairs, or
a dict name -> (start, stop)); the pipeline sets ``views`` to the dataset's view sizes.
``transform`` keeps the views: its output columns are the selected features grouped by view
(view order, ranked inside a view) and a Bags output carries ``views`` for them, which is what
:class:`~milbench.classifiers.view_ensemble.ViewEnsemble` reads.  ``support_`` lists the selected columns in rank order.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from milbench.base import (
    COUNT_OR_ZERO,
    FRACTION_OR_COUNT,
    VIEWS,
    FeatureSubsetTransformer,
    n_from_fraction,
    options,
    validate_params,
)
from milbench.data.bags import Bags, check_bags, resolve_views, segment_reduce
from milbench.selectors.stage_store import StageRule, StageStore

STRATEGIES = ("I", "II", "III")
# the view parameters of every view-aware selector: one view (a name or an index) or all, and
# the views themselves when the input Bags carry none
VIEW_CONSTRAINTS = {
    "view": [str, *COUNT_OR_ZERO, None],
    "views": VIEWS,
}


# --------------------------------------------------------------------------------------------
# views
# --------------------------------------------------------------------------------------------
def split_m(m, sizes):
    """Split m selected features over views as evenly as possible (capped by view sizes)."""
    sizes = np.asarray(sizes, int)
    v = len(sizes)
    want = np.full(v, m // v) + (np.arange(v) < m % v)
    take = np.minimum(want, sizes)
    spare = m - take.sum()
    while spare > 0 and (take < sizes).any():          # give unused quota to views with room
        for k in range(v):
            if spare and take[k] < sizes[k]:
                take[k] += 1
                spare -= 1
    return take


def minmax_scale(X):
    """Min-max scale columns to [0, 1] (constant columns -> 0)."""
    lo, hi = X.min(0), X.max(0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (X - lo) / span


class ViewSelector(FeatureSubsetTransformer):
    """Base for view-aware selectors: subclasses implement ``_fit(X, offsets, y01)`` and set
    ``support_`` (ranked global column indices); views are resolved before ``_fit``."""

    def fit(self, X, y=None):
        validate_params(self)
        Xs, offsets, y01, classes = check_bags(X, y)
        self.resolve_views(X, Xs.shape[1])
        self.classes_ = classes
        self._fit(Xs, offsets, y01)
        self._set_output()
        return self

    def resolve_views(self, X, n_features):
        """Set ``n_features_in_``, ``view_names_`` and ``view_ranges_`` for input ``X`` (a Bags
        container's named views, else the ``views`` parameter, else one view): the part of
        ``fit`` that reads the container rather than its stacked instances.  ``fit`` calls it
        first; so does the experiment before a stage that depends on the views
        (:class:`~milbench.base.StagedSelector`)."""
        self.n_features_in_ = n_features
        self.view_names_, self.view_ranges_ = resolve_views(X, getattr(self, "views", None),
                                                            n_features)

    def _view_of(self):
        owner = np.empty(self.n_features_in_, int)
        for k, (a, b) in enumerate(self.view_ranges_):
            owner[a:b] = k
        return owner

    def _restricted_views(self):
        """Indices of the views this selector may pick from (``view`` parameter)."""
        view = getattr(self, "view", None)
        if view is None:
            return list(range(len(self.view_names_)))
        if isinstance(view, (int, np.integer)):
            if not 0 <= view < len(self.view_names_):
                raise ValueError(f"view index {view} out of range for views {self.view_names_}")
            return [int(view)]
        if view not in self.view_names_:
            raise ValueError(f"unknown view {view!r}; views are {self.view_names_}")
        return [self.view_names_.index(view)]

    def _set_output(self):
        owner = self._view_of()
        sup = np.asarray(self.support_, dtype=np.int64)
        cols = sup[np.argsort(owner[sup], kind="stable")]
        self.output_columns_ = cols
        views, start = {}, 0
        for k, name in enumerate(self.view_names_):
            n = int((owner[cols] == k).sum())
            if n:
                views[name] = (start, start + n)
                start += n
        self.output_views_ = views
        self.n_selected_per_view_ = {n: int((owner[sup] == k).sum())
                                     for k, n in enumerate(self.view_names_)}

    def _transform_instances(self, X):
        return X[:, self.output_columns_]

    def transform(self, X):
        if isinstance(X, Bags):
            X = self._check_width(X)
            return replace(X, instances=X.instances[:, self.output_columns_],
                           views=dict(self.output_views_))
        return super().transform(X)


# --------------------------------------------------------------------------------------------
# scores
# --------------------------------------------------------------------------------------------
def _entropy(p):
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(p * np.log2(p) + (1 - p) * np.log2(1 - p))
    return np.nan_to_num(h)


def best_split_information_gain(V, y):
    """Information gain (bits) of the best binary threshold split of every column of V
    (n, d) w.r.t. 0/1 labels y; 0 for a constant column.  Vectorised over columns."""
    V = np.asarray(V, float)
    y = np.asarray(y, float)
    n = len(y)
    order = np.argsort(V, axis=0, kind="stable")
    Vs = np.take_along_axis(V, order, 0)
    ys = y[order]
    pos_left = np.cumsum(ys, 0)[:-1]                     # split after row i: rows 0..i left
    n_left = np.arange(1, n)[:, None]
    n_right = n - n_left
    pos_total = y.sum()
    h_left = _entropy(pos_left / n_left)
    h_right = _entropy((pos_total - pos_left) / n_right)
    cond = (n_left * h_left + n_right * h_right) / n
    valid = Vs[1:] > Vs[:-1]                             # only between distinct values
    cond = np.where(valid, cond, np.inf)
    best = cond.min(0) if n > 1 else np.full(V.shape[1], np.inf)
    gain = _entropy(np.array(pos_total / n)) - best
    return np.where(np.isfinite(gain), np.maximum(gain, 0.0), 0.0)


def bag_statistic(X, offsets, statistic="max"):
    """(n_bags, d) per-bag summary of stacked instances."""
    if statistic == "max":
        return segment_reduce(X, offsets, np.maximum)
    if statistic == "min":
        return segment_reduce(X, offsets, np.minimum)
    if statistic == "mean":
        return segment_reduce(X, offsets, np.add) / np.diff(offsets)[:, None]
    raise ValueError(f"bag_statistic must be max | min | mean, got {statistic!r}")


def bag_information_gain(X, offsets, y, statistic="max"):
    """[big] score per feature of stacked bags (module docstring)."""
    return best_split_information_gain(bag_statistic(X, offsets, statistic), y)


def instance_information_gain(X, offsets, y):
    """[iig] score per feature of stacked bags: instances inherit their bag's label."""
    return best_split_information_gain(X, np.repeat(y, np.diff(offsets)))


def pairwise_bag_reliability(X, offsets, y, buffer_elems=1 << 22):
    """[fs] score per feature of stacked bags: mean over (positive, negative) bag pairs of the
    directed 1-D Hausdorff distance from the positive bag to the negative bag, minus the mean
    over pairs of distinct negative bags of their symmetric 1-D Hausdorff distance (min-max
    scaled).

    Cost Θ(N_instances · N_negative_instances · d) — every bag pair is compared feature by
    feature; features are processed in chunks through one preallocated float32 buffer of about
    ``buffer_elems`` elements."""
    X = minmax_scale(X).astype(np.float32)
    sizes = np.diff(offsets)
    neg = np.flatnonzero(y == 0)
    pos = np.flatnonzero(y == 1)
    neg_rows = np.concatenate([np.arange(offsets[b], offsets[b + 1]) for b in neg])
    neg_off = np.r_[0, np.cumsum(sizes[neg])]
    n, d, q = X.shape[0], X.shape[1], len(neg_rows)
    chunk = int(max(1, min(d, buffer_elems // max(1, n * q))))
    buf = np.empty((n, q, chunk), np.float32)
    to_bag = np.empty((n, len(neg), chunk), np.float32)
    k = len(neg)
    score = np.zeros(d)
    for s0 in range(0, d, chunk):                       # loop over feature chunks
        c = min(chunk, d - s0)
        Xs = X[:, s0:s0 + c]                             # (n_inst, c)
        D = buf[:, :, :c]
        np.subtract(Xs[:, None, :], Xs[neg_rows][None, :, :], out=D)
        np.abs(D, out=D)
        tb = to_bag[:, :, :c]
        np.minimum.reduceat(D, neg_off[:-1], axis=1, out=tb)    # dist(x, N): (n_inst, n_neg, c)
        H = np.maximum.reduceat(tb, offsets[:-1], axis=0)       # directed: (n_bags, n_neg, c)
        cross = H[pos].mean((0, 1)) if len(pos) else np.zeros(c)
        Hn = H[neg]
        sym = np.maximum(Hn, Hn.transpose(1, 0, 2))
        within = (sym.sum((0, 1)) / (k * (k - 1))) if k > 1 else np.zeros(c)
        score[s0:s0 + c] = cross - within
    return score


# --------------------------------------------------------------------------------------------
# selectors
# --------------------------------------------------------------------------------------------
class _ScoreViewSelector(ViewSelector):
    """Rank features by ``self._scores(X, offsets, y)`` and allocate ``m`` by ``strategy``."""

    _stage_rule = StageRule(downstream=("m", "strategy", "view", "views"))

    _parameter_constraints = {
        "m": FRACTION_OR_COUNT,
        "strategy": options(STRATEGIES),
        **VIEW_CONSTRAINTS,
        "stages": [StageStore, None],
    }

    def _allocate(self, scores):
        allowed = self._restricted_views()
        ranges = [self.view_ranges_[k] for k in allowed]
        total = sum(b - a for a, b in ranges)
        m = n_from_fraction(self.m, total)
        if self.strategy == "II" or len(allowed) == 1:
            cols = np.concatenate([np.arange(a, b) for a, b in ranges])
            order = cols[np.argsort(-scores[cols], kind="stable")]
            return order[:m]
        take = split_m(m, [b - a for a, b in ranges])
        parts = []
        for (a, b), t in zip(ranges, take):
            cols = np.arange(a, b)
            parts.append(cols[np.argsort(-scores[cols], kind="stable")][:t])
        sel = np.concatenate(parts)
        return sel[np.argsort(-scores[sel], kind="stable")]

    def stage_state(self, X, offsets, y):
        """Fold stage (see :mod:`~milbench.selectors.stage_store`): scores of all columns,
        whatever m / strategy / views."""
        return {"scores": np.asarray(self._scores(X, offsets, y), float)}

    def _fit(self, X, offsets, y):
        state = None if self.stages is None else self.stages.lookup(self, X, offsets, y)
        self.scores_ = (self.stage_state(X, offsets, y) if state is None else state)["scores"]
        self.support_ = self._allocate(self.scores_)
        self.diagnostics_ = {f"n_selected_{n}": 0 for n in self.view_names_}
        owner = self._view_of()
        for k, n in enumerate(self.view_names_):
            self.diagnostics_[f"n_selected_{n}"] = int((owner[self.support_] == k).sum())


class BagInfoGain(_ScoreViewSelector):
    """[big] bag-level information gain (module docstring), strategy I | II | III."""

    _parameter_constraints = {
        **_ScoreViewSelector._parameter_constraints,
        "bag_statistic": options(("max", "min", "mean")),
    }

    def __init__(self, m=200, strategy="I", bag_statistic="max", view=None, views=None,
                 stages=None):
        self.m = m
        self.strategy = strategy
        self.bag_statistic = bag_statistic
        self.view = view
        self.views = views
        self.stages = stages

    def _scores(self, X, offsets, y):
        return bag_information_gain(X, offsets, y, self.bag_statistic)


class InstanceInfoGain(_ScoreViewSelector):
    """[iig] instance-level information gain (instances inherit bag labels)."""

    def __init__(self, m=200, strategy="I", view=None, views=None, stages=None):
        self.m = m
        self.strategy = strategy
        self.view = view
        self.views = views
        self.stages = stages

    def _scores(self, X, offsets, y):
        return instance_information_gain(X, offsets, y)


class PairwiseBagReliability(_ScoreViewSelector):
    """[fs] pairwise bag-reliability score (module docstring)."""

    def __init__(self, m=200, strategy="I", view=None, views=None, stages=None):
        self.m = m
        self.strategy = strategy
        self.view = view
        self.views = views
        self.stages = stages

    def _scores(self, X, offsets, y):
        return pairwise_bag_reliability(X, offsets, y)
