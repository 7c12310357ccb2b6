"""MIORDM (miordm.txt §III) and its kernel-ODM dual solver (Eq. 27, DCD of Eq. 31)."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate

from milbench.classifiers._kernels import kernel_matrix
from milbench.classifiers.miordm import MIORDM
from milbench.classifiers.odm import (
    ODM,
    dual_gradient,
    dual_objective,
    kkt_violation,
    odm_c,
    odm_dual_matrices,
    primal_objective,
    solve_odm_dual,
)
from milbench.data.bags import Bags
from milbench.utils.segments import segment_argmax

from conftest import synthetic_mil


def random_problem(seed, n=25, kernel="rbf"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = rng.choice([-1.0, 1.0], n)
    K = kernel_matrix(X, X, kernel, 0.3)
    lam = float(2.0 ** rng.integers(0, 5))
    theta = float(rng.uniform(0.0, 0.9))
    mu = float(rng.uniform(0.2, 1.0))
    return K * np.outer(y, y), lam, theta, mu


def reference_qp(H, c, mu, theta):
    """General bound-constrained solver on the explicit 2n×2n problem of Eq. 27."""
    Q, p = odm_dual_matrices(H, c, mu, theta)
    res = minimize(lambda d: (0.5 * d @ Q @ d + p @ d, Q @ d + p), np.zeros(len(p)), jac=True,
                   method="L-BFGS-B", bounds=[(0, None)] * len(p),
                   options=dict(ftol=1e-16, gtol=1e-12, maxiter=100000, maxfun=100000))
    return res.x, res.fun


def projected_gradient_reference(H, c, mu, theta, iters=200000):
    Q, p = odm_dual_matrices(H, c, mu, theta)
    step = 1.0 / np.linalg.eigvalsh(Q)[-1]
    d = np.zeros(len(p))
    for _ in range(iters):
        d_new = np.maximum(d - step * (Q @ d + p), 0.0)
        if np.abs(d_new - d).max() < 1e-14:
            break
        d = d_new
    return d


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("newton_every", [0, 1])
def test_dual_solver_matches_general_qp(seed, newton_every):
    H, lam, theta, mu = random_problem(seed)
    c = odm_c(len(H), lam, theta)
    res = solve_odm_dual(H, c, mu, theta, tol=1e-10, max_sweeps=200000, random_state=seed,
                         newton_every=newton_every)
    assert res.converged
    ref, ref_fun = reference_qp(H, c, mu, theta)
    np.testing.assert_allclose(np.concatenate([res.alpha, res.beta]), ref, atol=1e-6)
    assert res.objective == pytest.approx(ref_fun, abs=1e-9)


def test_dual_solver_matches_projected_gradient_linear_kernel():
    H, lam, theta, mu = random_problem(11, n=15, kernel="linear")
    c = odm_c(len(H), lam, theta)
    res = solve_odm_dual(H, c, mu, theta, tol=1e-11, max_sweeps=100000, random_state=0)
    ref = projected_gradient_reference(H, c, mu, theta)
    np.testing.assert_allclose(np.concatenate([res.alpha, res.beta]), ref, atol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_kkt_and_strong_duality_at_solution(seed):
    H, lam, theta, mu = random_problem(100 + seed, n=40)
    c = odm_c(len(H), lam, theta)
    res = solve_odm_dual(H, c, mu, theta, tol=1e-9, max_sweeps=100000, random_state=seed)
    a, b = res.alpha, res.beta
    ga, gb = dual_gradient(H, a, b, c, mu, theta)
    # KKT of min ½δᵀQδ + pᵀδ, δ ≥ 0: δ ≥ 0, ∇ ≥ 0, δ ∘ ∇ = 0
    assert (a >= 0).all() and (b >= 0).all()
    assert ga.min() > -1e-8 and gb.min() > -1e-8
    assert np.abs(a * ga).max() < 1e-8 and np.abs(b * gb).max() < 1e-8
    # the same gradient as the explicit 2n×2n matrix (block structure used correctly)
    Q, p = odm_dual_matrices(H, c, mu, theta)
    np.testing.assert_allclose(np.concatenate([ga, gb]), Q @ np.concatenate([a, b]) + p,
                               atol=1e-12)
    # ξ_i ε_i = 0 (Eq. 7): never both multipliers positive
    assert not ((a > 0) & (b > 0)).any()
    # strong duality: primal (Eq. 18) at w = Σ u_i y_i φ(x_i) equals −dual
    assert primal_objective(H, res.u, lam, theta, mu) == pytest.approx(-res.objective,
                                                                        rel=1e-7, abs=1e-9)
    assert res.violation == pytest.approx(kkt_violation(H, a, b, c, mu, theta).max())


def test_warm_start_and_order_do_not_change_the_optimum():
    H, lam, theta, mu = random_problem(7, n=30)
    c = odm_c(len(H), lam, theta)
    r1 = solve_odm_dual(H, c, mu, theta, tol=1e-10, random_state=1, max_sweeps=50000)
    rng = np.random.default_rng(3)
    r2 = solve_odm_dual(H, c, mu, theta, alpha0=rng.random(30), beta0=rng.random(30),
                        tol=1e-10, random_state=2, max_sweeps=50000)
    np.testing.assert_allclose(r1.u, r2.u, atol=1e-7)
    r3 = solve_odm_dual(H, c, mu, theta, alpha0=r1.alpha, beta0=r1.beta, tol=1e-8)
    assert r3.sweeps == 0


def test_dual_objective_matches_explicit_form():
    H, lam, theta, mu = random_problem(5, n=10)
    c = odm_c(10, lam, theta)
    rng = np.random.default_rng(0)
    a, b = rng.random(10), rng.random(10)
    Q, p = odm_dual_matrices(H, c, mu, theta)
    d = np.concatenate([a, b])
    assert dual_objective(H, a, b, c, mu, theta) == pytest.approx(0.5 * d @ Q @ d + p @ d)


# ----------------------------------------------------------------------------- MIORDM
def test_singleton_bags_reduce_to_plain_odm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(int)
    for kernel in ("rbf", "linear"):
        kw = dict(lam=8.0, theta=0.3, mu=0.8, kernel=kernel, gamma=0.5, tol=1e-10)
        odm = ODM(**kw, random_state=0).fit(X, y)
        mil = MIORDM(**kw, random_state=0).fit([x[None] for x in X], y)
        Xt = rng.normal(size=(15, 3))
        np.testing.assert_allclose(mil.decision_function([x[None] for x in Xt]),
                                   odm.decision_function(Xt), atol=1e-6)
        np.testing.assert_array_equal(mil.predict([x[None] for x in Xt]), odm.predict(Xt))
        assert mil.diagnostics_["stop"] == MIORDM.STOP_REASONS["converged"]
        assert mil.diagnostics_["n_iter"] == 2      # means, then the same instances again


def test_first_round_uses_bag_means_and_reps_are_bag_members():
    bags, y = synthetic_mil(1)
    m1 = MIORDM(max_rounds=1, random_state=0).fit(bags, y)
    assert m1.diagnostics_["n_iter"] == 1
    assert m1.diagnostics_["stop"] == MIORDM.STOP_REASONS["max_iter"]
    np.testing.assert_allclose(m1.representatives_, [b.mean(0) for b in bags])
    assert (m1.rep_index_ == -1).all()
    m = MIORDM(random_state=0).fit(bags, y)
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in bags])])
    assert ((m.rep_index_ >= offsets[:-1]) & (m.rep_index_ < offsets[1:])).all()
    np.testing.assert_allclose(m.representatives_, np.concatenate(bags)[m.rep_index_])


def test_terminates_when_representatives_repeat():
    bags, y = synthetic_mil(2)
    m = MIORDM(lam=16.0, theta=0.6, mu=0.8, random_state=0).fit(bags, y)
    d = m.diagnostics_
    assert d["stop"] == MIORDM.STOP_REASONS["converged"] and 2 <= d["n_iter"] < 50
    # fixed point of Eq. 32: re-selecting with the final model gives the same instances
    X = np.concatenate(bags)
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in bags])])
    np.testing.assert_array_equal(segment_argmax(m.instance_scores(X), offsets), m.rep_index_)
    # the final model is the exact ODM on the final representatives
    odm = ODM(lam=16.0, theta=0.6, mu=0.8, tol=1e-10).fit(m.representatives_, y)
    np.testing.assert_allclose(m.instance_scores(m.representatives_),
                               odm.decision_function(m.representatives_), atol=1e-5)
    assert d["dual_gap"] == pytest.approx(0.0, abs=1e-6)


def test_cycle_guard_stops_on_a_repeated_set(monkeypatch):
    import milbench.classifiers.miordm as mod
    bags, y = synthetic_mil(3)
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in bags])])
    A, B = offsets[:-1], offsets[1:] - 1          # first / last instance of every bag
    picks = iter([A, B, A, B, A, B])
    monkeypatch.setattr(mod, "segment_argmax", lambda s, off: next(picks).copy())
    m = MIORDM(random_state=0).fit(bags, y)
    # round 1 (means) -> A, round 2 (A) -> B, round 3 (B) -> A again: a 2-cycle, stop
    assert m.diagnostics_["n_iter"] == 3
    assert m.diagnostics_["stop"] == MIORDM.STOP_REASONS["cycle"]
    np.testing.assert_array_equal(m.rep_index_, B)   # the model of the last round solved


def test_keep_best_returns_the_lowest_objective_round():
    bags, y = synthetic_mil(3)
    last = MIORDM(random_state=0, keep="last").fit(bags, y)
    best = MIORDM(random_state=0, keep="best").fit(bags, y)
    assert last.history_ == pytest.approx(best.history_)
    assert best.diagnostics_["mil_objective"] == pytest.approx(min(best.history_))
    assert last.diagnostics_["mil_objective"] == pytest.approx(last.history_[-1])
    # the kept model's Eq. 8 value recomputed from its own bag scores
    d = best.decision_function(bags)
    m = np.where(y == 1, 1.0, -1.0) * d
    lam, th, mu = best.lam, best.theta, best.mu
    xi, eps = np.maximum(0, 1 - th - m), np.maximum(0, m - 1 - th)
    w2 = best.dual_coef_ @ kernel_matrix(best.representatives_, best.representatives_, "rbf",
                                         best.gamma_) @ best.dual_coef_
    assert 0.5 * w2 + lam / (len(y) * (1 - th) ** 2) * (xi @ xi + mu * eps @ eps) == \
        pytest.approx(min(best.history_), rel=1e-8)


def test_max_rounds_is_honoured():
    bags, y = synthetic_mil(3)
    for cap in (1, 2, 3):
        m = MIORDM(max_rounds=cap, random_state=0).fit(bags, y)
        assert m.diagnostics_["n_iter"] <= cap


def test_decision_is_max_instance_score_and_predict_is_sign():
    bags, y = synthetic_mil(4)
    m = MIORDM(random_state=0).fit(bags, y)
    dec = m.decision_function(bags)
    np.testing.assert_allclose(dec, [m.instance_scores(b).max() for b in bags])
    np.testing.assert_array_equal(m.predict(bags), (dec > 0).astype(int))
    assert (m.predict(bags) == y).mean() > 0.9
    test_bags, test_y = synthetic_mil(104)
    assert (m.predict(test_bags) == test_y).mean() > 0.9


def test_linear_kernel_scores_are_a_hyperplane():
    bags, y = synthetic_mil(5)
    m = MIORDM(kernel="linear", lam=4.0, random_state=0).fit(bags, y)
    w = (m.dual_coef_[:, None] * m.representatives_).sum(0)     # Eq. 23
    X = np.concatenate(bags)
    np.testing.assert_allclose(m.instance_scores(X), X @ w, atol=1e-9)


def test_accepts_bags_container_and_pm1_labels():
    bags, y = synthetic_mil(6)
    B = Bags.from_list(bags, y)
    a = MIORDM(random_state=0).fit(B, B.labels).decision_function(B)
    b = MIORDM(random_state=0).fit(bags, 2 * y - 1).decision_function(bags)
    np.testing.assert_allclose(a, b, atol=1e-5)     # float32 container vs float64 list


def test_clone_gridsearch_cross_validate_and_determinism():
    bags, y = synthetic_mil(7)
    est = MIORDM(random_state=0)
    c = clone(est)
    assert c.get_params() == est.get_params()
    gs = GridSearchCV(MIORDM(random_state=0), {"lam": [2.0, 64.0], "theta": [0.6, 0.8]},
                      cv=StratifiedKFold(3, shuffle=True, random_state=0)).fit(bags, y)
    assert gs.best_params_["lam"] in (2.0, 64.0)
    cv = cross_validate(MIORDM(random_state=0), bags, y, cv=3, scoring=["accuracy", "roc_auc"])
    assert cv["test_roc_auc"].mean() > 0.8
    d1 = MIORDM(random_state=3).fit(bags, y).decision_function(bags)
    d2 = MIORDM(random_state=3).fit(bags, y).decision_function(bags)
    np.testing.assert_array_equal(d1, d2)


def test_bad_parameters_raise():
    bags, y = synthetic_mil(8)
    for kw in ({"theta": 1.0}, {"lam": 0.0}, {"mu": -1.0}, {"kernel": "poly"},
               {"max_rounds": 0}, {"keep": "first"}):
        with pytest.raises(ValueError):
            MIORDM(**kw).fit(bags, y)


@pytest.mark.slow
@pytest.mark.parametrize("name,target", [("musk1", .759), ("musk2", .733), ("elephant", .796),
                                         ("fox", .583), ("tiger", .831)])
def test_real_data_accuracy_near_paper(name, target, shared_data):
    """5 stratified 80/20 splits, min-max scaling on training instances, λ=2⁸, θ=μ=0.7."""
    from milbench.data.folds import make_folds, split
    from milbench.data.sources import load_dataset
    from milbench.preprocessing import BagScaler
    bags = load_dataset(name, shared_data)
    folds = make_folds(bags.bag_ids, bags.labels, {"kind": "holdout", "train": 0.8,
                                                   "repeats": 5, "seed": 0})
    accs = []
    for r in range(5):
        tr, te, _ = split(folds, r, 0, bags.bag_ids)
        train, test = bags.subset(tr), bags.subset(te)
        sc = BagScaler("minmax").fit(train)
        m = MIORDM(lam=256.0, theta=0.7, mu=0.7, random_state=0).fit(sc.transform(train),
                                                                      train.labels)
        accs.append((m.predict(sc.transform(test)) == test.labels).mean())
    assert np.mean(accs) > target - 0.08


# ----------------------------------------------------------------------------- kernel reuse
@pytest.mark.parametrize("force", ["cap", "memory"])
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_precomputed_kernel_matches_per_round_kernel(fresh_cache, monkeypatch, force, kernel):
    import milbench.classifiers._representatives as mod
    bags, y = synthetic_mil(11)
    kw = dict(kernel=kernel, lam=64.0, gamma=0.1, random_state=0)   # γ unused by "linear"
    pre = MIORDM(**kw).fit(bags, y)
    assert len(fresh_cache) == 1                          # K([X; means]) computed once
    if force == "cap":
        monkeypatch.setattr(mod, "FULL_KERNEL_MAX_BYTES", 0)
    else:                                                 # room for the blocks, not for K
        N, n = sum(map(len, bags)), len(bags)
        monkeypatch.setattr(mod, "memory_limit", lambda: 8 * (3 * n * n + N * n) + 100)
    fresh_cache.clear()
    per = MIORDM(**kw).fit(bags, y)
    assert len(fresh_cache) == 0 and fresh_cache.misses == 0
    assert pre.diagnostics_["n_iter"] == per.diagnostics_["n_iter"] > 1
    np.testing.assert_array_equal(pre.rep_index_, per.rep_index_)
    np.testing.assert_allclose(pre.history_, per.history_, rtol=1e-12)
    test_bags, _ = synthetic_mil(111)
    np.testing.assert_allclose(pre.decision_function(test_bags), per.decision_function(test_bags),
                               rtol=0, atol=1e-12)


def test_grid_candidates_share_one_kernel_per_fold(fresh_cache):
    from milbench.utils.cache import disabled
    bags, y = synthetic_mil(12)
    grid = {"lam": [4.0, 64.0], "theta": [0.6, 0.8]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    cached = GridSearchCV(MIORDM(random_state=0), grid, cv=cv).fit(bags, y)
    assert (fresh_cache.misses, fresh_cache.hits) == (3 + 1, 3 * 3)  # per fold + refit
    with disabled(fresh_cache):
        plain = GridSearchCV(MIORDM(random_state=0), grid, cv=cv).fit(bags, y)
    assert fresh_cache.misses == 4
    np.testing.assert_array_equal(cached.cv_results_["mean_test_score"],
                                  plain.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(cached.decision_function(bags), plain.decision_function(bags))


def test_kernel_cache_is_keyed_by_content(fresh_cache):
    from milbench.utils.cache import disabled
    bags, y = synthetic_mil(13)
    first = MIORDM(random_state=0).fit(bags, y)
    again = MIORDM(random_state=0).fit([b.copy() for b in bags], y)   # new arrays, same data
    assert (fresh_cache.misses, fresh_cache.hits) == (1, 1)
    np.testing.assert_array_equal(first.decision_function(bags), again.decision_function(bags))
    changed = [b.copy() for b in bags]
    changed[0][0, 0] += 1e-9                                          # one value differs
    hit = MIORDM(random_state=0).fit(changed, y)
    assert fresh_cache.misses == 2
    with disabled(fresh_cache):
        ref = MIORDM(random_state=0).fit(changed, y)
    np.testing.assert_array_equal(hit.decision_function(bags), ref.decision_function(bags))
    MIORDM(random_state=0, gamma=0.5).fit(bags, y)                    # γ is part of the key
    assert fresh_cache.misses == 3
