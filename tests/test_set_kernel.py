"""Set kernel / NSK SVM (Gärtner et al. 2002): Gram = S K Sᵀ, singleton reduction, musk1 figures."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

from milbench.classifiers.set_kernel import (
    SetKernelSVM,
    make_instance_kernel,
    set_kernel_matrix,
    set_kernel_self,
)
from milbench.data.bags import BagError, Bags


def random_bags(n=25, d=4, seed=0):
    rng = np.random.default_rng(seed)
    bags = [rng.normal(size=(rng.integers(1, 7), d)) + (i % 2) for i in range(n)]
    return bags, np.arange(n) % 2


def indicator(bags):
    sizes = [len(b) for b in bags]
    rows = np.repeat(np.arange(len(bags)), sizes)
    return sp.csr_matrix((np.ones(len(rows)), (rows, np.arange(len(rows)))))


@pytest.mark.parametrize("block_rows", [1, 5, 4096])
@pytest.mark.parametrize("kind", ["rbf", "poly"])
def test_gram_equals_S_K_St(block_rows, kind):
    A, _ = random_bags(seed=1)
    B, _ = random_bags(n=9, seed=2)
    k = make_instance_kernel(kind, 0.3, degree=2, coef0=1.0)
    Kinst = k(np.vstack(A), np.vstack(B))
    ref = indicator(A) @ Kinst @ indicator(B).T
    np.testing.assert_allclose(set_kernel_matrix(A, B, k, block_rows), ref, rtol=1e-12)
    self_ref = np.array([k(a, a).sum() for a in A])
    np.testing.assert_allclose(set_kernel_self(A, k, block_rows), self_ref, rtol=1e-12)


@pytest.mark.parametrize("normalize", ["none", "featurespace", "averaging", True, False])
def test_singleton_bags_rbf_equals_instance_svc(normalize):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    bags = [x[None] for x in X]
    m = SetKernelSVM(instance_kernel="rbf", gamma=0.4, C=3.0, normalize=normalize,
                     tol=1e-10).fit(bags, y)
    ref = SVC(kernel="rbf", gamma=0.4, C=3.0, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(m.decision_function(bags), ref.decision_function(X), atol=1e-6)
    # the set kernel on singleton bags *is* the instance kernel (k(x,x) = 1 for RBF)
    k = make_instance_kernel("rbf", 0.4)
    np.testing.assert_allclose(set_kernel_matrix(bags, bags, k), rbf_kernel(X, gamma=0.4))


def test_singleton_bags_poly_equals_instance_svc():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] + X[:, 2] ** 2 > 1).astype(int)
    bags = [x[None] for x in X]
    kw = dict(gamma=0.5, degree=2, coef0=1.0)
    m = SetKernelSVM(instance_kernel="poly", C=2.0, normalize="none", tol=1e-10,
                     **kw).fit(bags, y)
    ref = SVC(kernel="poly", C=2.0, tol=1e-10, **kw).fit(X, y)
    np.testing.assert_allclose(m.decision_function(bags), ref.decision_function(X), atol=1e-6)
    k = make_instance_kernel("poly", 0.5, 2, 1.0)
    np.testing.assert_allclose(set_kernel_matrix(bags, bags, k), polynomial_kernel(X, **kw))


def test_normalisations_match_definitions():
    bags, y = random_bags()
    k = make_instance_kernel("rbf", 0.2)
    Ks = set_kernel_matrix(bags, bags, k)
    sizes = np.array([len(b) for b in bags], float)
    d = np.sqrt(np.diag(Ks))
    for norm, K in (("featurespace", Ks / np.outer(d, d)),
                    ("averaging", Ks / np.outer(sizes, sizes)), ("none", Ks)):
        m = SetKernelSVM(gamma=0.2, C=5.0, normalize=norm, tol=1e-10).fit(bags, y)
        ref = SVC(kernel="precomputed", C=5.0, tol=1e-10).fit(K, y)
        np.testing.assert_allclose(m.decision_function(bags), ref.decision_function(K), atol=1e-6)
    assert SetKernelSVM(C=10.0, C_scaling="n_bags").fit(bags, y).C_ == pytest.approx(10 / 25)
    assert SetKernelSVM(C=10.0, C_scaling="n_instances").fit(bags, y).C_ == \
        pytest.approx(10 / sizes.sum())


def musk1_pooled_accuracy(data, normalize, seed):
    from milbench.data.sources import load_dataset
    from milbench.preprocessing import BagScaler
    bags = load_dataset("musk1", data)
    y = bags.labels.astype(int)
    correct = 0
    for tr, te in StratifiedKFold(10, shuffle=True, random_state=seed).split(np.zeros(len(y)), y):
        m = make_pipeline(BagScaler("zscore"),
                          SetKernelSVM(instance_kernel="rbf", gamma=1 / 166, C=100.0,
                                       C_scaling="n_bags", normalize=normalize))
        m.fit(bags.subset(tr), y[tr])
        correct += int((m.predict(bags.subset(te)) == y[te]).sum())
    return correct, len(y)


@pytest.mark.parametrize("seed,correct", [(0, 83), (1, 78)])   # 83/92 = 0.902, 78/92 = 0.848
def test_musk1_published_nsk_figures_exact(seed, correct, shared_data):
    """Two open-source codebases report 0.902 (r=0) and 0.848 (r=1) for "NSK" on musk1:
    StratifiedKFold(10, shuffle=True, random_state=r), z-score on training instances, RBF
    γ = 1/166, C = 100 / n_train_bags, accuracy pooled over the 92 test predictions.  Only the
    *unnormalised* set kernel reproduces both (mean-of-fold accuracy gives 0.901 / 0.847; the
    feature-space NSK gives 78 and 79 correct)."""
    got, n = musk1_pooled_accuracy(shared_data, "none", seed)
    assert n == 92
    assert got == correct
    assert round(got / n, 3) == {0: 0.902, 1: 0.848}[seed]


def test_musk1_featurespace_nsk_differs(shared_data):
    assert [musk1_pooled_accuracy(shared_data, "featurespace", s)[0] for s in (0, 1)] == [78, 79]


@pytest.mark.parametrize("bad,msg", [({"instance_kernel": "linear"}, "instance_kernel"),
                                     ({"normalize": "l2"}, "normalize"),
                                     ({"C_scaling": "n"}, "C_scaling"),
                                     ({"C": 0}, "'C' parameter"), ({"gamma": -1.0}, "gamma")])
def test_clear_errors(bad, msg):
    bags, y = random_bags()
    with pytest.raises(ValueError, match=msg):
        SetKernelSVM(**bad).fit(bags, y)
    with pytest.raises(BagError):
        SetKernelSVM().fit(bags, np.ones(len(bags)))
    with pytest.raises(ValueError, match="features"):
        SetKernelSVM().fit(bags, y).predict([np.zeros((3, 7))])


def test_sklearn_contract_and_determinism():
    bags, y = random_bags(n=40)
    est = SetKernelSVM(gamma=0.3)
    a = clone(est).fit(bags, 2 * y - 1)
    b = clone(est).fit(bags, y)
    np.testing.assert_array_equal(a.decision_function(bags), b.decision_function(bags))
    c = clone(est).fit(Bags.from_list(bags, y), y)      # float32 storage: equal to ~1e-6
    np.testing.assert_allclose(c.decision_function(bags), b.decision_function(bags), atol=1e-4)
    assert set(a.predict(bags)) <= {-1, 1}
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    res = cross_validate(est, bags, y, cv=cv, scoring=("accuracy", "roc_auc"))
    assert res["test_accuracy"].mean() > 0.7
    gs = GridSearchCV(est, {"normalize": ["none", "featurespace"], "C": [1.0, 10.0]}, cv=cv)
    assert gs.fit(bags, y).best_params_["C"] in (1.0, 10.0)
