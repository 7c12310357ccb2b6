"""MIORDM's baselines: KI-SVM (bag level) [kisvm], MILDM (aMILGDM) [mildm], MIRSVM [mirsvm]."""
import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.svm import SVC

from milbench.classifiers.kisvm import KISVM, mean_embedding_kernel
from milbench.classifiers.mildm import MILDM, bag_similarity_mapping, label_laplacian
from milbench.classifiers.mirsvm import MIRSVM
from milbench.data.bags import Bags
from milbench.utils.segments import averaging_matrix, segment_argmax

from conftest import synthetic_mil


def offsets_of(bags):
    return np.concatenate([[0], np.cumsum([len(b) for b in bags])])


def rbf(A, B, g):
    return np.exp(-g * cdist(A, B, "sqeuclidean"))


# ----------------------------------------------------------------------------- MIRSVM
def test_mirsvm_one_representative_per_bag_and_fixed_point():
    bags, y = synthetic_mil(0)
    m = MIRSVM(C=10.0, random_state=0).fit(bags, y)
    off = offsets_of(bags)
    assert m.rep_index_.shape == (len(bags),)
    assert ((m.rep_index_ >= off[:-1]) & (m.rep_index_ < off[1:])).all()
    X = np.concatenate(bags)
    np.testing.assert_array_equal(m.representatives_, X[m.rep_index_])
    assert m.diagnostics_["stop"] == MIRSVM.STOP_REASONS["converged"]
    # representatives stop changing: the final SVM re-selects the same instance in every bag
    # (most positive in positive bags, least negative in negative bags)
    np.testing.assert_array_equal(segment_argmax(m.instance_scores(X), off), m.rep_index_)


def test_mirsvm_final_model_is_svc_on_representatives():
    bags, y = synthetic_mil(1)
    m = MIRSVM(C=2.0, random_state=0).fit(bags, y)
    ref = SVC(C=2.0, kernel="rbf", gamma=1 / 5).fit(m.representatives_, y)
    Xt = np.concatenate(synthetic_mil(9)[0])
    np.testing.assert_allclose(m.instance_scores(Xt), ref.decision_function(Xt), atol=1e-6)
    np.testing.assert_allclose(m.decision_function(bags),
                               [ref.decision_function(b).max() for b in bags], atol=1e-6)


def test_mirsvm_random_init_is_seeded():
    bags, y = synthetic_mil(2)
    a = MIRSVM(max_iter=1, random_state=4).fit(bags, y)
    b = MIRSVM(max_iter=1, random_state=4).fit(bags, y)
    np.testing.assert_array_equal(a.rep_index_, b.rep_index_)
    seeds = {MIRSVM(max_iter=1, random_state=s).fit(bags, y).rep_index_.tobytes()
             for s in range(5)}
    assert len(seeds) > 1
    m = MIRSVM(init="mean", max_iter=1).fit(bags, y)
    np.testing.assert_allclose(m.representatives_, [b.mean(0) for b in bags])


# ----------------------------------------------------------------------------- KI-SVM
def test_kisvm_singleton_bags_reduce_to_svc():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(int)
    m = KISVM(C=3.0, gamma=0.5).fit([x[None] for x in X], y)
    ref = SVC(C=3.0, kernel="rbf", gamma=0.5).fit(X, y)
    Xt = rng.normal(size=(10, 3))
    np.testing.assert_allclose(m.decision_function([x[None] for x in Xt]),
                               ref.decision_function(Xt), atol=1e-6)


def test_kisvm_key_instances_and_negative_mean_embeddings():
    bags, y = synthetic_mil(3)
    m = KISVM(C=10.0, tol=1e-9).fit(bags, y)
    off = offsets_of(bags)
    X = np.concatenate(bags)
    pos = np.flatnonzero(y == 1)
    k = m.key_index_
    assert (k[y == 0] == -1).all()
    assert ((k[pos] >= off[pos]) & (k[pos] < off[pos + 1])).all()   # one key per positive bag
    # oracle: SVC on the brute-force bag-level Gram (key instances / negative-bag means)
    g = m.gamma_
    Z = [X[k[i]][None] if y[i] else bags[i] for i in range(len(bags))]
    G = np.array([[rbf(a, b, g).mean() for b in Z] for a in Z])
    ref = SVC(C=10.0, kernel="precomputed", tol=1e-9).fit(G, y)
    Xt = np.concatenate(synthetic_mil(8)[0])
    Kt = np.array([rbf(Xt, z, g).mean(1) for z in Z]).T
    np.testing.assert_allclose(m.instance_scores(Xt), ref.decision_function(Kt), atol=1e-6)
    # key instances stop changing: each is its bag's highest-output instance
    assert m.diagnostics_["stop"] == KISVM.STOP_REASONS["converged"]
    sc = m.instance_scores(X)
    for i in pos:
        assert k[i] == off[i] + np.argmax(sc[off[i]:off[i + 1]])


def test_kisvm_default_width_is_the_authors_mean_distance_rule():
    bags, y = synthetic_mil(12)
    X = np.concatenate(bags)
    mean_sq = cdist(X, X, "sqeuclidean").mean()            # over all N² pairs
    for ratio in (1.0, 2.0):
        m = KISVM(ratio=ratio, max_iter=1).fit(bags, y)
        assert m.gamma_ == pytest.approx(1.0 / (2 * ratio ** 2 * mean_sq))
    assert KISVM(gamma=0.3, max_iter=1).fit(bags, y).gamma_ == 0.3


