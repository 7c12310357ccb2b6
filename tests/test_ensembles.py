"""Bag-level Bagging / AdaBoost around registry classifiers ([mi-bagging], [mi-adaboost])."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import AdaBoostClassifier
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.tree import DecisionTreeClassifier

from milbench.classifiers.ensembles import MIAdaBoost, MIBagging, make_member
from milbench.classifiers.wrapper import MIWrapper
from milbench.data.bags import BagError

from conftest import witness_bags


def test_adaboost_equals_sklearn_samme_on_singleton_bags():
    """With singleton bags, MIWrapper(stump) is a stump, so bag-level AdaBoost must reproduce
    scikit-learn's two-class SAMME AdaBoost exactly."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0.5)).astype(int)
    flip = rng.random(80) < 0.1
    y[flip] = 1 - y[flip]
    bags = [x[None, :] for x in X]
    ours = MIAdaBoost(base={"name": "mi-wrapper", "estimator": "stump"}, n_estimators=8,
                      random_state=0).fit(bags, y)
    ref = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=8,
                             random_state=0).fit(X, y)
    assert ours.diagnostics_["n_iter"] == len(ref.estimators_) == 8
    np.testing.assert_allclose(ours.estimator_weights_, ref.estimator_weights_[:8], rtol=1e-8)
    # scikit-learn's SAMME codes the losing class as −α, so its binary score is twice ours
    np.testing.assert_allclose(2 * ours.decision_function(bags), ref.decision_function(X),
                               rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(ours.predict(bags), ref.predict(X))


def test_adaboost_around_mi_simple_resamples_bags():
    from milbench.classifiers.simple import MISimple
    assert "sample_weight" not in MISimple.fit.__code__.co_varnames   # hence resampling
    bags, y = witness_bags(n_bags=60)
    spec = {"name": "mi-simple", "estimator": "tree", "estimator_params": {"max_depth": 2}}
    m = MIAdaBoost(base=spec, n_estimators=5, random_state=0)
    r = cross_validate(m, bags, y, cv=StratifiedKFold(3), scoring="roc_auc")
    assert r["test_score"].mean() >= 0.7
    fitted = clone(m).fit(bags, y)
    assert fitted.diagnostics_["resampled"] == 1
    again = clone(m).fit(bags, y)
    np.testing.assert_array_equal(fitted.decision_function(bags), again.decision_function(bags))


def test_bagging_members_and_scores():
    bags, y = witness_bags()
    m = MIBagging(base={"name": "mi-wrapper", "estimator": "tree",
                        "estimator_params": {"max_depth": 3}}, n_estimators=5,
                  random_state=1).fit(bags, y)
    assert len(m.estimators_) == 5
    for idx in m.samples_:                           # stratified bootstrap: class sizes kept
        assert np.sum(y[idx] == 1) == np.sum(y == 1) and np.sum(y[idx] == 0) == np.sum(y == 0)
    P = np.mean([e.predict_proba(bags)[:, 1] for e in m.estimators_], axis=0)
    np.testing.assert_allclose(m.predict_proba(bags)[:, 1], P)
    np.testing.assert_allclose(m.decision_function(bags), P - 0.5)
    # members are seeded differently, the ensemble as a whole reproducibly
    assert len({e.random_state for e in m.estimators_}) == 5
    m2 = clone(m).fit(bags, y)
    np.testing.assert_array_equal(m.decision_function(bags), m2.decision_function(bags))


def test_bagging_of_members_without_predict_proba_votes():
    bags, y = witness_bags()
    m = MIBagging(base={"name": "emdd", "max_em_iter": 2, "max_starts": 5}, n_estimators=3,
                  random_state=0).fit(bags, y)
    P = np.mean([e.predict_proba(bags)[:, 1] for e in m.estimators_], axis=0)
    np.testing.assert_allclose(m.predict_proba(bags)[:, 1], P)    # threshold 0.5: probabilities
    m = MIBagging(base={"name": "emdd", "max_em_iter": 2, "max_starts": 5, "threshold": "train"},
                  n_estimators=3, random_state=0).fit(bags, y)
    assert not hasattr(m.estimators_[0], "predict_proba")          # learned threshold: votes
    votes = np.mean([e.predict(bags) == 1 for e in m.estimators_], axis=0)
    np.testing.assert_allclose(m.predict_proba(bags)[:, 1], votes)
    ball = MIBagging(base={"name": "mi-optimal-ball"}, n_estimators=3, random_state=0).fit(bags, y)
    votes = np.mean([e.predict(bags) == 1 for e in ball.estimators_], axis=0)
    np.testing.assert_allclose(ball.predict_proba(bags)[:, 1], votes)


def test_grid_search_cross_validate_and_errors():
    bags, y = witness_bags(n_bags=45)
    gs = GridSearchCV(MIBagging(n_estimators=3, random_state=0),
                      {"base": [{"name": "mi-wrapper", "estimator": "tree"},
                                {"name": "mi-wrapper", "estimator": "naive-bayes"}]},
                      cv=StratifiedKFold(3)).fit(bags, y)
    assert gs.best_score_ >= 0.7
    r = cross_validate(MIAdaBoost(n_estimators=3, random_state=0), bags, y,
                       cv=StratifiedKFold(3), scoring=["accuracy", "roc_auc"])
    assert np.isfinite(r["test_roc_auc"]).all()
    with pytest.raises(BagError, match="single class"):
        MIBagging().fit(bags, np.ones(len(bags), int))
    with pytest.raises(BagError, match="no instances"):
        MIAdaBoost().fit(bags[:-1] + [np.zeros((0, 3))], y)
    with pytest.raises(ValueError, match="unknown parameter"):
        MIBagging(base={"name": "mi-wrapper", "depth": 3}).fit(bags, y)
    with pytest.raises(KeyError):
        make_member({"name": "no-such-classifier"}, 0)
    est = make_member(MIWrapper("tree"), 5)          # an estimator instance is cloned + seeded
    assert est.random_state == 5


def test_adaboost_with_a_perfect_first_member_is_that_member():
    bags, y = witness_bags()
    base = {"name": "mi-wrapper", "estimator": "tree"}         # unpruned: perfect on training
    m = MIAdaBoost(base=base, n_estimators=5, random_state=0).fit(bags, y)
    assert m.diagnostics_["n_iter"] == 1 and m.diagnostics_["stop"] == 1
    np.testing.assert_allclose(m.decision_function(bags),
                               m.estimators_[0].decision_function(bags))

