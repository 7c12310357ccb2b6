"""ReliefF-MI (hydr-mi.txt §3.1, Listing 1): diff functions against hand-computed values,
bag-distance tables against milbench.classifiers.distances and a brute-force loop, the Listing-1 weight
update, and recovery of informative features on synthetic bags for every metric."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.pipeline import Pipeline

from milbench.classifiers.distances import bag_distances
from milbench.data.bags import stack
from milbench.selectors.relieff import (
    METRICS,
    ReliefFMI,
    bag_neighbour_tables,
    diff_bags,
    normalise,
    relieff_mi_weights,
)

# The paper's example sizes: R has 3 instances, the hit H 4, the miss M 6 (two features,
# both with range max − min = 10 over the three bags, so diff_instance = |a − b| / 10).
R = np.array([(0, 0), (2, 2), (9, 4)], float)
H = np.array([(1, 0), (4, 1), (2, 4), (10, 9)], float)
M = np.array([(5, 7), (6, 6), (1, 10), (8, 9), (5, 1), (7, 3)], float)
RANGE = [10.0, 10.0]

# Hand computation (Manhattan distances in raw units; every minimum below is unique):
#   R→H  r1:(h1)1  r2:(h3)2  r3:(h4)6        H→R  h1:(r1)1  h2:(r2)3  h3:(r2)2  h4:(r3)6
#   R→M  r1:(m5)6  r2:(m5)4  r3:(m6)3        M→R  m1:(r3)7  m2:(r3)5  m3:(r2)9  m4:(r3)6
#                                                 m5:(r2)4  m6:(r3)3
# min  (R,H): closest pair (r1,h1) -> |(0,0)-(1,0)|/10          = (0.1, 0.0)
# min  (R,M): closest pair (r3,m6) -> |(9,4)-(7,3)|/10          = (0.2, 0.1)
# max  (R,H): max_r min_h = 6 (r3,h4) >= max_h min_r = 6        -> |(9,4)-(10,9)|/10 = (0.1, 0.5)
# max  (R,M): max_r min_m = 6 < max_m min_r = 9 (m3,r2)         -> |(2,2)-(1,10)|/10 = (0.1, 0.8)
# avg  (R,H): pairs (r1,h1)(r2,h3)(r3,h4)(h1,r1)(h2,r2)(h3,r2)(h4,r3):
#             f0: 1+0+1+1+2+0+1 = 6, f1: 0+2+5+0+1+2+5 = 15     -> (6, 15) / (10·7)
# avg  (R,M): pairs (r1,m5)(r2,m5)(r3,m6)(m1,r3)(m2,r3)(m3,r2)(m4,r3)(m5,r2)(m6,r3):
#             f0: 5+3+2+4+3+1+1+3+2 = 24, f1: 1+1+1+3+2+8+5+1+1 = 23 -> (24, 23) / (10·9)
HAND = {
    ("min", "H"): [0.1, 0.0], ("min", "M"): [0.2, 0.1],
    ("max", "H"): [0.1, 0.5], ("max", "M"): [0.1, 0.8],
    ("avg", "H"): [6 / 70, 15 / 70], ("avg", "M"): [24 / 90, 23 / 90],
}


@pytest.mark.parametrize("metric", ["min", "max", "avg"])
@pytest.mark.parametrize("other", ["H", "M"])
def test_diff_functions_hand_computed(metric, other):
    B = {"H": H, "M": M}[other]
    np.testing.assert_allclose(diff_bags(R, B, metric, RANGE), HAND[(metric, other)], atol=1e-12)


def test_adapted_diff_picks_by_labels():
    # +/+ -> minimal, -/- -> average, +/- (either order) -> maximal Hausdorff diff
    np.testing.assert_allclose(diff_bags(R, H, "adapted", RANGE, (1, 1)), HAND[("min", "H")])
    np.testing.assert_allclose(diff_bags(R, H, "adapted", RANGE, (0, 0)), HAND[("avg", "H")])
    np.testing.assert_allclose(diff_bags(R, M, "adapted", RANGE, (1, 0)), HAND[("max", "M")])
    np.testing.assert_allclose(diff_bags(R, M, "adapted", RANGE, (0, 1)), HAND[("max", "M")])


def test_listing1_weight_update_on_three_bags():
    """W of Listing 1 with k = 1, m = 3 (every bag sampled) equals the hand-assembled sum."""
    bags, y = [R, H, M], np.array([1, 1, 0])
    rng = np.array(RANGE)

    def d(a, b, metric, la, lb):
        return diff_bags(a, b, metric, rng, (la, lb))

    for metric in METRICS:
        # R(+): hit H, miss M.  H(+): hit R, miss M.  M(−): no hit (k capped to 0), miss = the
        # nearer positive bag, which is H under every metric (raw units: min 1 (m5,h2) vs 3,
        # max 7 vs 9, avg 41/10 vs 47/9; adapted uses max for a −/+ pair).
        W = (-d(R, H, metric, 1, 1) + d(R, M, metric, 1, 0)
             - d(H, R, metric, 1, 1) + d(H, M, metric, 1, 0)
             + d(M, H, metric, 0, 1)) / 3
        got = relieff_mi_weights(*stack(bags), y, metric=metric, k=1, m=3)
        np.testing.assert_allclose(got, W, atol=1e-12, err_msg=metric)


def _random_bags(n=14, d=5, seed=0):
    rng = np.random.default_rng(seed)
    bags = [rng.normal(size=(rng.integers(1, 7), d)) for _ in range(n)]
    return bags, np.arange(n) % 2


@pytest.mark.parametrize("full_rows", [False, True])
def test_tables_match_milbench_distances_euclidean(full_rows):
    bags, _ = _random_bags()
    X = np.concatenate(bags)
    lo, rng = X.min(0), X.max(0) - X.min(0)
    Xn = normalise(X, lo, rng)
    off = np.concatenate([[0], np.cumsum([len(b) for b in bags])])
    nbags = np.split(Xn, off[1:-1])
    sample = np.array([0, 3, 4, 9, 13])
    T = bag_neighbour_tables(Xn, off, sample, "euclidean", block_size=40,   # several blocks
                             full_rows=full_rows)
    for metric, got in (("min", T.dmin), ("max", T.dmax), ("avg", T.davg)):
        ref = bag_distances(nbags, metric=metric)[sample]
        # the |a|²+|b|²−2ab formula leaves ~sqrt(eps) on zero distances
        np.testing.assert_allclose(got, ref, atol=1e-7, err_msg=metric)


@pytest.mark.parametrize("full_rows", [False, True])
def test_attaining_pairs_brute_force_manhattan(full_rows):
    bags, _ = _random_bags(seed=3)
    X = np.concatenate(bags)
    off = np.concatenate([[0], np.cumsum([len(b) for b in bags])])
    sample = np.array([1, 2, 7, 11])
    T = bag_neighbour_tables(X, off, sample, "manhattan", block_size=30, full_rows=full_rows)
    for si, i in enumerate(sample):
        for j in range(len(bags)):
            ia, ib = np.arange(off[i], off[i + 1]), np.arange(off[j], off[j + 1])
            D = np.abs(X[ia][:, None] - X[ib][None]).sum(-1)
            a, b = np.unravel_index(np.argmin(D), D.shape)
            assert T.dmin[si, j] == pytest.approx(D.min())
            assert (T.min_pair[0, si, j], T.min_pair[1, si, j]) == (ia[a], ib[b])
            h_ab, h_ba = D.min(1).max(), D.min(0).max()
            assert T.dmax[si, j] == pytest.approx(max(h_ab, h_ba))
            pa, pb = T.max_pair[:, si, j]
            # the attaining pair realises the max-min: its distance is the Hausdorff distance and
            # one of its ends is the other's nearest instance
            assert np.abs(X[pa] - X[pb]).sum() == pytest.approx(max(h_ab, h_ba))
            assert T.davg[si, j] == pytest.approx((D.min(1).sum() + D.min(0).sum())
                                                  / (len(ia) + len(ib)))


def make_synthetic(n_bags=80, d_inf=5, d_noise=45, witness=0.8, seed=0):
    """Positive bags: a fraction ``witness`` of their instances shifted by +2 on the first
    ``d_inf`` features; all other values N(0, 0.3²) (informative) / U(0, 1) (noise).
    (The minimal-Hausdorff variant needs a fairly high witness rate: with few witnesses the
    closest pair of a positive and a negative bag is two negative-like instances.)"""
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n_bags):
        n = int(rng.integers(3, 8))
        Xb = rng.uniform(0, 1, size=(n, d_inf + d_noise))
        Xb[:, :d_inf] = rng.normal(0, 0.3, size=(n, d_inf))
        if i % 2:
            Xb[:max(1, int(round(witness * n))), :d_inf] += 2.0
        bags.append(Xb)
        y.append(i % 2)
    return bags, np.array(y)


@pytest.mark.parametrize("metric", METRICS)
def test_informative_features_ranked_first(metric):
    bags, y = make_synthetic()
    sel = ReliefFMI(metric=metric, percent=5, random_state=0).fit(bags, y)   # k, m defaults
    assert sorted(sel.support_.tolist()) == [0, 1, 2, 3, 4]
    assert set(np.flatnonzero(sel.ranking_ <= 5)) == set(range(5))
    assert sel.feature_importances_[:5].min() > sel.feature_importances_[5:].max()


def test_sampling_k_cap_and_determinism():
    bags, y = make_synthetic(n_bags=30, seed=1)
    a = ReliefFMI(m=10, k=80, percent=0.2, random_state=5).fit(bags, y)
    b = ReliefFMI(m=10, k=80, percent=0.2, random_state=5).fit(bags, y)
    np.testing.assert_array_equal(a.feature_importances_, b.feature_importances_)
    assert a.diagnostics_["relieff_m"] == 10
    assert a.diagnostics_["relieff_k_hit_mean"] == 14      # 15 bags per class, minus R itself
    assert a.diagnostics_["relieff_k_miss_mean"] == 15
    assert len(a.support_) == 10                           # 20 % of 50 features
    c = ReliefFMI(m=10, percent=None, random_state=5).fit(bags, y)
    assert set(c.support_) == set(np.flatnonzero(c.feature_importances_ > 0))


def test_transform_and_sklearn_contract():
    bags, y = make_synthetic(n_bags=40, seed=2)
    sel = ReliefFMI(metric="max", percent=7)
    assert clone(sel).get_params() == sel.get_params()
    out = sel.fit(bags, y).transform(bags)
    assert len(out) == len(bags) and out[0].shape == (len(bags[0]), 7)
    np.testing.assert_array_equal(out[3], bags[3][:, sel.support_])
    from milbench.classifiers.simple import MISimple
    pipe = Pipeline([("select", ReliefFMI(metric="adapted")), ("clf", MISimple("logistic"))])
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    res = cross_validate(pipe, bags, y, cv=cv)
    assert res["test_score"].mean() > 0.8
    gs = GridSearchCV(pipe, {"select__percent": [3, 10]}, cv=cv).fit(bags, y)
    assert gs.best_params_["select__percent"] in (3, 10)


def test_bad_metric():
    bags, y = make_synthetic(n_bags=10)
    with pytest.raises(ValueError, match="metric"):
        ReliefFMI(metric="hausdorff").fit(bags, y)
    with pytest.raises(ValueError, match="instance_metric"):
        ReliefFMI(instance_metric="cosine").fit(bags, y)
