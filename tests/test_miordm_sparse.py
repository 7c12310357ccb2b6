"""MIORDM's kernel on sparse input: CSR products, the packed kernel shared by an
inner-CV grid — the same model as the dense products to round-off, the same representatives."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import milbench.classifiers._kernels as kernels_mod
import milbench.classifiers._representatives as reps_mod
from milbench.classifiers._kernels import (
    as_sparse_if_sparse,
    kernel_matrix,
    packed_block,
    packed_kernel,
    packed_matvec,
    sq_norms,
)
from milbench.classifiers._representatives import instances_and_means
from milbench.classifiers.miordm import MIORDM
from milbench.testing import sparse_bags


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_sparse_kernel_matrix_matches_dense(kernel):
    rng = np.random.default_rng(0)
    A = sp.random(40, 50, density=0.1, random_state=rng, format="csr")
    B = sp.random(30, 50, density=0.1, random_state=rng, format="csr")
    ref = kernel_matrix(A.toarray(), B.toarray(), kernel, 0.2)
    for a, b in ((A, B), (A, B.toarray()), (A.toarray(), B)):
        np.testing.assert_allclose(kernel_matrix(a, b, kernel, 0.2), ref, rtol=0, atol=1e-13)
    A32 = A.astype(np.float32)                          # products in float64, as for dense
    np.testing.assert_allclose(kernel_matrix(A32, B, kernel, 0.2),
                               kernel_matrix(A32.toarray(), B.toarray(), kernel, 0.2),
                               rtol=0, atol=1e-13)
    np.testing.assert_allclose(sq_norms(A), sq_norms(A.toarray()), rtol=1e-14)


def test_packed_kernel_blocks_match_the_per_block_products():
    rng = np.random.default_rng(1)
    Zs = sp.random(57, 40, density=0.08, random_state=rng, format="csr")
    norms = sq_norms(Zs.toarray())
    # small row blocks so the triangle is assembled from several pieces
    P = packed_kernel(Zs, "rbf", 0.3, norms, block_bytes=8 * 57 * 5)
    assert P.shape == (57 * 58 // 2,)
    rows, cols = rng.permutation(57)[:20], rng.permutation(57)[:13]
    block = kernel_matrix(Zs[rows], Zs[cols], "rbf", 0.3, norms[rows], norms[cols])
    # the same sparse products; the norms are added in the other order above the diagonal
    np.testing.assert_allclose(packed_block(P, rows, cols), block, rtol=1e-15, atol=0)
    lower = rows[:, None] >= cols[None, :]
    np.testing.assert_array_equal(packed_block(P, rows, cols)[lower], block[lower])
    full = packed_block(P, np.arange(57), np.arange(57))
    np.testing.assert_array_equal(full, full.T)
    np.testing.assert_allclose(full, kernel_matrix(Zs.toarray(), Zs.toarray(), "rbf", 0.3),
                               rtol=0, atol=1e-13)
    coef = rng.normal(size=13)
    np.testing.assert_allclose(packed_matvec(P, cols, coef), full[:, cols] @ coef, rtol=0,
                               atol=1e-12)


def test_density_threshold(monkeypatch):
    bags, _ = sparse_bags(0)
    X = np.concatenate(bags)
    assert sp.issparse(as_sparse_if_sparse(X))
    assert not sp.issparse(as_sparse_if_sparse(np.ones((5, 4))))
    monkeypatch.setattr(kernels_mod, "SPARSE_MAX_DENSITY", 0.0)
    assert not sp.issparse(as_sparse_if_sparse(X))
    assert not sp.issparse(as_sparse_if_sparse(np.zeros((5, 4))))


def test_sparse_instances_and_means_equal_the_dense_ones(monkeypatch):
    bags, _ = sparse_bags(4)
    X = np.concatenate(bags).astype(np.float32)          # as the Bags container stores them
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in bags])])
    Z, norms = instances_and_means(X, offsets)
    assert sp.issparse(Z) and Z.dtype == np.float64
    monkeypatch.setattr(kernels_mod, "SPARSE_MAX_DENSITY", 0.0)
    Zd, norms_d = instances_and_means(X, offsets)
    assert not sp.issparse(Zd)
    np.testing.assert_array_equal(Z.toarray(), Zd)
    np.testing.assert_allclose(norms, norms_d, rtol=1e-14)


@pytest.mark.parametrize("kernel,gamma", [("rbf", None), ("rbf", 0.05), ("linear", None)])
def test_sparse_paths_give_the_dense_model(fresh_cache, monkeypatch, kernel, gamma):
    bags, y = sparse_bags(2)
    assert sp.issparse(as_sparse_if_sparse(np.concatenate(bags)))
    kw = dict(kernel=kernel, gamma=gamma, lam=64.0, theta=0.6, mu=0.8, random_state=0)
    test_bags, _ = sparse_bags(102)
    fits = {}
    for label, patch in (("dense", {"SPARSE_MAX_DENSITY": 0.0}),      # the code before
                         ("dense/round", {"SPARSE_MAX_DENSITY": 0.0, "FULL_KERNEL_MAX_BYTES": 0}),
                         ("csr", {"PACKED_KERNEL_MAX_BYTES": 0}), ("packed", {})):
        with monkeypatch.context() as m:
            for k, v in patch.items():
                m.setattr(kernels_mod if k == "SPARSE_MAX_DENSITY" else reps_mod, k, v)
            fresh_cache.clear()
            est = MIORDM(**kw).fit(bags, y)
            fits[label] = (est, est.decision_function(test_bags), len(fresh_cache))
    assert [f[2] for f in fits.values()] == [1, 0, 0, 1]     # kernels cached
    ref, ref_dec, _ = fits["dense"]
    assert ref.diagnostics_["n_iter"] > 1
    for est, dec, _ in (fits["dense/round"], fits["csr"], fits["packed"]):
        np.testing.assert_array_equal(est.rep_index_, ref.rep_index_)
        assert est.diagnostics_["n_iter"] == ref.diagnostics_["n_iter"]
        np.testing.assert_allclose(est.dual_coef_, ref.dual_coef_, rtol=0, atol=1e-10)
        np.testing.assert_allclose(est.history_, ref.history_, rtol=1e-11)
        np.testing.assert_allclose(dec, ref_dec, rtol=0, atol=1e-10)


def test_grid_shares_one_packed_kernel_per_fold(fresh_cache):
    from milbench.utils.cache import disabled
    bags, y = sparse_bags(3)
    grid = {"lam": [4.0, 64.0], "theta": [0.6, 0.8]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    cached = GridSearchCV(MIORDM(random_state=0), grid, cv=cv).fit(bags, y)
    assert (fresh_cache.misses, fresh_cache.hits) == (3 + 1, 3 * 3)   # per fold + refit
    assert all(k[0] == "packed-kernel" for k in fresh_cache._items)
    with disabled(fresh_cache):
        plain = GridSearchCV(MIORDM(random_state=0), grid, cv=cv).fit(bags, y)
    np.testing.assert_array_equal(cached.cv_results_["mean_test_score"],
                                  plain.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(cached.decision_function(bags), plain.decision_function(bags))


def test_small_cache_bound_computes_blocks_every_round(monkeypatch, reuse_on):
    from milbench.utils.cache import ArrayCache
    bags, y = sparse_bags(5)
    kw = dict(lam=32.0, random_state=0)
    monkeypatch.setattr(kernels_mod, "CACHE", ArrayCache())
    packed = MIORDM(**kw).fit(bags, y)
    assert len(kernels_mod.CACHE) == 1
    small = ArrayCache(max_bytes=64)                   # a fifth of it holds no kernel
    monkeypatch.setattr(kernels_mod, "CACHE", small)
    per_round = MIORDM(**kw).fit(bags, y)
    assert small.misses == 0 and len(small) == 0
    np.testing.assert_array_equal(per_round.rep_index_, packed.rep_index_)
    np.testing.assert_allclose(per_round.decision_function(bags), packed.decision_function(bags),
                               rtol=0, atol=1e-10)
