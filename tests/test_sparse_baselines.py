"""MIORDM's baselines on sparse input (WebKB's TF-IDF passages): MIRSVM, KI-SVM, MILDM and Citation-kNN's
Hausdorff tables through CSR products, their data-only tables shared by an inner-CV grid — the
same model as the dense products (the code before) to round-off, the same representatives."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import milbench.classifiers._kernels as kernels_mod
from milbench.classifiers.citation_knn import CitationKNN
from milbench.classifiers.distances import stacked_bag_distances
from milbench.classifiers.kisvm import KISVM
from milbench.classifiers.mildm import MILDM
from milbench.classifiers.mirsvm import MIRSVM
from milbench.data.bags import stack
from milbench.testing import sparse_bags
from milbench.utils.cache import disabled

CASES = {
    "mirsvm-random": (lambda: MIRSVM(C=10.0, random_state=0), "rep_index_"),
    "mirsvm-mean": (lambda: MIRSVM(C=10.0, init="mean", random_state=0), "rep_index_"),
    "mirsvm-linear": (lambda: MIRSVM(C=1.0, kernel="linear", random_state=0), "rep_index_"),
    "kisvm": (lambda: KISVM(C=10.0), "key_index_"),
    "kisvm-linear": (lambda: KISVM(C=1.0, kernel="linear"), "key_index_"),
    "mildm": (lambda: MILDM(m=0.2), "dip_"),
    "citation-knn": (lambda: CitationKNN(references=2, citers=4), None),
}


def dense_fit(monkeypatch, make, bags, y):
    """The code before: dense products, nothing cached."""
    with monkeypatch.context() as m, disabled():
        m.setattr(kernels_mod, "SPARSE_MAX_DENSITY", 0.0)
        est = make().fit(bags, y)
        return est, est.decision_function(sparse_bags(101)[0])


@pytest.mark.parametrize("case", sorted(CASES))
def test_sparse_products_give_the_dense_model(fresh_cache, monkeypatch, case):
    make, chosen = CASES[case]
    bags, y = sparse_bags(2)
    ref, ref_dec = dense_fit(monkeypatch, make, bags, y)
    est = make().fit(bags, y)
    np.testing.assert_allclose(est.decision_function(sparse_bags(101)[0]), ref_dec, rtol=0,
                               atol=1e-10)
    if chosen:
        np.testing.assert_array_equal(getattr(est, chosen), getattr(ref, chosen))
    if hasattr(ref, "diagnostics_"):
        assert est.diagnostics_ == ref.diagnostics_
    if case.startswith("mirsvm"):
        assert ref.diagnostics_["n_iter"] > 1
        assert [k[0] for k in fresh_cache._items] == ["packed-kernel"]


@pytest.mark.parametrize("metric", ["min", "max", "avg"])
def test_sparse_hausdorff_tables_equal_the_dense_ones(monkeypatch, metric):
    XA, offA = stack(sparse_bags(3)[0])
    XB, offB = stack(sparse_bags(4, n_bags=20)[0])
    XD = np.abs(XB) + 1.0                                    # dense B beside sparse A
    for args in ((XA, offA), (XA, offA, XB, offB), (XA, offA, XD, offB)):
        sparse = stacked_bag_distances(*args, metric=metric)
        with monkeypatch.context() as m:
            m.setattr(kernels_mod, "SPARSE_MAX_DENSITY", 0.0)
            dense = stacked_bag_distances(*args, metric=metric)
        # squared distances to round-off (the root magnifies it near 0: 1e-16 -> 1e-8)
        np.testing.assert_allclose(sparse ** 2, dense ** 2, rtol=0, atol=1e-12)
        assert np.abs(sparse - dense).max() < 1e-7


@pytest.mark.parametrize("est,grid,per_fold", [
    (MIRSVM(random_state=0), {"C": [0.1, 10.0, 100.0]}, 1),          # packed kernel
    (KISVM(), {"C": [0.1, 10.0, 100.0]}, 1),                          # mean embeddings
    (MILDM(), {"m": [0.05, 0.2, 0.5]}, 2),                            # φ and the pool scores
])
def test_grid_shares_the_data_only_tables_per_fold(fresh_cache, est, grid, per_fold):
    bags, y = sparse_bags(5)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    cached = GridSearchCV(est, grid, cv=cv).fit(bags, y)
    # computed once per fold and for the refit, looked up by the other two candidates
    assert (fresh_cache.misses, fresh_cache.hits) == (per_fold * (3 + 1), per_fold * 3 * 2)
    with disabled(fresh_cache):
        plain = GridSearchCV(est, grid, cv=cv).fit(bags, y)
    np.testing.assert_array_equal(cached.cv_results_["mean_test_score"],
                                  plain.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(cached.decision_function(bags), plain.decision_function(bags))
