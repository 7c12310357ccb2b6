"""mi-SVM / MI-SVM (Andrews et al. 2003): reductions to SVC, witnesses, sklearn contract."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.svm import SVC

from milbench.classifiers import misvm
from milbench.classifiers._linear_svm import LinearSVMIPM
from milbench.classifiers.misvm import MISVM, MiSVM
from milbench.classifiers.simple import MISimple
from milbench.data.bags import BagError, Bags

CLASSES = [MiSVM, MISVM]


def singleton_data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.4).astype(int)
    return X, y


def poisoned(n_bags=60, size=12, d=5, seed=0):
    """Positive bags differ from negatives only by ONE witness instance.

    Every instance of a negative bag lies on a noisy sphere of radius 3 around the origin; a
    positive bag is a negative-like bag with one instance replaced by a point near the origin.
    Bag means are ≈ 0 in both classes, so mean pooling carries (almost) no signal.
    """
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n_bags):
        Z = rng.normal(size=(size, d))
        B = 3.0 * Z / np.linalg.norm(Z, axis=1, keepdims=True) + 0.1 * rng.normal(size=(size, d))
        lab = i % 2
        if lab:
            B[rng.integers(size)] = 0.2 * rng.normal(size=d)
        bags.append(B)
        y.append(lab)
    return bags, np.array(y)


def small_bags(n=30, seed=1):
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n):
        B = rng.normal(size=(rng.integers(2, 6), 3))
        if i % 2:
            B[0] += 2.5
        bags.append(B)
        y.append(i % 2)
    return bags, np.array(y)


@pytest.mark.parametrize("Cls", CLASSES)
@pytest.mark.parametrize("kernel,kw", [("linear", {}), ("rbf", {"gamma": 0.3}),
                                       ("poly", {"gamma": 0.5, "degree": 2, "coef0": 1.0})])
@pytest.mark.parametrize("precompute", [True, False])
def test_singleton_bags_reduce_to_svc(Cls, kernel, kw, precompute):
    X, y = singleton_data()
    bags = [x[None, :] for x in X]
    # tight solver tolerance on both sides: decision values are then unique to ~1e-9
    m = Cls(kernel=kernel, C=2.0, precompute=precompute, tol=1e-10, **kw).fit(bags, y)
    ref = SVC(kernel=kernel, C=2.0, tol=1e-10, **kw).fit(X, y)
    np.testing.assert_allclose(m.decision_function(bags), ref.decision_function(X), atol=1e-6)
    Xt, _ = singleton_data(seed=5)
    np.testing.assert_allclose(m.decision_function([x[None] for x in Xt]),
                               ref.decision_function(Xt), atol=1e-6)
    np.testing.assert_allclose(m.decision_instances([x[None] for x in Xt]),
                               ref.decision_function(Xt), atol=1e-6)


@pytest.mark.parametrize("Cls", CLASSES)
def test_ipm_solver_on_singleton_bags_is_the_linear_svc(Cls):
    """solver='ipm' solves libsvm's problem (bias unregularised) to 1e-10: with singleton bags
    both reduce to one linear SVM, and libsvm at a tight tolerance meets it."""
    X, y = singleton_data()
    bags = [x[None, :] for x in X]
    m = Cls(kernel="linear", C=2.0, solver="ipm").fit(bags, y)
    ref = SVC(kernel="linear", C=2.0, tol=1e-10).fit(X, y)
    Xt, _ = singleton_data(seed=5)
    np.testing.assert_allclose(m.decision_function([x[None] for x in Xt]),
                               ref.decision_function(Xt), atol=1e-5)
    assert m.diagnostics_["n_support"] == len(ref.support_)


@pytest.mark.parametrize("Cls", CLASSES)
def test_ipm_and_libsvm_agree_on_bags(Cls):
    """Where the linear model fits the bags, the two solvers take the same path (labels /
    witnesses, number of SVM fits) to the same model, libsvm at a tight tolerance."""
    bags, y = small_bags(n=40)
    for C in (0.1, 10.0):
        a = Cls(kernel="linear", C=C, tol=1e-8).fit(bags, y)
        b = Cls(kernel="linear", C=C, solver="ipm").fit(bags, y)
        np.testing.assert_allclose(b.decision_function(bags), a.decision_function(bags),
                                   atol=1e-4)
        assert b.diagnostics_["n_iter"] == a.diagnostics_["n_iter"]
        assert b.diagnostics_["n_svm_capped"] == a.diagnostics_["n_svm_capped"] == 0


@pytest.mark.parametrize("Cls", CLASSES)
def test_ipm_fits_stopped_at_their_cap_are_counted_and_warn(Cls, monkeypatch):
    """An interior point fit cut at its iteration cap is never silent: each warns, and
    diagnostics_["n_svm_capped"] counts them."""
    monkeypatch.setattr(misvm, "LinearSVMIPM", lambda C: LinearSVMIPM(C=C, max_iter=2))
    bags, y = small_bags(n=40)
    with pytest.warns(ConvergenceWarning, match="LinearSVMIPM stopped at max_iter=2 "):
        m = Cls(kernel="linear", C=1.0, solver="ipm").fit(bags, y)
    assert m.diagnostics_["n_svm_capped"] == m.diagnostics_["n_iter"] >= 1


def sparse_bags(n_bags=40, d=200, seed=3):
    """Bags of ~2 %-dense instances (TF-IDF-like); positive bags share a few features."""
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n_bags):
        B = rng.random((rng.integers(2, 7), d))
        B *= rng.random(B.shape) < 0.02
        if i % 2:
            B[0, :3] += 1.0
        bags.append(B)
        y.append(i % 2)
    return bags, np.array(y)


@pytest.mark.parametrize("Cls", CLASSES)
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("precompute", [True, False])
def test_sparse_instances_give_the_dense_model(Cls, kernel, precompute, monkeypatch):
    """A sparse pool is held as CSR (kernel products over the non-zeros); the model is the one
    the dense rows give, and on singleton bags the SVC on the same instances."""
    from milbench.classifiers import misvm
    bags, y = sparse_bags()
    test, _ = sparse_bags(seed=4)
    kw = dict(kernel=kernel, C=2.0, precompute=precompute, tol=1e-10)
    m = Cls(**kw).fit(bags, y)
    if precompute:
        assert sp.issparse(m.svm_.sv_points)
    else:
        assert m.svm_.svc._sparse
    monkeypatch.setattr(misvm, "as_sparse_if_sparse", lambda X: X)
    dense = Cls(**kw).fit(bags, y)
    assert m.diagnostics_ == dense.diagnostics_
    np.testing.assert_allclose(m.decision_function(test), dense.decision_function(test),
                               atol=1e-8)
    np.testing.assert_allclose(m.decision_instances(test), dense.decision_instances(test),
                               atol=1e-8)
    X = np.concatenate(bags)
    yi = np.repeat(y, [len(b) for b in bags])
    ref = SVC(kernel=kernel, C=2.0, tol=1e-10, gamma=1.0 / X.shape[1]).fit(X, yi)
    monkeypatch.undo()
    single = Cls(**kw).fit([x[None] for x in X], yi)
    np.testing.assert_allclose(single.decision_function([x[None] for x in X]),
                               ref.decision_function(X), atol=1e-6)


@pytest.mark.parametrize("Cls", CLASSES)
def test_auto_precompute_cap_is_higher_for_a_sparse_pool(Cls, monkeypatch):
    from milbench.classifiers import misvm
    monkeypatch.setattr(misvm, "PRECOMPUTE_MAX_DENSE", 10)
    monkeypatch.setattr(misvm, "PRECOMPUTE_MAX_SPARSE", 1000)
    bags, y = sparse_bags()
    assert Cls().fit(bags, y).svm_.precompute                 # ~180 sparse instances
    assert not Cls().fit([b + 1.0 for b in bags], y).svm_.precompute      # the same, dense
    assert not Cls(precompute_max=100).fit(bags, y).svm_.precompute


@pytest.mark.parametrize("Cls", CLASSES)
@pytest.mark.parametrize("scaling,n", [("none", 1), ("n_instances", 60), ("n_bags", 60)])
def test_C_scaling_is_explicit(Cls, scaling, n):
    X, y = singleton_data()
    bags = [x[None, :] for x in X]
    m = Cls(kernel="rbf", gamma=0.3, C=30.0, C_scaling=scaling, tol=1e-10).fit(bags, y)
    assert m.C_ == pytest.approx(30.0 / n)
    ref = SVC(kernel="rbf", gamma=0.3, C=30.0 / n, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(m.decision_function(bags), ref.decision_function(X), atol=1e-6)


def test_n_examples_scaling_counts_svm_examples():
    bags, y = small_bags()
    n_inst = sum(len(b) for b in bags)
    n_neg_inst = sum(len(b) for b, l in zip(bags, y) if l == 0)
    assert MiSVM(C=6.0, C_scaling="n_examples").fit(bags, y).C_ == pytest.approx(6.0 / n_inst)
    assert MISVM(C=6.0, C_scaling="n_examples").fit(bags, y).C_ == \
        pytest.approx(6.0 / (n_neg_inst + y.sum()))


@pytest.mark.parametrize("Cls", CLASSES)
def test_poisoned_witness_bags(Cls):
    """MI methods find the single witness; a mean-pooling baseline cannot."""
    bags, y = poisoned(seed=0)
    bt, yt = poisoned(seed=1)
    # moderate capacity: with C large and γ large mi-SVM memorises the shell points of the
    # positive bags in its first SVM and never relabels them (a known mi-SVM failure mode)
    acc = (Cls(kernel="rbf", C=1.0, gamma=0.2).fit(bags, y).predict(bt) == yt).mean()
    base = MISimple(estimator="svm", statistic="mean").fit(bags, y)
    acc_mean = (base.predict(bt) == yt).mean()
    assert acc >= 0.9, acc
    assert acc_mean <= 0.65, acc_mean


def test_mi_svm_label_constraints_and_bag_score_is_max():
    bags, y = small_bags()
    m = MiSVM(kernel="rbf", C=1.0, gamma=0.5).fit(bags, y)
    sizes = np.array([len(b) for b in bags])
    off = np.r_[0, np.cumsum(sizes)]
    lab = m.instance_labels_
    assert set(np.unique(lab)) <= {0, 1}
    assert (np.add.reduceat(lab, off[:-1])[y == 1] >= 1).all()       # ≥ 1 positive per + bag
    assert (np.add.reduceat(lab, off[:-1])[y == 0] == 0).all()       # negatives fixed
    f = m.decision_instances(bags)
    np.testing.assert_allclose(m.decision_function(bags), np.maximum.reduceat(f, off[:-1]))
    assert set(m.predict_instances(bags)) <= set(m.classes_)
    if m.diagnostics_["converged"]:
        # at convergence the imputed labels are the SVM's own (sign f, argmax fallback)
        fpos = f[np.repeat(y, sizes) == 1]
        assert ((fpos >= 0) <= (lab[np.repeat(y, sizes) == 1] == 1)).all()


def test_MI_svm_witnesses_are_argmax_at_convergence():
    bags, y = small_bags()
    m = MISVM(kernel="linear", C=1.0).fit(bags, y)
    assert m.diagnostics_["converged"] == 1
    sizes = np.array([len(b) for b in bags])
    off = np.r_[0, np.cumsum(sizes)]
    f = m.decision_instances(bags)
    pos = np.flatnonzero(y == 1)
    assert len(m.witnesses_) == len(pos)
    for w, b in zip(m.witnesses_, pos):
        assert off[b] <= w < off[b + 1]
        assert f[w] == pytest.approx(f[off[b]:off[b + 1]].max(), abs=1e-9)


@pytest.mark.parametrize("Cls", CLASSES)
def test_max_iter_respected(Cls):
    bags, y = poisoned(n_bags=20, seed=3)
    m = Cls(kernel="rbf", C=1.0, max_iter=1).fit(bags, y)
    assert m.diagnostics_["n_iter"] == 1


@pytest.mark.parametrize("Cls", CLASSES)
@pytest.mark.parametrize("bad,msg", [({"kernel": "sigmoid"}, "kernel"),
                                     ({"C_scaling": "n_folds"}, "C_scaling"),
                                     ({"C": -1.0}, "'C' parameter"),
                                     ({"gamma": "scale"}, "gamma"),
                                     ({"max_iter": 0}, "max_iter"),
                                     ({"precompute": "yes"}, "precompute"),
                                     ({"solver": "smo"}, "solver"),
                                     ({"solver": "ipm"}, "linear SVM only"),
                                     ({"solver": "ipm", "kernel": "linear", "precompute": True},
                                      "precompute=True needs")])
def test_clear_errors(Cls, bad, msg):
    bags, y = small_bags()
    with pytest.raises(ValueError, match=msg):
        Cls(**{"kernel": "rbf", **bad}).fit(bags, y)


@pytest.mark.parametrize("Cls", CLASSES)
def test_input_errors(Cls):
    bags, y = small_bags()
    with pytest.raises(BagError, match="single class"):
        Cls().fit(bags, np.zeros(len(bags)))
    with pytest.raises(BagError, match="labels"):
        Cls().fit(bags, y[:-1])
    m = Cls().fit(bags, y)
    with pytest.raises(ValueError, match="features"):
        m.predict([np.zeros((2, 5))])


@pytest.mark.parametrize("Cls", CLASSES)
def test_sklearn_contract_and_determinism(Cls):
    bags, y = small_bags(n=40)
    est = Cls(kernel="rbf", gamma=0.5)
    assert clone(est).get_params() == est.get_params()
    a = clone(est).fit(bags, 2 * y - 1)
    b = clone(est).fit(bags, y)
    np.testing.assert_array_equal(a.decision_function(bags), b.decision_function(bags))
    c = clone(est).fit(Bags.from_list(bags, y), y)      # float32 storage: equal to ~1e-6
    np.testing.assert_allclose(c.decision_function(bags), b.decision_function(bags), atol=1e-4)
    assert set(a.predict(bags)) <= {-1, 1}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    res = cross_validate(est, bags, y, cv=cv, scoring=("accuracy", "roc_auc"))
    assert np.isfinite(res["test_roc_auc"]).all()
    gs = GridSearchCV(est, {"C": [0.1, 10.0]}, cv=cv).fit(bags, y)
    assert gs.best_params_["C"] in (0.1, 10.0)
