"""Citation-kNN (Wang & Zucker 2000): naive oracle, kNN reduction, ties, poisoned bags, contract."""
import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.neighbors import KNeighborsClassifier

from milbench.classifiers.citation_knn import CitationKNN
from milbench.classifiers.simple import MISimple
from milbench.data.bags import BagError, Bags


def random_bags(n=30, d=3, seed=0):
    rng = np.random.default_rng(seed)
    bags = [rng.normal(size=(rng.integers(1, 6), d)) + 0.8 * (i % 2) for i in range(n)]
    return bags, np.arange(n) % 2


def poisoned(n_bags=60, size=12, d=5, seed=0):
    """Positive bags = negative-like bags (noisy sphere, radius 3) + one witness near the origin."""
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n_bags):
        Z = rng.normal(size=(size, d))
        B = 3.0 * Z / np.linalg.norm(Z, axis=1, keepdims=True) + 0.1 * rng.normal(size=(size, d))
        if i % 2:
            B[rng.integers(size)] = 0.2 * rng.normal(size=d)
        bags.append(B)
        y.append(i % 2)
    return bags, np.array(y)


def naive_votes(train, y, query, R, C):
    """Direct transcription of Wang & Zucker with per-pair loops (oracle)."""
    h = lambda A, B: cdist(A, B).min()
    out = []
    for b in query:
        d = np.array([h(b, t) for t in train])
        refs = np.argsort(d, kind="stable")[:R]
        citers = []
        for i, t in enumerate(train):
            others = [h(t, u) for j, u in enumerate(train) if j != i]
            rank = sum(o < d[i] for o in others)      # bags strictly closer to t than b
            if rank < C:
                citers.append(i)
        votes = list(y[refs]) + list(y[citers])
        out.append((sum(votes), len(votes) - sum(votes)))
    return np.array(out)


@pytest.mark.parametrize("R,C", [(2, 4), (1, 0), (0, 3), (3, 1)])
def test_votes_match_naive_oracle(R, C):
    train, y = random_bags(seed=1)
    query, _ = random_bags(n=12, seed=2)
    m = CitationKNN(references=R, citers=C).fit(train, y)
    p, n = m.votes(query)
    np.testing.assert_array_equal(np.c_[p, n], naive_votes(train, y, query, R, C))
    total = p + n
    np.testing.assert_allclose(m.decision_function(query),
                               np.where(total > 0, (p - n) / np.maximum(total, 1), 0.0))
    np.testing.assert_array_equal(m.predict(query), (p > n).astype(int))


