"""LC-MF (Zhu et al. 2007): analytic gradient, SVD limit, fold-in, transduction, contract."""
import contextlib

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.optimize import check_grad
from sklearn.base import clone

from milbench.classifiers.lcmf import LCMF, factorise, lcmf_objective
from milbench.data.bags import Bags


def test_objective_and_gradient_against_dense_formula_and_finite_differences():
    rng = np.random.default_rng(0)
    n, m, k = 9, 6, 3
    A = sp.random(n, n, density=0.3, random_state=1, format="csr")
    Cm = rng.random((n, m))
    th = rng.normal(size=n * k + k * k + m * k)
    alpha, gamma, beta = 0.7, 0.2, 0.3
    f = lambda t: lcmf_objective(t, A, Cm, k, alpha, gamma, beta)[0]  # noqa: E731
    g = lambda t: lcmf_objective(t, A, Cm, k, alpha, gamma, beta)[1]  # noqa: E731
    Z = th[:n * k].reshape(n, k)
    U = th[n * k:n * k + k * k].reshape(k, k)
    V = th[n * k + k * k:].reshape(m, k)
    dense = (np.sum((A.toarray() - Z @ U @ Z.T) ** 2) + alpha * np.sum((Cm - Z @ V.T) ** 2)
             + gamma * np.sum(U * U) + beta * (np.sum(V * V) + np.sum(Z * Z)))
    assert f(th) == pytest.approx(dense, rel=1e-12)
    assert check_grad(f, g, th) / np.linalg.norm(g(th)) < 1e-6


def test_content_only_limit_is_truncated_svd():
    """No links, no regularisation: min ‖C − ZVᵀ‖² = energy of the trailing singular values."""
    rng = np.random.default_rng(2)
    Cm = rng.random((30, 12))
    k = 4
    Z, U, V, res = factorise(sp.csr_matrix((30, 30)), Cm, k=k, alpha=1.0, gamma=0.0, beta=0.0,
                             max_iter=3000, tol=1e-12, random_state=0)
    s = np.linalg.svd(Cm, compute_uv=False)
    assert np.sum((Cm - Z @ V.T) ** 2) == pytest.approx(np.sum(s[k:] ** 2), rel=1e-4)


