"""The linear SVM's interior point solver (Ferris & Munson 2003) against libsvm: the same
problem (bias unregularised), its optimum to 1e-10, and the KKT conditions it stops at."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from milbench.classifiers._linear_svm import LinearSVMIPM, primal_objective


def data(n, d, seed, noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + noise * rng.normal(size=n) > 0.3).astype(int)
    return X, y


@pytest.mark.parametrize("n,d,C", [(200, 5, 1.0), (500, 8, 32.0), (300, 20, 0.01),
                                   (400, 3, 100.0)])
def test_it_reaches_libsvm_at_a_tight_tolerance(n, d, C):
    X, y = data(n, d, seed=n)
    m = LinearSVMIPM(C=C).fit(X, y)
    ref = SVC(kernel="linear", C=C, tol=1e-10).fit(X, y)
    assert m.converged_
    P, P_ref = (primal_objective(X, y, C, m.coef_, m.intercept_[0]),
                primal_objective(X, y, C, ref.coef_[0], ref.intercept_[0]))
    assert P <= P_ref * (1 + 1e-9)
    assert P >= P_ref * (1 - 1e-6)                 # libsvm at 1e-10 is the optimum to ~1e-7
    scale = 1 + np.abs(ref.coef_).max()
    np.testing.assert_allclose(m.coef_, ref.coef_[0], atol=1e-4 * scale)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X),
                               atol=1e-4 * scale)


def test_kkt_conditions_hold_at_the_stop():
    X, y = data(400, 6, seed=2)
    C = 5.0
    m = LinearSVMIPM(C=C).fit(X, y)
    s = np.where(y == 1, 1.0, -1.0)
    a = m.alpha_
    assert (a > 0).all() and (a < C).all()
    np.testing.assert_allclose(m.coef_, X.T @ (s * a), atol=1e-7)      # w = Σ α_i y_i x_i
    assert abs(s @ a) < 1e-7 * C * len(y)                              # Σ α_i y_i = 0
    margin = s * m.decision_function(X)
    # complementary slackness: α_i ≈ C where the margin is violated, ≈ 0 beyond it
    assert np.all(a[margin < 1 - 1e-4] > C * (1 - 1e-4))
    assert np.all(a[margin > 1 + 1e-4] < C * 1e-4)
    # the dual objective meets the primal one: no gap
    dual = a.sum() - 0.5 * m.coef_ @ m.coef_
    P = primal_objective(X, y, C, m.coef_, m.intercept_[0])
    assert abs(P - dual) <= 1e-7 * P


def test_large_C_beats_libsvm_default_tolerance():
    """Where SMO needs many pair updates (large C, overlapping classes) the interior point
    method's objective is not above libsvm's at its default tolerance."""
    X, y = data(500, 3, seed=7, noise=1.0)
    C = 1e3                     # libsvm: 1.8 million pair updates; the interior point: 14
    m = LinearSVMIPM(C=C).fit(X, y)
    ref = SVC(kernel="linear", C=C).fit(X, y)
    assert m.n_iter_[0] < 100 < ref.n_iter_[0]
    assert primal_objective(X, y, C, m.coef_, m.intercept_[0]) <= \
        primal_objective(X, y, C, ref.coef_[0], ref.intercept_[0])


def test_sparse_input_gives_the_dense_model():
    X, y = data(300, 10, seed=4)
    X[np.abs(X) < 1.0] = 0.0
    dense = LinearSVMIPM(C=2.0).fit(X, y)
    sparse = LinearSVMIPM(C=2.0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-10)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), atol=1e-9)


def test_a_fit_stopped_at_its_cap_warns():
    X, y = data(200, 5, seed=3)
    with pytest.warns(ConvergenceWarning, match=r"LinearSVMIPM stopped at max_iter=3 "):
        m = LinearSVMIPM(C=1.0, max_iter=3).fit(X, y)
    assert not m.converged_ and m.n_iter_[0] == 3


def test_one_class_is_an_error():
    X, _ = data(20, 3, seed=0)
    with pytest.raises(ValueError, match="both classes"):
        LinearSVMIPM().fit(X, np.ones(20, int))
