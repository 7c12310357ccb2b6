import numpy as np
import pytest
from scipy.optimize import approx_fprime
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_validate

from milbench.classifiers.milr import (
    COMBINE,
    FIT_CACHE,
    MILR,
    bag_probability,
    milr_loss_grad,
)
from milbench.classifiers.simple import MISimple, bag_statistics
from milbench.data.bags import BagError

from conftest import toy_bags


@pytest.mark.parametrize("combine", COMBINE)
def test_gradient_matches_finite_differences(combine):
    rng = np.random.default_rng(1)
    sizes = rng.integers(1, 7, 25)
    off = np.concatenate([[0], np.cumsum(sizes)])
    X = rng.normal(size=(off[-1], 6))
    y = (rng.random(25) < 0.5).astype(float)
    th = rng.normal(size=7) * 0.4
    f, g = milr_loss_grad(th, X, off, y, 1.7, combine, 3.5)
    num = approx_fprime(th, lambda t: milr_loss_grad(t, X, off, y, 1.7, combine, 3.5)[0], 1e-7)
    np.testing.assert_allclose(g, num, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("combine", COMBINE)
def test_singleton_bags_equal_sklearn_logistic_regression(combine):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 5))
    y = (X[:, 0] - X[:, 2] + rng.normal(size=80) > 0).astype(int)
    m = MILR(C=0.5, combine=combine, tol=1e-10).fit([x[None] for x in X], y)
    lr = LogisticRegression(C=0.5, tol=1e-10, max_iter=5000).fit(X, y)
    np.testing.assert_allclose(m.coef_, lr.coef_[0], atol=1e-5)
    np.testing.assert_allclose(m.intercept_, lr.intercept_[0], atol=1e-5)
    np.testing.assert_allclose(m.predict_proba([x[None] for x in X])[:, 1],
                               lr.predict_proba(X)[:, 1], atol=1e-5)


def test_combining_functions_closed_forms():
    z = np.array([0.0, 2.0, -1.0])
    off = np.array([0, 3])
    p = 1 / (1 + np.exp(-z))
    w = np.exp(3.5 * p) / np.exp(3.5 * p).sum()
    assert bag_probability(z, off, "softmax", 3.5)[0] == pytest.approx((p * w).sum())
    assert bag_probability(z, off, "noisy-or")[0] == pytest.approx(1 - np.prod(1 - p))
    assert bag_probability(z, off, "mean")[0] == pytest.approx(p.mean())
    g1, g0 = np.prod(p) ** (1 / 3), np.prod(1 - p) ** (1 / 3)
    assert bag_probability(z, off, "geometric")[0] == pytest.approx(g1 / (g1 + g0))


def test_witness_problem_and_sklearn_tools():
    bags, y = toy_bags(60, d=3, witness_shift=4.0)
    m = MILR(C=10.0, combine="noisy-or")
    assert m.fit(bags, y) is m
    assert m.score(bags, y) > 0.85
    assert clone(m).get_params() == m.get_params()
    gs = GridSearchCV(MILR(), {"C": [0.1, 1.0]}, cv=3).fit(bags, y)
    assert gs.best_params_["C"] in (0.1, 1.0)
    cv = cross_validate(MILR(), bags, y, cv=3, scoring="roc_auc")
    assert len(cv["test_score"]) == 3
    ypm = np.where(y == 1, 1, -1)
    assert set(MILR().fit(bags, ypm).predict(bags)) <= {-1, 1}
    np.testing.assert_array_equal(MILR().fit(bags, y).decision_function(bags),
                                  MILR().fit(bags, y).decision_function(bags))


def test_errors():
    bags, y = toy_bags(10)
    with pytest.raises(BagError, match="single class"):
        MILR().fit(bags, np.ones(10))
    with pytest.raises(BagError, match="no instances"):
        MILR().fit(bags[:-1] + [np.zeros((0, 4))], y)
    with pytest.raises(ValueError, match="combine"):
        MILR(combine="median").fit(bags, y)
    with pytest.raises(ValueError, match="features"):
        MILR().fit(bags, y).predict([np.ones((2, 9))])


def test_mi_simple_statistics_and_fit():
    bags = [np.array([[1.0, 5.0], [3.0, 2.0]]), np.array([[0.0, 1.0]])]
    np.testing.assert_array_equal(bag_statistics(bags, "minmax"), [[1, 2, 3, 5], [0, 1, 0, 1]])
    np.testing.assert_array_equal(bag_statistics(bags, "mean"), [[2, 3.5], [0, 1]])
    b, y = toy_bags(60, d=3, witness_shift=4.0)
    m = MISimple(estimator="tree", random_state=0).fit(b, y)
    assert m.score(b, y) > 0.9
    with pytest.raises(KeyError, match="unknown estimator"):
        MISimple(estimator="nope").fit(b, y)


def test_refit_on_identical_data_reuses_the_solve(reuse_on):
    """A second fit on the same bags with the same parameters is a cache hit that equals the
    fresh fit (coefficients, diagnostics, ConvergenceWarning at the cap); another C or other data
    is solved afresh; a fitted model's coefficients are its own (writing them leaves the cache)."""
    X, y = toy_bags(n_bags=30, seed=2)
    FIT_CACHE.clear()
    a = MILR(C=2.0).fit(X, y)
    b = MILR(C=2.0).fit(X, y)
    with FIT_CACHE.disabled():
        fresh = MILR(C=2.0).fit(X, y)
    assert (FIT_CACHE.hits, FIT_CACHE.misses) == (1, 1)
    for m in (b, fresh):
        np.testing.assert_array_equal(m.coef_, a.coef_)
        assert (m.intercept_, m.n_iter_, m.diagnostics_) == (a.intercept_, a.n_iter_,
                                                             a.diagnostics_)
    b.coef_[0] += 1.0
    np.testing.assert_array_equal(MILR(C=2.0).fit(X, y).coef_, a.coef_)
    MILR(C=3.0).fit(X, y)
    MILR(C=2.0).fit(X[:-1], y[:-1])
    assert (FIT_CACHE.hits, FIT_CACHE.misses) == (2, 3)
    with pytest.warns(ConvergenceWarning):
        MILR(C=2.0, max_iter=1).fit(X, y)
    with pytest.warns(ConvergenceWarning):
        MILR(C=2.0, max_iter=1).fit(X, y)
    assert FIT_CACHE.hits == 3
