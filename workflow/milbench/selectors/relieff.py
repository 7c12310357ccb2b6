"""[relieff-mi] ReliefF-MI: ReliefF for multi-instance bags (Zafra et al. 2013), §3.1 and Listing 1
of Zafra, Pechenizkiy & Ventura, Information Sciences (2013); ReliefF is Kononenko's (1994).

For each of ``m`` sampled training bags R the ``k`` nearest hits H_j (same label) and ``k``
nearest misses M_j (other label) are found under a bag distance, and every feature weight is
updated at once (Listing 1, line 11)::

    W[A] -= Σ_j diff(A, R, H_j) / (m·k_hit)
    W[A] += P(C)/(1 − P(class R)) · Σ_j diff(A, R, M_j) / (m·k_miss)

with ``diff_instance(A, x, y) = |x_A − y_A| / (max A − min A)`` (range over the training
instances).  Bag distances and their ``diff`` functions (§3.1):

* ``max``  maximal Hausdorff  max(max_r min_h d, max_h min_r d); diff on the one instance pair
  attaining it (the instance realising the outer max and its nearest counterpart).
* ``min``  minimal Hausdorff  min_r min_h d; diff on the closest instance pair.
* ``avg``  average Hausdorff  (Σ_r min_h d + Σ_h min_r d)/(|R|+|H|); diff = every instance's
  diff to its nearest counterpart in the other bag, summed and divided by |R|+|H|.
* ``adapted``  avg for two negative bags, min for two positive bags, max for a positive and a
  negative bag (both for choosing neighbours and for ``diff``).

The instance distance ``d`` is, as in the paper ("the sum of the distances of all attributes
(Manhattan distance)"), the sum of ``diff_instance`` over all features, i.e. the L1 distance of
range-normalised instances (``instance_metric="manhattan"``); ``"euclidean"`` gives the L2
distance of the same normalised instances (then the bag distances equal
``milbench.classifiers.distances.bag_distances`` on the normalised bags — tested).

Vectorised: one blocked pass over the (instances of the sampled bags) × (all instances)
distance matrix yields, with segment reductions, every instance's nearest instance in every bag
and every bag's nearest instance to every instance; from these come all three Hausdorff
matrices *and* their attaining instance pairs.  The diffs of all features are computed at once
per (R, neighbour) pair.

Departures / readings (documented choices):

* ``m`` bags are drawn without replacement (all bags, in order, when ``m`` ≥ #bags); Weka's
  ReliefF draws with replacement.  ``k`` is capped per class by what the training data has
  (#same-class bags − 1 hits, #other-class bags misses) and the divisor uses the capped value.
* Only binary labels occur in MIL, so the prior factor P(C)/(1−P(class R)) is 1; it is kept in
  the code for clarity.
* Ties in distances are broken by the lower instance / bag index (deterministic).
* With ``adapted`` the misses use the maximal and the hits the minimal / average pair, whose
  diffs are systematically larger / smaller, so nearly every weight comes out positive; only the
  ranking is meaningful (as in the paper, which keeps a top percentage).
* Output: ``feature_importances_`` (the weights W), ``ranking_`` (scikit-learn RFE convention:
  rank of each feature, 1 = best), ``support_`` (kept features, best first).  ``percent`` is a
  fraction of the features or an integer count (``n_from_fraction``); ``percent=None`` keeps the
  features with W > 0 (Listing 1's threshold, at least one feature).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.utils import check_random_state

from milbench.base import (
    COUNT,
    FRACTION_OR_COUNT,
    FeatureSubsetTransformer,
    n_from_fraction,
    options,
)
from milbench.data.bags import stack
from milbench.selectors.stage_store import StageRule, StageStore
from milbench.utils.segments import segment_arg

METRICS = ("max", "min", "avg", "adapted")
INSTANCE_METRICS = ("manhattan", "euclidean")


# ---------------------------------------------------------------------------------------------
# normalisation and blocked nearest-instance tables
# ---------------------------------------------------------------------------------------------
def feature_ranges(X):
    """(min, max − min) per feature of the stacked training instances; a zero range stays 0."""
    lo = X.min(axis=0)
    return lo, X.max(axis=0) - lo


def normalise(X, lo, rng):
    """Scaled instances: |a − b| of two scaled values is diff_instance (0 on constant features)."""
    safe = np.where(rng > 0, rng, 1.0)
    return np.where(rng > 0, (X - lo) / safe, 0.0)


def _pairwise(A, B, instance_metric):
    if instance_metric == "manhattan":
        return cdist(A, B, metric="cityblock")
    if instance_metric == "euclidean":
        d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
        np.maximum(d, 0.0, out=d)
        return np.sqrt(d, out=d)
    raise ValueError(f"instance_metric must be one of {INSTANCE_METRICS}, got {instance_metric!r}")


@dataclass
class BagNeighbourTables:
    """Hausdorff quantities between the sampled bags ``sample`` (rows) and all bags (columns).

    rows      : (N_R,) global instance index of every instance of the sampled bags, in order
    row_off   : (m+1,) offsets of the sampled bags inside ``rows``
    rowmin/rowarg : (N_R, n) min distance from each sampled instance to each bag / the global
                index of the nearest instance of that bag
    colmin/colarg : (m, N) min distance from each sampled bag to every instance / the global
                index of the nearest instance of the sampled bag
    dmin, dmax, davg : (m, n) minimal / maximal / average Hausdorff distances
    min_pair, max_pair : (2, m, n) global instance indices (in R, in B) attaining dmin / dmax
    """

    sample: np.ndarray
    rows: np.ndarray
    row_off: np.ndarray
    rowmin: np.ndarray
    rowarg: np.ndarray
    colmin: np.ndarray
    colarg: np.ndarray
    dmin: np.ndarray
    dmax: np.ndarray
    davg: np.ndarray
    min_pair: np.ndarray
    max_pair: np.ndarray


def bag_neighbour_tables(Xn, offsets, sample, instance_metric="manhattan", block_size=2 ** 21,
                         full_rows=None):
    """One blocked pass over (instances of ``sample`` bags) × (all instances) distances.

    ``block_size`` bounds one block's distance matrix (elements); a block always holds whole
    sampled bags.  ``full_rows`` (default: when at least half of the bags are sampled) instead
    scans (all instances) × (all instances) and reads the bag → instance direction off the
    sampled bags' columns.  Returns :class:`BagNeighbourTables`.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    sample = np.asarray(sample, dtype=np.int64)
    sizes = np.diff(offsets)
    N, n, m = len(Xn), len(sizes), len(sample)
    rsizes = sizes[sample]
    row_off = np.concatenate([[0], np.cumsum(rsizes)])
    rows = np.repeat(offsets[sample] - row_off[:-1], rsizes) + np.arange(row_off[-1])
    if full_rows is None:
        full_rows = 2 * m >= n
    if full_rows:
        # every instance against every bag; the sampled bags' columns give the other direction
        # (distances are symmetric), which halves the segment work when most bags are sampled
        allmin = np.empty((N, n))
        allarg = np.empty((N, n), dtype=np.int64)
        step = max(1, block_size // max(N, 1))
        for r0 in range(0, N, step):
            D = _pairwise(Xn[r0:r0 + step], Xn, instance_metric)
            allmin[r0:r0 + step], allarg[r0:r0 + step] = segment_arg(D, offsets, np.minimum,
                                                                     axis=1)
        rowmin, rowarg = allmin[rows], allarg[rows]
        colmin, colarg = np.ascontiguousarray(allmin[:, sample].T), \
            np.ascontiguousarray(allarg[:, sample].T)
    else:
        rowmin = np.empty((len(rows), n))
        rowarg = np.empty((len(rows), n), dtype=np.int64)
        colmin = np.empty((m, N))
        colarg = np.empty((m, N), dtype=np.int64)
        max_rows = max(1, block_size // max(N, 1))
        s = 0
        while s < m:
            e = s + 1
            while e < m and row_off[e + 1] - row_off[s] <= max_rows:
                e += 1
            r0, r1 = row_off[s], row_off[e]
            D = _pairwise(Xn[rows[r0:r1]], Xn, instance_metric)           # (b, N)
            rowmin[r0:r1], rowarg[r0:r1] = segment_arg(D, offsets, np.minimum, axis=1)
            colmin[s:e], a = segment_arg(D, row_off[s:e + 1] - r0, np.minimum)
            colarg[s:e] = rows[r0:r1][a]
            s = e
    # bag-level reductions over the sampled bags' rows (axis 0) and all bags' columns (axis 1)
    dmin, amin = segment_arg(rowmin, row_off, np.minimum)
    d_rb, a_rb = segment_arg(rowmin, row_off, np.maximum)  # max_r min_b
    d_br, a_br = segment_arg(colmin, offsets, np.maximum, axis=1)   # max_b min_r
    cols = np.arange(n)[None, :]
    min_pair = np.stack([rows[amin], rowarg[amin, cols]])
    rb = np.stack([rows[a_rb], rowarg[a_rb, cols]])
    br = np.stack([colarg[np.arange(m)[:, None], a_br], a_br])
    first = d_rb >= d_br
    max_pair = np.where(first[None], rb, br)
    dmax = np.where(first, d_rb, d_br)
    davg = (np.add.reduceat(rowmin, row_off[:-1], axis=0)
            + np.add.reduceat(colmin, offsets[:-1], axis=1)) / (rsizes[:, None] + sizes[None, :])
    return BagNeighbourTables(sample, rows, row_off, rowmin, rowarg, colmin, colarg,
                              dmin, dmax, davg, min_pair, max_pair)


# ---------------------------------------------------------------------------------------------
# diff functions
# ---------------------------------------------------------------------------------------------
_KIND = {"min": 0, "max": 1, "avg": 2}


def pair_diffs(T, Xn, offsets, s_idx, b_idx, kinds):
    """diff(A, R, B) for all features A at once, for a flat list of pairs.

    s_idx : positions into ``T.sample`` (the bag R); b_idx : bag indices (B);
    kinds : 0 = min, 1 = max, 2 = avg Hausdorff diff.  Returns (P, d).
    """
    s_idx, b_idx, kinds = (np.asarray(v, dtype=np.int64) for v in (s_idx, b_idx, kinds))
    out = np.zeros((len(s_idx), Xn.shape[1]))
    for kind, pairs in ((0, T.min_pair), (1, T.max_pair)):
        sel = np.flatnonzero(kinds == kind)
        if len(sel):
            a, b = pairs[0, s_idx[sel], b_idx[sel]], pairs[1, s_idx[sel], b_idx[sel]]
            out[sel] = np.abs(Xn[a] - Xn[b])
    sel = np.flatnonzero(kinds == 2)
    if len(sel):
        sizes = np.diff(offsets)
        for s in np.unique(s_idx[sel]):
            p = sel[s_idx[sel] == s]
            J = b_idx[p]
            r_loc = np.arange(T.row_off[s], T.row_off[s + 1])
            r_glob = T.rows[r_loc]
            # every instance of R against its nearest instance in each B_j: (|R|, |J|, d)
            part_r = np.abs(Xn[r_glob][:, None, :] - Xn[T.rowarg[r_loc][:, J]]).sum(axis=0)
            # every instance of each B_j against its nearest instance in R
            bs = sizes[J]
            b_off = np.concatenate([[0], np.cumsum(bs)])
            h = np.repeat(offsets[J] - b_off[:-1], bs) + np.arange(b_off[-1])
            part_b = np.add.reduceat(np.abs(Xn[h] - Xn[T.colarg[s, h]]), b_off[:-1], axis=0)
            out[p] = (part_r + part_b) / (len(r_loc) + bs)[:, None]
    return out


def diff_bags(R, B, metric, feature_range, labels=(1, 1), instance_metric="manhattan"):
    """diff(A, R, B) for all features of one bag pair (Zafra et al. 2013, §3.1); convenience wrapper
    over the vectorised path.  ``feature_range`` = max A − min A on the training data;
    ``labels`` (of R, B) matter only for ``adapted``."""
    R, B = np.asarray(R, float), np.asarray(B, float)
    rng = np.asarray(feature_range, float)
    X, off = stack([R, B])
    Xn = normalise(X, np.zeros(X.shape[1]), rng)
    T = bag_neighbour_tables(Xn, off, [0], instance_metric)
    kind = _KIND[metric] if metric != "adapted" else _adapted_kind(labels[0], labels[1])
    return pair_diffs(T, Xn, off, [0], [1], [kind])[0]


def _adapted_kind(label_r, label_b):
    if label_r != label_b:
        return _KIND["max"]
    return _KIND["min"] if label_r == 1 else _KIND["avg"]


# ---------------------------------------------------------------------------------------------
# ReliefF-MI weights (Listing 1)
# ---------------------------------------------------------------------------------------------
def relieff_mi_weights(X, offsets, y, metric="adapted", k=80, m=180, instance_metric="manhattan",
                       random_state=None, block_size=2 ** 21, return_details=False):
    """Feature weights W of Listing 1 (see module docstring) of stacked bags (instances ``X``,
    bag ``offsets``); vectorised over features."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    X = np.asarray(X, dtype=float)
    y = np.asarray(y).astype(int)
    n = len(y)
    lo, rng = feature_ranges(X)
    Xn = normalise(X, lo, rng)
    m_eff = min(int(m), n)
    sample = np.arange(n) if m_eff >= n else \
        np.sort(check_random_state(random_state).choice(n, m_eff, replace=False))
    T = bag_neighbour_tables(Xn, offsets, sample, instance_metric, block_size)
    yR = y[sample]
    prior = np.bincount(y, minlength=2) / n
    s_rows = np.arange(m_eff)[:, None]
    same = yR[:, None] == y[None, :]
    not_self = np.ones((m_eff, n), dtype=bool)
    not_self[np.arange(m_eff), sample] = False

    def dist(kind_matrix):
        stacked = np.stack([T.dmin, T.dmax, T.davg])
        return np.take_along_axis(stacked, kind_matrix[None], axis=0)[0]

    if metric == "adapted":
        kind = np.where(~same, _KIND["max"], np.where(yR[:, None] == 1, _KIND["min"], _KIND["avg"]))
    else:
        kind = np.full((m_eff, n), _KIND[metric])
    D = dist(kind)
    s_all, b_all, w_all = [], [], []
    k_used = {}
    for role, mask in (("hit", same & not_self), ("miss", ~same)):
        Dm = np.where(mask, D, np.inf)
        avail = mask.sum(axis=1)
        k_eff = np.minimum(int(k), avail)                               # per sampled bag
        width = int(k_eff.max()) if len(k_eff) else 0
        if width == 0:
            continue
        order = np.argsort(Dm, axis=1, kind="stable")[:, :width]
        valid = np.arange(width)[None, :] < k_eff[:, None]
        if role == "hit":
            w = -1.0 / (m_eff * np.maximum(k_eff, 1))
        else:
            w = (prior[1 - yR] / (1.0 - prior[yR])) / (m_eff * np.maximum(k_eff, 1))
        s_all.append(np.broadcast_to(s_rows, order.shape)[valid])
        b_all.append(order[valid])
        w_all.append(np.broadcast_to(w[:, None], order.shape)[valid])
        k_used[role] = k_eff
    s_all, b_all, w_all = (np.concatenate(v) for v in (s_all, b_all, w_all))
    kinds = kind[s_all, b_all]
    W = np.zeros(X.shape[1])
    chunk = max(1, 2 ** 20 // max(X.shape[1], 1))
    for c in range(0, len(s_all), chunk):
        sl = slice(c, c + chunk)
        W += w_all[sl] @ pair_diffs(T, Xn, offsets, s_all[sl], b_all[sl], kinds[sl])
    if not return_details:
        return W
    details = {"sample": sample, "tables": T, "pairs": (s_all, b_all, w_all, kinds),
               "k_hit": k_used.get("hit", np.zeros(m_eff, int)),
               "k_miss": k_used.get("miss", np.zeros(m_eff, int))}
    return W, details


class ReliefFMI(FeatureSubsetTransformer):
    """ReliefF-MI feature ranking + top-``percent`` selection (Zafra et al. (2013), Information
    Sciences, §3.1, Listing 1).

    Parameters: metric ('max', 'min', 'avg', 'adapted'), k (neighbours, paper 80), m (sampled
    bags, paper 180; both capped by the data), percent (fraction or count of features kept;
    None = W > 0), instance_metric ('manhattan' as in the paper, or 'euclidean'),
    random_state (bag sampling when m < #bags), block_size (elements per distance block).
    Fold stage (see :mod:`~milbench.selectors.stage_store`): W and the sampling diagnostics;
    ``percent`` is downstream.
    """

    _stage_rule = StageRule(downstream=("percent",), random=True)

    _parameter_constraints = {
        "metric": options(METRICS),
        "k": COUNT,
        "m": COUNT,
        "percent": [*FRACTION_OR_COUNT, None],
        "instance_metric": options(INSTANCE_METRICS),
        "random_state": ["random_state"],
        "block_size": COUNT,
        "stages": [StageStore, None],
    }

    def __init__(self, metric="adapted", k=80, m=180, percent=0.5, instance_metric="manhattan",
                 random_state=None, block_size=2 ** 21, stages=None):
        self.metric = metric
        self.k = k
        self.m = m
        self.percent = percent
        self.instance_metric = instance_metric
        self.random_state = random_state
        self.block_size = block_size
        self.stages = stages

    def _fit(self, X, offsets, y):
        state = None if self.stages is None else self.stages.lookup(self, X, offsets, y)
        self.fit_stage_state(self.stage_state(X, offsets, y) if state is None else state)

    # fold stage (served through a StageStore): W and the sampling diagnostics do not depend on percent
    def _stage_random_state(self):
        return self.random_state

    def stage_state(self, X, offsets, y):
        """Fold stage (see :mod:`~milbench.selectors.stage_store`): W and the sampling
        diagnostics, which do not depend on ``percent``."""
        W, det = relieff_mi_weights(X, offsets, y, self.metric, self.k, self.m,
                                    self.instance_metric, self.random_state, self.block_size,
                                    return_details=True)
        return {"weights": W,
                "sampling": np.array([len(det["sample"]), np.mean(det["k_hit"]),
                                      np.mean(det["k_miss"])], dtype=np.float64)}

    def fit_stage_state(self, state):
        """Finish the fit from a stage state (:meth:`stage_state`): rank W and keep
        ``percent``; ``n_features_in_`` must be set."""
        W, (m_used, k_hit, k_miss) = state["weights"], state["sampling"]
        d = len(W)
        order = np.argsort(-W, kind="stable")
        ranking = np.empty(d, dtype=np.int64)
        ranking[order] = np.arange(1, d + 1)
        if self.percent is None:
            n_keep = max(1, int((W > 0).sum()))
        else:
            n_keep = n_from_fraction(self.percent, d)
        self.feature_importances_ = W
        self.ranking_ = ranking
        self.support_ = order[:n_keep]
        self.n_features_selected_ = int(n_keep)
        self.diagnostics_ = {"relieff_m": int(m_used),
                             "relieff_k_hit_mean": float(k_hit),
                             "relieff_k_miss_mean": float(k_miss),
                             "relieff_n_selected": int(n_keep),
                             "relieff_n_positive_weights": int((W > 0).sum())}
        return self
