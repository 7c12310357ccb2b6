"""CVFS-MIL and the multi-view baselines (cvfs-mil.txt §3–4)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.base import clone

from milbench.classifiers.view_ensemble import ViewEnsemble
from milbench.data.bags import Bags, resolve_views
from milbench.selectors.cvfs import (
    CVFS,
    bag_representatives,
    feature_scores,
    lambda_step,
    view_multipliers,
)
from milbench.selectors.view_baselines import (
    BagInfoGain,
    InstanceInfoGain,
    PairwiseBagReliability,
    best_split_information_gain,
    minmax_scale,
    pairwise_bag_reliability,
    split_m,
)


def two_view_bags(n_bags=40, d1=20, d2=20, k=4, seed=0, shift=1.5):
    """Only view 2 carries signal: a positive bag has one instance with its first k view-2
    features raised by ``shift``; everything else is uniform noise."""
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n_bags):
        lab = i % 2
        n = int(rng.integers(2, 6))
        x1, x2 = rng.random((n, d1)), rng.random((n, d2))
        if lab:
            x2[rng.integers(n), :k] += shift
        bags.append(np.hstack([x1, x2]))
        y.append(lab)
    y = np.array(y)
    return Bags.from_list(bags, y, views={"v1": (0, d1), "v2": (d1, d1 + d2)}), y


# ---------------------------------------------------------------------------------------------
# φ(s): closed form == explicit pair enumeration (Eq. 2–5)
# ---------------------------------------------------------------------------------------------
def brute_force_phi(X, offsets, y):
    reps = bag_representatives(X, offsets, y)
    n = len(y)
    M = [(a, b) for a, b in itertools.combinations(range(n), 2) if y[a] == y[b]]
    C = [(a, b) for a, b in itertools.combinations(range(n), 2) if y[a] != y[b]]
    W = {}
    for a, b in M:
        W[("bag", a, b)] = -1.0 / len(M)
    for a, b in C:
        W[("bag", a, b)] = 1.0 / len(C)
    CI, DI = [], []
    for i in range(n):
        pairs = list(itertools.combinations(range(offsets[i], offsets[i + 1]), 2))
        (DI if y[i] else CI).extend(pairs)
    phi = np.zeros(X.shape[1])
    # ½ Σ over ordered pairs == Σ over unordered pairs
    for (kind, a, b), w in W.items():
        phi += w * (reps[a] - reps[b]) ** 2
    for a, b in CI:
        phi += -1.0 / len(CI) * (X[a] - X[b]) ** 2
    for a, b in DI:
        phi += 1.0 / len(DI) * (X[a] - X[b]) ** 2
    return phi


def test_feature_scores_equal_pair_enumeration():
    B, y = two_view_bags(n_bags=14, d1=5, d2=6, seed=3)
    X = minmax_scale(B.instances.astype(float))
    phi = feature_scores(X, B.offsets, y)
    np.testing.assert_allclose(phi, brute_force_phi(X, B.offsets, y), atol=1e-12)


def test_bag_representatives():
    # negative bags -> mean; positive bag -> instance farthest from the nearest negative mean
    neg1 = np.array([[0.0, 0.0], [2.0, 0.0]])          # mean (1, 0)
    neg2 = np.array([[0.0, 4.0]])                       # mean (0, 4)
    pos = np.array([[1.0, 1.0], [5.0, 0.0], [0.0, 3.0]])  # nearest-neg distances 1, 4, 1
    bags = [neg1, pos, neg2]
    X = np.vstack(bags)
    offsets = np.r_[0, np.cumsum([len(b) for b in bags])]
    reps = bag_representatives(X, offsets, np.array([0, 1, 0]))
    np.testing.assert_allclose(reps, [[1, 0], [5, 0], [0, 4]])


# ---------------------------------------------------------------------------------------------
# λ-step: closed form == constrained stationary point (Eq. 9–11)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("r", [-1.0, -3.0, -8.0])
def test_lambda_step_equals_closed_form_and_lagrange_condition(r):
    from scipy.optimize import minimize

    J = np.array([3.0, 0.5, 1.7])
    lam = lambda_step(J, r)
    e = 1 / (1 - r)
    np.testing.assert_allclose(lam, J ** e / (J ** e).sum(), rtol=1e-12)
    # Lagrange: r λ_k^{r-1} J_k is the same for every view
    g = r * lam ** (r - 1) * J
    np.testing.assert_allclose(g, g[0], rtol=1e-9)
    # and it is the optimum of Σ λ_k^r J_k on the simplex (convex for r < 0: a minimum)
    res = minimize(lambda t: np.sum((np.exp(t) / np.exp(t).sum()) ** r * J), np.zeros(3),
                   method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000})
    np.testing.assert_allclose(np.exp(res.x) / np.exp(res.x).sum(), lam, atol=1e-5)


def test_lambda_step_edge_cases():
    np.testing.assert_allclose(lambda_step([0.0, 0.0], -1), [0.5, 0.5])
    np.testing.assert_allclose(lambda_step([2.0, 0.0], -1), [1.0, 0.0])
    np.testing.assert_allclose(lambda_step([-1.0, 4.0], -1), [0.0, 1.0])   # negative J clipped
    m = view_multipliers([1.0, 0.0], -1)                 # λ = 0 floored, no overflow
    assert np.all(np.isfinite(m)) and m.max() == 1.0 and m[1] == 1.0


# ---------------------------------------------------------------------------------------------
# behaviour on a two-view set where only view 2 carries signal
# ---------------------------------------------------------------------------------------------
def test_cvfs_prefers_the_informative_view():
    B, y = two_view_bags(n_bags=60, k=4, seed=1)
    sel = CVFS(m=6).fit(B, y)
    top = sel.support_[:4]
    assert set(top.tolist()) == {20, 21, 22, 23}            # view 2's signal features first
    lam = sel.lambdas_
    assert lam[0].tolist() == [0.5, 0.5]
    assert lam[1][1] > 0.5 and sel.lambda_[1] > sel.lambda_[0]   # λ moved toward view 2
    d = sel.diagnostics_
    assert d["n_iter"] >= 1 and d["lambda_v2"] == pytest.approx(sel.lambda_[1])
    assert d["lambda_it0_v1"] == 0.5
    assert sum(d[f"n_selected_{v}"] for v in ("v1", "v2")) == 6


def test_cvfs_noise_only_view_gets_lower_weight_for_any_r():
    B, y = two_view_bags(n_bags=60, k=8, seed=2)
    for r in (-1, -4, -10):
        sel = CVFS(m=8, r=r).fit(B, y)
        assert sel.lambdas_[1][1] > sel.lambdas_[1][0]
        assert set(sel.support_[:4].tolist()) <= set(range(20, 28))


def test_cvfs_views_from_param_list_input_and_sklearn_contract():
    B, y = two_view_bags(n_bags=30, seed=4)
    est = CVFS(m=5, views=[20, 20])
    assert clone(est).get_params() == est.get_params()
    a = est.fit(B.as_list(), y)
    assert a is est
    b = CVFS(m=5).fit(B, y)                                 # views from the Bags
    np.testing.assert_array_equal(a.support_, b.support_)
    c = CVFS(m=5, views=[(0, 20), (20, 40)]).fit(B.as_list(), y)
    np.testing.assert_array_equal(a.support_, c.support_)
    # same seed-free input -> same numbers; transform keeps views grouped
    Z = b.transform(B)
    assert isinstance(Z, Bags) and Z.n_features == 5
    starts = [v[0] for v in Z.views.values()]
    assert starts == sorted(starts) and sum(v[1] - v[0] for v in Z.views.values()) == 5
    np.testing.assert_array_equal(Z.instances, B.instances[:, b.output_columns_])
    lst = b.transform(B.as_list())
    np.testing.assert_array_equal(np.concatenate(lst), Z.instances)
    with pytest.raises(ValueError, match="partition"):
        CVFS(views=[10, 10]).fit(B.as_list(), y)


def test_cvfs_single_view_restriction():
    B, y = two_view_bags(n_bags=30, seed=5)
    sel = CVFS(m=5, view="v1").fit(B, y)
    assert (sel.support_ < 20).all()
    assert list(sel.transform(B).views) == ["v1"]


def test_cvfs_in_pipeline_with_milr_cross_validate():
    from sklearn.model_selection import cross_validate
    from sklearn.pipeline import Pipeline

    from milbench.classifiers.milr import MILR
    from milbench.preprocessing import BagScaler

    B, y = two_view_bags(n_bags=40, seed=6, shift=3.0)
    pipe = Pipeline([("scale", BagScaler()), ("select", CVFS(m=4, views=[20, 20])),
                     ("clf", MILR(C=10.0))])
    res = cross_validate(pipe, B.as_list(), y, cv=4, scoring="roc_auc")
    assert res["test_score"].mean() > 0.8


# ---------------------------------------------------------------------------------------------
# baselines
# ---------------------------------------------------------------------------------------------
def brute_ig(v, y):
    def H(lbl):
        if len(lbl) == 0:
            return 0.0
        p = np.mean(lbl)
        return 0.0 if p in (0, 1) else -(p * np.log2(p) + (1 - p) * np.log2(1 - p))
    best = 0.0
    for t in np.unique(v)[:-1]:
        left, right = y[v <= t], y[v > t]
        best = max(best, H(y) - (len(left) * H(left) + len(right) * H(right)) / len(y))
    return best


def test_best_split_information_gain_matches_brute_force():
    rng = np.random.default_rng(0)
    V = np.c_[rng.integers(0, 5, 40), rng.random(40), np.ones(40)]
    y = (rng.random(40) < 0.4).astype(int)
    V[:, 1] += y * 0.3
    ig = best_split_information_gain(V, y)
    np.testing.assert_allclose(ig, [brute_ig(V[:, j], y) for j in range(3)], atol=1e-12)
    assert ig[2] == 0.0


def test_pairwise_bag_reliability_matches_brute_force():
    B, y = two_view_bags(n_bags=10, d1=3, d2=3, k=2, seed=7)
    X = minmax_scale(B.instances.astype(float))
    bags = [X[B.offsets[i]:B.offsets[i + 1]] for i in range(len(B))]

    def directed(P, N, s):
        return max(min(abs(p - q) for q in N[:, s]) for p in P[:, s])

    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    want = []
    for s in range(X.shape[1]):
        cross = np.mean([directed(bags[p], bags[n], s) for p in pos for n in neg])
        within = np.mean([max(directed(bags[a], bags[b], s), directed(bags[b], bags[a], s))
                          for a in neg for b in neg if a != b])
        want.append(cross - within)
    got = pairwise_bag_reliability(B.instances, B.offsets, y, buffer_elems=200)
    np.testing.assert_allclose(got, want, atol=1e-6)


@pytest.mark.parametrize("Sel", [BagInfoGain, InstanceInfoGain, PairwiseBagReliability])
def test_baseline_strategies(Sel):
    B, y = two_view_bags(n_bags=40, k=6, seed=8, shift=2.0)
    s1 = Sel(m=6, strategy="I").fit(B, y)
    counts = np.bincount(s1.support_ >= 20, minlength=2)
    assert counts.tolist() == [3, 3]                       # top-m/v per view
    s2 = Sel(m=6, strategy="II").fit(B, y)
    assert (s2.support_ >= 20).sum() >= 5                  # global ranking: the signal view
    s3 = Sel(m=6, strategy="III").fit(B, y)
    np.testing.assert_array_equal(np.sort(s3.support_), np.sort(s1.support_))
    assert list(s3.transform(B).views) == ["v1", "v2"]
    assert clone(s1).get_params() == s1.get_params()
    with pytest.raises(ValueError, match="strategy"):
        Sel(strategy="IV").fit(B, y)


def test_split_m_and_resolve_views():
    assert split_m(7, [10, 10, 10]).tolist() == [3, 2, 2]
    assert split_m(7, [1, 10, 10]).tolist() == [1, 3, 3]
    names, ranges = resolve_views(np.zeros(1), {"a": (0, 2), "b": (2, 5)}, 5)
    assert names == ["a", "b"] and ranges == [(0, 2), (2, 5)]


def test_view_ensemble_reduces_to_base_and_averages_probabilities():
    from milbench.classifiers.milr import MILR

    B, y = two_view_bags(n_bags=30, seed=9, shift=2.5)
    one = ViewEnsemble(base="milr", base_params={"C": 2.0}, views=[40]).fit(B.as_list(), y)
    ref = MILR(C=2.0).fit(B.as_list(), y)
    np.testing.assert_allclose(one.decision_function(B.as_list()),
                               ref.decision_function(B.as_list()), rtol=1e-6, atol=1e-8)
    two = ViewEnsemble(base="milr", base_params={"C": 2.0}).fit(B, y)
    p = np.mean([MILR(C=2.0).fit(B.view(v), y).predict_proba(B.view(v))[:, 1]
                 for v in ("v1", "v2")], axis=0)
    np.testing.assert_allclose(two.decision_function(B), np.log(p / (1 - p)), rtol=1e-6)
    assert set(two.predict(B)) <= {0, 1}
    # strategy III: selector output views drive the ensemble
    sel = BagInfoGain(m=6, strategy="III").fit(B, y)
    ens = ViewEnsemble(views=[20, 20]).fit(sel.transform(B), y)   # Bags views win over param
    assert len(ens.estimators_) == 2 and ens.view_ranges_ == [(0, 3), (3, 6)]


# ---------------------------------------------------------------------------------------------
# real data (slow): a short Corel run through the whole chain
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_real_corel_short_run(tmp_path, shared_data):
    """50 + 50 real Corel-5k images -> 3-view bags -> 3-fold CV of MILR on all features and of
    CVFS + MILR.
    Checks the chain learns something on real photos (AUROC well above chance); the paper's
    claim that CVFS beats the baselines is compared in benchmarks/methods/bench_cvfs.py, not
    asserted."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    from milbench.chains import images as im
    from milbench.classifiers.milr import MILR
    from milbench.data.sources import safe_extract
    from milbench.preprocessing import BagScaler

    archive = shared_data / "corel5k" / "corel5k.tar.gz"
    root = safe_extract(archive, tmp_path / "corel5k")
    sel, _ = im.select_images(im.read_image_table(root), n_pos=50, n_neg=50, seed=0)
    paths = sel["path"].tolist()
    segs = dict(zip(sel["image_id"], im.segment_images(paths, n_regions=5)))
    books = im.fit_codebooks(paths, n_words=64, pixels_per_image=300, random_state=0)
    bags = im.build_bags(sel, segs, books)
    y = bags.labels
    from dataclasses import replace
    for make in (lambda: CVFS(m=96), lambda: CVFS(m=1.0)):
        aucs = []
        for tr, te in StratifiedKFold(3, shuffle=True, random_state=0).split(np.zeros(len(y)), y):
            a, b = bags.subset(tr), bags.subset(te)
            sc = BagScaler().fit(a, a.labels)
            a = replace(a, instances=sc.transform(a).instances)
            b = replace(b, instances=sc.transform(b).instances)
            s = make().fit(a, a.labels)
            clf = MILR().fit(s.transform(a), a.labels)
            aucs.append(roc_auc_score(b.labels, clf.decision_function(s.transform(b))))
        assert np.mean(aucs) > 0.65, (make().__class__.__name__, aucs)