def test_mean_embedding_kernel_matches_brute_force():
    bags, _ = synthetic_mil(4, n_bags=7)
    X, off = np.concatenate(bags), offsets_of(bags)
    Z = np.random.default_rng(0).normal(size=(5, 5))
    M = mean_embedding_kernel(X, off, Z, "rbf", 0.3, block=2)
    np.testing.assert_allclose(M, [rbf(b, Z, 0.3).mean(0) for b in bags])
    np.testing.assert_allclose(averaging_matrix(off) @ X, [b.mean(0) for b in bags])


# ----------------------------------------------------------------------------- MILDM
def test_mildm_mapping_has_one_column_per_pool_instance():
    bags, y = synthetic_mil(5, n_bags=12)
    m = MILDM(m=1.0, gamma=0.4).fit(bags, y)
    X = np.concatenate(bags)
    assert m.pool_.shape == X.shape                       # aMILGDM: pool = all instances
    Phi = m.map_pool(bags)
    assert Phi.shape == (len(bags), len(X))
    brute = np.array([[np.exp(-0.4 * ((b - p) ** 2).sum(1).min()) for p in X] for b in bags])
    np.testing.assert_allclose(Phi, brute, atol=1e-12)
    assert m.transform(bags).shape == (len(bags), len(X))


def test_mildm_dip_is_top_m_by_label_constraint_score():
    bags, y = synthetic_mil(6, n_bags=14)
    m = MILDM(m=7, gamma=0.4).fit(bags, y)
    Phi = m.map_pool(bags)
    # h(p_k) = ½ Σ_ij W_ij (f_ki − f_kj)², W = −1/|M| same label, +1/|C| different
    n = len(y)
    same = (y[:, None] == y[None, :]) & ~np.eye(n, dtype=bool)
    diff = y[:, None] != y[None, :]
    W = np.where(same, -1.0 / (same.sum() / 2), 0.0) + np.where(diff, 1.0 / (diff.sum() / 2), 0)
    h = 0.5 * (W[:, :, None] * (Phi[:, None, :] - Phi[None, :, :]) ** 2).sum((0, 1))
    np.testing.assert_allclose(m.pool_scores_, h, atol=1e-12)
    np.testing.assert_array_equal(np.sort(m.dip_), np.sort(np.argsort(-h)[:7]))
    np.testing.assert_allclose(m.transform(bags), Phi[:, m.dip_])
    L = label_laplacian(y)
    np.testing.assert_allclose(L.sum(1), 0.0, atol=1e-12)
    # the default classifier is kNN on the mapped bags
    from sklearn.neighbors import KNeighborsClassifier
    ref = KNeighborsClassifier().fit(Phi[:, m.dip_], y)
    np.testing.assert_allclose(m.decision_function(bags),
                               ref.predict_proba(Phi[:, m.dip_])[:, 1] - 0.5)


def test_bag_similarity_mapping_blocks():
    bags, _ = synthetic_mil(7, n_bags=6)
    X, off = np.concatenate(bags), offsets_of(bags)
    np.testing.assert_allclose(bag_similarity_mapping(X, off, X, 0.2, block_cols=3),
                               bag_similarity_mapping(X, off, X, 0.2))


# ----------------------------------------------------------------------------- all three
ESTIMATORS = [
    (KISVM, {"C": 10.0}, {"C": [1.0, 10.0]}),
    (MILDM, {"m": 0.2}, {"m": [0.1, 0.3]}),
    (MIRSVM, {"C": 10.0, "random_state": 0}, {"C": [1.0, 10.0]}),
]


@pytest.mark.parametrize("Est,kw,grid", ESTIMATORS)
def test_sklearn_contract_accuracy_and_determinism(Est, kw, grid):
    bags, y = synthetic_mil(10)
    est = Est(**kw)
    assert clone(est).get_params() == est.get_params()
    gs = GridSearchCV(Est(**kw), grid, cv=StratifiedKFold(3, shuffle=True, random_state=0))
    gs.fit(bags, y)
    assert set(gs.best_params_) == set(grid)
    cv = cross_validate(Est(**kw), bags, y, cv=3, scoring=["accuracy", "roc_auc"])
    assert cv["test_accuracy"].mean() > 0.85
    test_bags, test_y = synthetic_mil(110)
    m = Est(**kw).fit(bags, y)
    assert (m.predict(test_bags) == test_y).mean() > 0.9
    np.testing.assert_array_equal(m.decision_function(test_bags),
                                  Est(**kw).fit(bags, y).decision_function(test_bags))
    B = Bags.from_list(bags, 2 * y - 1)
    np.testing.assert_allclose(Est(**kw).fit(B, B.labels).decision_function(B),
                               m.decision_function(bags), atol=1e-4)
    assert isinstance(m.diagnostics_, dict)


@pytest.mark.parametrize("Est", [KISVM, MIRSVM])
def test_bad_parameters_raise(Est):
    bags, y = synthetic_mil(11)
    for kw in ({"kernel": "poly"}, {"max_iter": 0}):
        with pytest.raises(ValueError):
            Est(**kw).fit(bags, y)