def test_singleton_bags_no_citers_is_knn():
    rng = np.random.default_rng(3)
    X, Xt = rng.normal(size=(80, 3)), rng.normal(size=(40, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    m = CitationKNN(references=5, citers=0).fit([x[None] for x in X], y)
    ref = KNeighborsClassifier(n_neighbors=5).fit(X, y)
    np.testing.assert_array_equal(m.predict([x[None] for x in Xt]), ref.predict(Xt))


def test_ties_are_negative():
    train = [np.array([[0.0]]), np.array([[10.0]]), np.array([[10.5]])]
    y = np.array([1, 0, 0])
    q = [np.array([[4.0]])]
    # R=1, C=1: reference = bag 0 (+); bag 0's nearest other bag is at 10 > 4, so it cites q;
    # bags 1 and 2 are 0.5 apart, closer than q, so they do not.
    p, n = CitationKNN(references=1, citers=1).fit(train, y).votes(q)
    assert (p[0], n[0]) == (1 + 1, 0)
    # R=2, C=0: references bag 0 (+, d=4) and bag 1 (-, d=6): a 1 : 1 tie -> negative, score 0
    m = CitationKNN(references=2, citers=0).fit(train, y)
    p, n = m.votes(q)
    assert (p[0], n[0]) == (1, 1)
    assert m.decision_function(q)[0] == 0.0
    assert m.predict(q)[0] == 0


def test_poisoned_witness_bags():
    bags, y = poisoned(seed=0)
    bt, yt = poisoned(seed=1)
    acc = (CitationKNN().fit(bags, y).predict(bt) == yt).mean()
    acc_mean = (MISimple(estimator="svm", statistic="mean").fit(bags, y).predict(bt) == yt).mean()
    # Citation-kNN misses the positive bags whose witness is an outlier of the witness cluster:
    # no positive training bag cites them, the ~C·n_neg/n negative citers tie the 2 positive
    # references, and ties go negative.  It stays far above mean pooling (≈ chance).
    assert acc >= 0.8, acc
    assert acc_mean <= 0.65, acc_mean


@pytest.mark.parametrize("metric", ["max", "avg"])
def test_other_hausdorff_metrics_run(metric):
    bags, y = random_bags()
    s = CitationKNN(metric=metric).fit(bags, y).decision_function(bags)
    assert s.shape == (len(bags),) and np.all(np.abs(s) <= 1)


@pytest.mark.parametrize("bad,msg", [({"references": -1}, "references"),
                                     ({"citers": 1.5}, "citers"),
                                     ({"references": 0, "citers": 0}, "at least 1"),
                                     ({"metric": "euclid"}, "metric")])
def test_clear_errors(bad, msg):
    bags, y = random_bags()
    with pytest.raises(ValueError, match=msg):
        CitationKNN(**bad).fit(bags, y)
    with pytest.raises(BagError):
        CitationKNN().fit([np.zeros((0, 3))] + bags[1:], y)


def test_sklearn_contract_and_determinism():
    bags, y = poisoned(n_bags=40, seed=4)
    est = CitationKNN()
    q, _ = poisoned(n_bags=15, seed=9)
    a = clone(est).fit(bags, 2 * y - 1)
    b = clone(est).fit(bags, y)
    np.testing.assert_array_equal(a.decision_function(q), b.decision_function(q))
    c = clone(est).fit(Bags.from_list(bags, y), y)      # float32 storage, same votes
    np.testing.assert_array_equal(c.decision_function(q), b.decision_function(q))
    assert set(a.predict(bags)) <= {-1, 1}
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    res = cross_validate(est, bags, y, cv=cv, scoring=("accuracy", "roc_auc"))
    assert res["test_accuracy"].mean() > 0.7
    gs = GridSearchCV(est, {"references": [1, 2], "citers": [2, 4]}, cv=cv).fit(bags, y)
    assert gs.best_params_["citers"] in (2, 4)


@pytest.fixture
def fresh_cache(monkeypatch):
    """An empty table cache in place of the process-wide one, with reuse on."""
    import milbench.classifiers.distances as distances
    from milbench.utils.cache import ArrayCache, reuse
    cache = ArrayCache()
    monkeypatch.setattr(distances, "CACHE", cache)
    with reuse():
        yield cache


@pytest.mark.parametrize("metric", ["min", "avg"])
def test_grid_shares_distance_tables_and_matches_uncached(fresh_cache, metric):
    from milbench.utils.cache import disabled
    bags, y = poisoned(n_bags=40, seed=5)
    q, _ = poisoned(n_bags=15, seed=6)
    grid = {"references": [1, 2, 3], "citers": [0, 2, 4]}
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    cached = GridSearchCV(CitationKNN(metric=metric), grid, cv=cv).fit(bags, y)
    # per fold: train × train and validation × train, shared by the 9 candidates; + the refit
    assert fresh_cache.misses == 2 * 4 + 1 and fresh_cache.hits == 2 * 4 * 8
    with disabled(fresh_cache):
        plain = GridSearchCV(CitationKNN(metric=metric), grid, cv=cv).fit(bags, y)
    assert fresh_cache.misses == 9
    np.testing.assert_array_equal(cached.cv_results_["mean_test_score"],
                                  plain.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(cached.decision_function(q), plain.decision_function(q))
    # refitting on the cached table (its diagonal is set on a copy) gives the same model
    again = CitationKNN(metric=metric, **cached.best_params_).fit(bags, y)
    np.testing.assert_array_equal(again.citer_radius_, cached.best_estimator_.citer_radius_)