def graph_bags(n=40, seed=0):
    """Pages whose label is visible mostly through links (positives link to a hub set)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    bags = [rng.random((int(rng.integers(1, 4)), 6)) + 0.3 * y[i] * np.eye(6)[0] for i in range(n)]
    ids = [f"u{i}" for i in range(n)]
    src, dst = [], []
    for i in range(n):
        same = [j for j in range(n) if y[j] == y[i] and j != i]
        for j in rng.choice(same, 3, replace=False):
            src.append(ids[i])
            dst.append(ids[j])
    e = pd.DataFrame({"src": src, "dst": dst, "weight": 1.0, "level": "bag"})
    return Bags.from_list(bags, y, bag_ids=ids, edges=e), y


def test_transductive_factors_are_stored_and_links_help():
    B, y = graph_bags()
    tr = np.arange(0, 40, 3)
    te = np.setdiff1d(np.arange(40), tr)
    lab, unl = B.subset(tr), B.subset(te)
    lab.edges = B.edges
    m = LCMF(n_factors=5, random_state=0, max_iter=500).fit(lab, y[tr], unlabeled=unl)
    assert m.diagnostics_["transductive"] == 1 and m.diagnostics_["n_edges"] == len(B.edges)
    Zte = m.transform_factors(unl)
    assert np.allclose(Zte, np.array([m.stored_[b] for b in unl.bag_ids]))
    assert (m.predict(unl) == y[te]).mean() >= 0.8


def test_fold_in_content_only_is_ridge_solution():
    B, y = graph_bags(seed=1)
    tr = np.arange(20)
    lab = B.subset(tr)
    m = LCMF(n_factors=4, alpha=0.8, beta=0.3, random_state=0).fit(lab, y[tr])
    new = [np.random.default_rng(3).random((2, 6))]
    z = m.transform_factors(new)
    c = new[0].mean(0)
    c /= np.linalg.norm(c)
    V = m.V_
    ref = np.linalg.solve(0.8 * V.T @ V + 0.3 * np.eye(4), 0.8 * V.T @ c)
    assert np.allclose(z[0], ref)
    # training bags (known ids) use their stored factors
    assert np.allclose(m.transform_factors(lab), m.Z_train_)


def test_contract_and_determinism():
    B, y = graph_bags(seed=2)
    est = LCMF(n_factors=3, random_state=4)
    assert clone(est).get_params() == est.get_params()
    a = clone(est).fit(B, 2 * y - 1)
    b = clone(est).fit(B, 2 * y - 1)
    assert np.array_equal(a.Z_train_, b.Z_train_)
    assert set(a.predict(B)) <= {-1, 1}
    lst = LCMF(n_factors=3, random_state=0).fit(B.as_list(), y)      # no graph: content only
    assert lst.diagnostics_["n_edges"] == 0 and lst.decision_function(B.as_list()).shape == (40,)


def test_factorisations_are_shared_across_svm_C_and_equal_fresh_ones(reuse_on):
    """The factorisation does not depend on svm_C: a grid over it factorises each inner fold
    once (FACTOR_CACHE), with the same models and scores as factorising for every point."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from milbench.classifiers.lcmf import FACTOR_CACHE

    B, y = graph_bags(seed=3)
    grid = {"svm_C": [0.1, 1.0, 10.0]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    runs = {}
    for reuse in (False, True):
        FACTOR_CACHE.clear()
        with (FACTOR_CACHE.disabled() if not reuse else contextlib.nullcontext()):
            gs = GridSearchCV(LCMF(n_factors=4, random_state=0), grid, cv=cv).fit(B, y)
        runs[reuse] = (gs.cv_results_["mean_test_score"], gs.best_estimator_.decision_function(B),
                       (FACTOR_CACHE.hits, FACTOR_CACHE.misses))
    assert np.array_equal(runs[False][0], runs[True][0])
    assert np.array_equal(runs[False][1], runs[True][1])
    assert runs[True][2] == (2 * 3, 3 + 1)          # 3 inner folds x 3 C; then the refit
    assert runs[False][2] == (0, 0)
    # a seed that is not an integer draws a new start: never shared
    FACTOR_CACHE.clear()
    LCMF(n_factors=4, random_state=None).fit(B, y)
    assert (FACTOR_CACHE.hits, FACTOR_CACHE.misses) == (0, 0)


def test_a_transductive_factorisation_depends_on_the_pages_only(reuse_on):
    """Pages are factorised in bag-id order: fits that label different pages of the same page
    set (an inner fold and the outer refit; two cells with the same seed) factorise once, and
    every page gets the same factors, bit for bit, as from a fresh factorisation."""
    from milbench.classifiers.lcmf import FACTOR_CACHE
    from milbench.experiment.fold import Unlabeled

    B, y = graph_bags(seed=4)
    perm = np.random.default_rng(0).permutation(40)
    splits = [np.arange(0, 40, 3), np.arange(1, 40, 3), perm[:15]]   # the last one shuffled
    fits = {}
    for reuse in (False, True):
        FACTOR_CACHE.clear()
        with (FACTOR_CACHE.disabled() if not reuse else contextlib.nullcontext()):
            fits[reuse] = [LCMF(n_factors=4, random_state=0).fit(
                B.subset(tr), y[tr], unlabeled=Unlabeled(B).complement(B.subset(tr)))
                for tr in splits]
        if reuse:
            assert (FACTOR_CACHE.hits, FACTOR_CACHE.misses) == (2, 1)
    first = fits[False][0].stored_
    assert sorted(first) == sorted(B.bag_ids)
    for m in fits[False][1:] + fits[True]:
        assert all(np.array_equal(m.stored_[b], first[b]) for b in B.bag_ids)
        assert np.array_equal(m.U_, fits[False][0].U_) and np.array_equal(m.V_, fits[False][0].V_)
    # the same pages in another order: the same factors (an inductive fit on all pages)
    whole, shuffled = (LCMF(n_factors=4, random_state=0).fit(B.subset(i), y[i])
                       for i in (np.arange(40), perm))
    assert all(np.array_equal(whole.stored_[b], shuffled.stored_[b]) for b in B.bag_ids)
