"""MIWrapper and MIBoost: reductions to scikit-learn on singleton bags, weighting and aggregation
formulas, and MIBoost's bag-weight step checked by its optimality condition."""
import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import expit
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.tree import DecisionTreeClassifier

from milbench.classifiers.miboost import MIBoost, solve_bag_weight
from milbench.classifiers.wrapper import MIWrapper, instance_weights
from milbench.data.bags import BagError

from conftest import witness_bags


def singletons(seed=0, n=60, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    return X, y, [x[None, :] for x in X]


# ----------------------------------------------------------------------------- MIWrapper
@pytest.mark.parametrize("estimator,base", [
    ("logistic", LogisticRegression()),
    ("tree", DecisionTreeClassifier(random_state=0)),
])
def test_wrapper_equals_base_classifier_on_singleton_bags(estimator, base):
    X, y, bags = singletons()
    base.fit(X, y)
    for agg in ("arithmetic", "geometric", "max"):
        m = MIWrapper(estimator, aggregation=agg, random_state=0).fit(bags, y)
        np.testing.assert_array_equal(m.predict(bags), base.predict(X))
        if agg != "geometric":          # geometric clips p to [0.001, 0.999] like Weka
            np.testing.assert_allclose(m.predict_proba(bags), base.predict_proba(X), atol=1e-12)
    m = MIWrapper(estimator, weighting="none", random_state=0).fit(bags, y)
    np.testing.assert_allclose(m.predict_proba(bags), base.predict_proba(X), atol=1e-12)


def test_inverse_weighting_equals_weighted_base_fit():
    bags, y = witness_bags()
    sizes = np.array([len(b) for b in bags])
    w = instance_weights(sizes, "inverse")
    np.testing.assert_allclose(np.add.reduceat(w, np.r_[0, np.cumsum(sizes)[:-1]]),
                               sizes.sum() / len(sizes))          # every bag weighs N / B
    X = np.vstack(bags)
    ref = LogisticRegression().fit(X, np.repeat(y, sizes), sample_weight=w)
    m = MIWrapper("logistic").fit(bags, y)
    np.testing.assert_allclose(m.estimator_.coef_, ref.coef_, rtol=1e-6)
    # bag weights multiply the instance weights
    bw = np.linspace(0.5, 2.0, len(bags))
    ref2 = LogisticRegression().fit(X, np.repeat(y, sizes),
                                    sample_weight=w * np.repeat(bw * len(bw) / bw.sum(), sizes))
    m2 = MIWrapper("logistic").fit(bags, y, sample_weight=bw)
    np.testing.assert_allclose(m2.estimator_.coef_, ref2.coef_, rtol=1e-6)


def test_aggregation_formulas():
    bags, y = witness_bags()
    off = np.r_[0, np.cumsum([len(b) for b in bags])]
    for agg in ("arithmetic", "geometric", "max"):
        m = MIWrapper("logistic", aggregation=agg).fit(bags, y)
        p = m.estimator_.predict_proba(np.vstack(bags))[:, 1]
        if agg == "arithmetic":
            P = np.add.reduceat(p, off[:-1]) / np.diff(off)
        elif agg == "max":
            P = np.maximum.reduceat(p, off[:-1])
        else:
            pc = np.clip(p, 1e-3, 1 - 1e-3)
            g1 = np.exp(np.add.reduceat(np.log(pc), off[:-1]) / np.diff(off))
            g0 = np.exp(np.add.reduceat(np.log(1 - pc), off[:-1]) / np.diff(off))
            P = g1 / (g1 + g0)
        np.testing.assert_allclose(m.predict_proba(bags)[:, 1], P, rtol=1e-10)
        assert ((m.decision_function(bags) > 0) == (P > 0.5)).all()
        inst = m.decision_instances(bags)
        red = np.maximum if agg == "max" else np.add
        agg_inst = red.reduceat(inst, off[:-1]) / (1 if agg == "max" else np.diff(off))
        np.testing.assert_allclose(agg_inst, m.decision_function(bags), rtol=1e-10, atol=1e-12)


def test_wrapper_without_predict_proba_uses_sigmoid_of_decision():
    bags, y = witness_bags()
    m = MIWrapper("linear-svm", random_state=0).fit(bags, y)
    z = m.estimator_.decision_function(np.vstack(bags))
    np.testing.assert_allclose(m.decision_instances(np.vstack(bags)), expit(z) - 0.5)


def test_wrapper_errors_determinism_and_sklearn():
    bags, y = witness_bags()
    with pytest.raises(BagError, match="single class"):
        MIWrapper().fit(bags, np.ones(len(bags), int))
    with pytest.raises(BagError, match="no instances"):
        MIWrapper().fit(bags[:-1] + [np.zeros((0, 3))], y)
    with pytest.raises(ValueError, match="aggregation"):
        MIWrapper(aggregation="median").fit(bags, y)
    with pytest.raises(ValueError, match="weighting"):
        MIWrapper(weighting="odd").fit(bags, y)
    a = MIWrapper("random-forest", random_state=7).fit(bags, y).decision_function(bags)
    b = MIWrapper("random-forest", random_state=7).fit(bags, y).decision_function(bags)
    np.testing.assert_array_equal(a, b)
    gs = GridSearchCV(MIWrapper("logistic"), {"aggregation": ["arithmetic", "geometric", "max"]},
                      cv=StratifiedKFold(3)).fit(bags, y)
    assert gs.best_score_ >= 0.8
    assert clone(MIWrapper("tree", {"max_depth": 2})).estimator_params == {"max_depth": 2}


# ----------------------------------------------------------------------------- MIBoost
def test_bag_weight_step_is_the_exact_minimiser():
    rng = np.random.default_rng(0)
    for _ in range(20):
        W, e = rng.uniform(0.1, 2.0, 12), rng.uniform(0, 1, 12)
        f = lambda c: np.sum(W * np.exp((2 * e - 1) * c))  # noqa: E731
        c = solve_bag_weight(W, e)
        if np.dot(W, 2 * e - 1) >= 0:
            assert c == 0.0
            continue
        ref = minimize_scalar(f, bounds=(0, 50), method="bounded", options={"xatol": 1e-10}).x
        assert c == pytest.approx(ref, abs=1e-6)
        # first-order condition: the re-weighted bags make the learner's error exactly "neutral"
        assert np.sum(W * (2 * e - 1) * np.exp((2 * e - 1) * c)) == pytest.approx(0, abs=1e-9)
    assert solve_bag_weight([1, 1], [0.2, 0.4]) == np.inf


def test_miboost_first_round_is_the_inverse_weighted_stump():
    bags, y = witness_bags()
    m = MIBoost(n_estimators=1, random_state=0).fit(bags, y)
    w = MIWrapper("stump", weighting="inverse", random_state=0).fit(bags, y)
    X = np.vstack(bags)
    np.testing.assert_array_equal(m.estimators_[0].predict(X), w.estimator_.predict(X))
    off = np.r_[0, np.cumsum([len(b) for b in bags])]
    h = 2.0 * m.estimators_[0].predict(X) - 1.0
    F = m.estimator_weights_[0] * np.add.reduceat(h, off[:-1]) / np.diff(off)
    np.testing.assert_allclose(m.decision_function(bags), F)


def test_miboost_learns_and_is_deterministic():
    bags, y = witness_bags(n_bags=60)
    r = cross_validate(MIBoost(n_estimators=10, random_state=0), bags, y,
                       cv=StratifiedKFold(3), scoring=["accuracy", "roc_auc"])
    assert r["test_roc_auc"].mean() >= 0.8
    a = MIBoost(estimator="tree", estimator_params={"max_depth": 2}, random_state=4).fit(bags, y)
    b = MIBoost(estimator="tree", estimator_params={"max_depth": 2}, random_state=4).fit(bags, y)
    np.testing.assert_array_equal(a.decision_function(bags), b.decision_function(bags))
    assert a.diagnostics_["n_iter"] >= 1
    np.testing.assert_allclose(a.predict_proba(bags)[:, 1], expit(a.decision_function(bags)))
    off = np.r_[0, np.cumsum([len(x) for x in bags])]
    inst = a.decision_instances(bags)
    np.testing.assert_allclose(np.add.reduceat(inst, off[:-1]) / np.diff(off),
                               a.decision_function(bags))


def test_miboost_errors():
    bags, y = witness_bags()
    with pytest.raises(ValueError, match="sample_weight"):
        MIBoost(estimator="knn").fit(bags, y)
    with pytest.raises(BagError, match="single class"):
        MIBoost().fit(bags, np.zeros(len(bags), int))
