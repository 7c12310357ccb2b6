"""MIDR (midr.txt) and the LDA baseline: gradients, manifold geometry, closed forms, Fig. 2."""

import contextlib
import json

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from milbench.data.bags import Bags, stack
from milbench.data.folds import make_folds
from milbench.experiment.fold import build_estimator, caches_selector_fits, run_fold
from milbench.experiment.scoring import aggregate
from milbench.report.plots import make_figures
from milbench.selectors.lda import BagLDA
from milbench.selectors.midr import (
    MIDR,
    loss_grid,
    midr_objective,
    orthonormality_loss,
    qr_retraction,
    soft_threshold,
    sparsity_loss,
    tangent_projection,
)


def random_bags(n_bags=12, d=6, seed=0):
    rng = np.random.default_rng(seed)
    bags = [rng.normal(size=(rng.integers(1, 6), d)) for _ in range(n_bags)]
    y = np.arange(n_bags) % 2
    for b, lab in zip(bags, y):
        if lab:
            b[0, 0] += 2.0
    return bags, y


def figure2_bags(n_pos=10, n_neg=10, n_inst=10, seed=0):
    """2-D set in the spirit of midr.txt Fig. 1–2: every positive bag holds one key instance
    (at y ≈ 3) among negatives that sit at x ≈ 1.5; negative bags are spread along x and hold
    one negative at x ≈ 3.  Bag labels are explained only by the y direction; labelling every
    instance with its bag's label pulls LDA towards x."""
    rng = np.random.default_rng(seed)
    bags, labels, key = [], [], []
    for i in range(n_pos + n_neg):
        pos = i < n_pos
        if pos:
            X = np.column_stack([rng.normal(1.5, 0.5, n_inst), rng.normal(0, 0.3, n_inst)])
            X[0] = [rng.normal(0, 0.3), rng.normal(3.0, 0.3)]
        else:
            X = np.column_stack([rng.normal(0, 1.0, n_inst), rng.normal(0, 0.3, n_inst)])
            X[0] = [rng.normal(3.0, 0.3), rng.normal(0, 0.3)]
        k = np.zeros(n_inst, bool)
        k[0] = pos
        bags.append(X)
        labels.append(int(pos))
        key.append(k)
    return bags, np.array(labels), np.concatenate(key)


# -- objective and gradients --------------------------------------------------------------
@pytest.mark.parametrize("C1,C2,v_l2", [(0.1, 0.5, 0.0), (0.0, 2.0, 0.3)])
def test_gradient_matches_finite_differences(C1, C2, v_l2):
    bags, y = random_bags()
    X, offsets = stack(bags)
    rng = np.random.default_rng(1)
    D, d = X.shape[1], 3
    A = qr_retraction(rng.normal(size=(D, d)))
    H = soft_threshold(A + 0.1 * rng.normal(size=A.shape), 0.05)
    v, b = rng.normal(size=d), 0.3
    args = (X, offsets, y.astype(float), C1, C2, 3.5, v_l2)
    F, gA, gv, gb = midr_objective(A, v, b, H, *args)
    eps = 1e-6
    num_A = np.zeros_like(A)
    for idx in np.ndindex(*A.shape):
        E = np.zeros_like(A)
        E[idx] = eps
        num_A[idx] = (midr_objective(A + E, v, b, H, *args)[0]
                      - midr_objective(A - E, v, b, H, *args)[0]) / (2 * eps)
    num_v = np.array([(midr_objective(A, v + eps * e, b, H, *args)[0]
                       - midr_objective(A, v - eps * e, b, H, *args)[0]) / (2 * eps)
                      for e in np.eye(d)])
    num_b = (midr_objective(A, v, b + eps, H, *args)[0]
             - midr_objective(A, v, b - eps, H, *args)[0]) / (2 * eps)
    np.testing.assert_allclose(gA, num_A, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gv, num_v, rtol=1e-5, atol=1e-7)
    assert gb == pytest.approx(num_b, rel=1e-5, abs=1e-7)
    # the objective is what the docstring says
    from scipy.special import expit
    P = []
    for Xi in bags:
        p = expit(Xi @ A @ v + b)
        P.append((p * np.exp(3.5 * p)).sum() / np.exp(3.5 * p).sum())
    ref = ((np.array(P) - y) ** 2).sum() + C2 / 2 * ((A - H) ** 2).sum() \
        + C1 * np.abs(H).sum() + v_l2 / 2 * v @ v
    assert F == pytest.approx(ref, rel=1e-12)


def test_tangent_projection_idempotent_and_tangent():
    rng = np.random.default_rng(0)
    A = qr_retraction(rng.normal(size=(9, 4)))
    Z = rng.normal(size=(9, 4))
    X = tangent_projection(A, Z)
    np.testing.assert_allclose(tangent_projection(A, X), X, atol=1e-12)
    np.testing.assert_allclose(X.T @ A + A.T @ X, 0, atol=1e-12)
    # the paper's written form A(AᵀZ − ZᵀA)/2 + (I − AAᵀ)Z
    ref = A @ (A.T @ Z - Z.T @ A) / 2 + (np.eye(9) - A @ A.T) @ Z
    np.testing.assert_allclose(X, ref, atol=1e-12)
    # orthogonal projection: the residual is orthogonal to the tangent space
    W = tangent_projection(A, rng.normal(size=(9, 4)))
    assert abs(np.sum((Z - X) * W)) < 1e-10


def test_orthonormality_held_after_many_steps_and_objective_monotone():
    bags, y = random_bags(n_bags=30, d=10, seed=3)
    m = MIDR(dims=4, C1=0.05, C2=0.5, max_iter=300, tol=0.0, v_l2=0.01).fit(bags, y)
    assert m.n_iter_ == 300
    assert np.max(m.orthonormality_history_) < 1e-8
    A = m.A_
    assert np.linalg.norm(A.T @ A - np.eye(4)) < 1e-8
    h = m.objective_history_
    assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1]))  # block descent never goes up
    assert h[-1] < h[1]  # and it did move
    A0 = MIDR(dims=4, max_iter=0).fit(bags, y).A_
    assert np.linalg.norm(A0 @ A0.T - A @ A.T) > 1e-3


def test_soft_threshold_closed_form():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(7, 5))
    t = 0.4
    H = soft_threshold(A, t)
    ref = np.where(A > t, A - t, np.where(A < -t, A + t, 0.0))  # Eq. 12 case by case
    np.testing.assert_array_equal(H, ref)
    # and it is the minimiser of (a − h)² + 2t|h| (brute force on a fine grid)
    grid = np.linspace(-4, 4, 80001)
    for a in A.ravel()[:10]:
        h_best = grid[np.argmin((a - grid) ** 2 + 2 * t * np.abs(grid))]
        assert abs(h_best - soft_threshold(np.array([a]), t)[0]) < 2e-4


def test_losses_of_orthonormality_and_sparsity():
    H = np.array([[1.0, 0.0], [0.0, 0.5], [0.0, 0.0]])
    assert orthonormality_loss(H) == pytest.approx(0.75)
    assert sparsity_loss(H) == pytest.approx(1.5)


# -- Figure 2: MIDR finds the key-instance direction, LDA does not ------------------------
def test_figure2_midr_separates_key_instance_lda_does_not():
    bags, y, key = figure2_bags(seed=0)

    def gap(z):
        """min key score − max non-key score in the better orientation (> 0: separated)."""
        z = z if roc_auc_score(key, z) >= 0.5 else -z
        return z[key].min() - z[~key].max(), roc_auc_score(key, z)

    z_midr = np.concatenate(MIDR(dims=1, C1=1e-4, C2=1.0).fit(bags, y).transform(bags)).ravel()
    z_lda = np.concatenate(BagLDA().fit(bags, y).transform(bags)).ravel()
    g_midr, auc_midr = gap(z_midr)
    g_lda, auc_lda = gap(z_lda)
    assert g_midr > 0 and auc_midr == 1.0
    assert g_lda < 0 and auc_lda < 0.98


# -- estimator contract -------------------------------------------------------------------
def test_contract_and_reproducibility():
    bags, y = random_bags(n_bags=20, d=8)
    m = MIDR(dims=0.5, init="random", random_state=7, max_iter=20)
    c = clone(m)
    assert c.get_params() == m.get_params()
    Z1 = np.concatenate(m.fit(bags, y).transform(bags))
    Z2 = np.concatenate(c.fit(bags, y).transform(bags))
    np.testing.assert_array_equal(Z1, Z2)
    assert Z1.shape == (sum(len(b) for b in bags), 4)
    Z3 = np.concatenate(MIDR(dims=0.5, init="random", random_state=8, max_iter=20)
                        .fit(bags, y).transform(bags))
    assert not np.allclose(Z1, Z3)
    # Bags in -> Bags out, labels ±1 accepted, integer dims
    B = Bags.from_list(bags, y)
    out = MIDR(dims=3, max_iter=5).fit(B, 2 * y - 1).transform(B)
    assert isinstance(out, Bags) and out.n_features == 3
    dg = m.diagnostics_
    for k in ("midr_objective", "n_iter", "orthonormality_loss", "sparsity_loss",
              "midr_seconds"):
        assert np.isfinite(dg[k])
    # project="H" uses the sparse matrix
    mh = MIDR(dims=3, C1=0.3, C2=1.0, project="H", max_iter=10).fit(bags, y)
    np.testing.assert_array_equal(mh.components_, mh.H_)
    assert (mh.H_ == 0).any()
    with pytest.raises(ValueError):
        MIDR(project="B").fit(bags, y)
    for bad in ({"stop": "relative"}, {"line_search": "H"}):
        with pytest.raises(ValueError):
            MIDR(**bad).fit(bags, y)


def test_pipeline_grid_search_on_list_of_bags():
    from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
    from sklearn.pipeline import Pipeline

    from milbench.classifiers.milr import MILR
    bags, y = random_bags(n_bags=24, d=6, seed=2)
    pipe = Pipeline([("sel", MIDR(dims=2, max_iter=10)), ("clf", MILR())])
    gs = GridSearchCV(pipe, {"sel__C1": [1e-3, 1e-1]}, cv=StratifiedKFold(3), scoring="roc_auc")
    res = cross_validate(gs, bags, y, cv=StratifiedKFold(3), scoring="roc_auc")
    assert np.isfinite(res["test_score"]).all()


def test_lda_is_sklearn_lda_on_inherited_labels():
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    bags, y = random_bags(n_bags=16, d=5)
    X, offsets = stack(bags)
    ref = LinearDiscriminantAnalysis(n_components=1).fit(X, np.repeat(y, np.diff(offsets)))
    Z = np.concatenate(BagLDA().fit(bags, y).transform(bags))
    assert Z.shape == (len(X), 1)
    np.testing.assert_allclose(Z, ref.transform(X))


def test_loss_grid_follows_figures_4_5():
    bags, y = random_bags(n_bags=20, d=8)
    df = loss_grid(bags, y, C1_values=[1e-3, 1e-1], C2_values=[1e-2, 1.0, 1e2],
                   dims=3, max_iter=30)
    assert len(df) == 6
    for C1, g in df.groupby("C1"):
        g = g.sort_values("C2")
        # larger C2 -> H closer to the orthonormal A (Fig. 4), less thresholding (Fig. 5)
        assert g.orthonormality_loss.is_monotonic_decreasing
        assert g.sparsity_loss.iloc[-1] > g.sparsity_loss.iloc[0]
    # threshold C1/C2 >= max|A_ij| (Eq. 12): H = 0, so ‖HᵀH − I‖ = √d and Σ|H| = 0
    row = df[(df.C1 == 1e-1) & (df.C2 == 1e-2)].iloc[0]
    assert row.sparsity_loss == 0 and row.orthonormality_loss == pytest.approx(np.sqrt(3))


def test_fit_diagnostics_become_score_columns_for_figures_4_5(tmp_path):
    """run_fold -> aggregate gives diag.select.* columns (the midr-losses heat maps)."""
    bags = Bags.from_list(*random_bags(n_bags=20, d=8))
    folds = make_folds(bags.bag_ids, bags.labels, {"kind": "kfold", "folds": 2, "repeats": 1,
                                                   "seed": 0})
    files = []
    for C2 in (1e-2, 1e2):
        method = {"selector": {"name": "midr", "dims": 3, "C1": 0.1, "C2": C2, "max_iter": 20},
                  "classifier": {"name": "milr"}}
        for fold in (0, 1):
            files.append(tmp_path / f"{C2}_{fold}.parquet")
            run_fold(bags, folds, method, experiment="e", dataset="d", scale="minmax", repeat=0,
                     fold=fold).to_parquet(files[-1])
    scores = aggregate(files)
    np.testing.assert_allclose(scores["diag.select.orthonormality_loss"],
                               [json.loads(d)["select.orthonormality_loss"]
                                for d in scores["diagnostics"]])
    # threshold C1/C2 = 10 > max|A_ij|: H = 0, so ‖HᵀH − I‖ = √3 (Eq. 12)
    np.testing.assert_allclose(scores.loc[scores["sel.C2"] == 1e-2,
                                          "diag.select.orthonormality_loss"], np.sqrt(3))
    assert (scores.loc[scores["sel.C2"] == 1e2, "diag.select.sparsity_loss"] > 0).all()
    paths = make_figures(scores, [{"kind": "heatmap", "metric": "diag.select.sparsity_loss",
                                   "x": "sel.C1", "y": "sel.C2"}], tmp_path / "fig")
    assert [p.suffix for p in paths] == [".png", ".svg"]


def test_inner_cv_caches_selector_fits_with_identical_results(monkeypatch, tmp_path,
                                                               reuse_on):
    """MIDR's C1 joined with MILR's C: MIDR reuses its own fits in-process (no joblib cache), so
    it is solved once per inner fold and C1 (plus the refit), not once per MILR C too, and the
    search scores and picks exactly as without reuse."""
    from milbench.selectors.midr import FIT_CACHE, fits_not_reused
    bags = Bags.from_list(*random_bags(n_bags=30, d=6))
    sel = {"name": "midr", "dims": 2, "max_iter": 10, "tune": {"C1": [1e-3, 1e-1]}}
    clf = {"name": "milr", "tune": {"C": [0.1, 1.0, 10.0]}}
    assert not caches_selector_fits(sel, clf)     # in-process reuse instead of Pipeline(memory=)
    assert caches_selector_fits({"name": "pca", "dims": 2}, clf)
    assert not caches_selector_fits({"name": "none"}, clf)
    solves, solve = [], MIDR._solve
    monkeypatch.setattr(MIDR, "_solve", lambda self, *a: solves.append(1) or solve(self, *a))
    results = []
    for reuse in (False, True):
        solves.clear()
        FIT_CACHE.clear()
        with (fits_not_reused() if not reuse else contextlib.nullcontext()):
            est = build_estimator("minmax", sel, clf, inner_folds=3)
            est.fit(bags, bags.labels)
        results.append((len(solves), est.best_params_, est.cv_results_["mean_test_score"],
                        est.best_estimator_["select"].A_))
    assert results[0][0] == 2 * 3 * 3 + 1 and results[1][0] == 2 * 3 + 1
    assert results[0][1] == results[1][1]
    np.testing.assert_array_equal(results[0][2], results[1][2])
    np.testing.assert_array_equal(results[0][3], results[1][3])


def _fitted_state(m):
    return (m.A_, m.H_, m.coef_, m.intercept_, m.mean_, m.objective_history_,
            m.orthonormality_history_, m.n_iter_,
            {k: v for k, v in m.diagnostics_.items() if k != "midr_seconds"})


def _assert_same_fit(a, b):
    for x, y in zip(_fitted_state(a), _fitted_state(b)):
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y


@pytest.mark.parametrize("stop", ["total", "excess"])
def test_reused_fit_is_the_fresh_fit(stop, reuse_on):
    """Every grid point fitted with reuse equals its fresh fit bit for bit (A, H, v, b, the
    objective history, diagnostics); the points whose H stays ≡ 0 (C1 ≥ C2 here) share one fit
    per C2 (stop="total") or one fit in all (stop="excess")."""
    from milbench.selectors.midr import FIT_CACHE, fits_not_reused
    bags, y = random_bags(n_bags=30, d=8, seed=4)
    grid = [1e-3, 1e-1, 1.0, 10.0]
    FIT_CACHE.clear()
    solves, solve = [], MIDR._solve
    MIDR._solve = lambda self, *a: solves.append(1) or solve(self, *a)
    try:
        for C2 in grid:
            for C1 in grid:
                kw = dict(dims=3, C1=C1, C2=C2, max_iter=15, stop=stop)
                reused = MIDR(**kw).fit(bags, y)
                with fits_not_reused():
                    fresh = MIDR(**kw).fit(bags, y)
                _assert_same_fit(reused, fresh)
                if C1 >= C2:
                    assert not reused.H_.any()
    finally:
        MIDR._solve = solve
    n_fresh, n_reused = len(grid) ** 2, len(solves) - len(grid) ** 2
    n_upper = sum(C1 < C2 for C1 in grid for C2 in grid)       # H ≢ 0 possible
    assert n_reused <= n_upper + (len(grid) if stop == "total" else 1)
    assert n_reused < n_fresh


def test_excess_stop_rule_ignores_the_constant():
    """With H ≡ 0 (C1 ≥ C2) the C2 term is the constant C2·d/2: stop="excess" gives the same A
    for every C2, stop="total" stops earlier the larger C2 is (the constant dilutes the relative
    decrease)."""
    from milbench.selectors.midr import fits_not_reused
    bags, y = random_bags(n_bags=30, d=8, seed=5)
    with fits_not_reused():
        ex = [MIDR(dims=3, C1=1e4, C2=C2, stop="excess").fit(bags, y) for C2 in (1e-2, 1e2)]
        tot = [MIDR(dims=3, C1=1e4, C2=C2, stop="total").fit(bags, y) for C2 in (1e-2, 1e2)]
    np.testing.assert_array_equal(ex[0].A_, ex[1].A_)
    assert ex[0].n_iter_ == ex[1].n_iter_
    assert tot[1].n_iter_ < tot[0].n_iter_
    h = ex[1].objective_history_                     # the reported F keeps its constant
    assert h[-1] > 1e2 * 3 / 2


# -- real data (slow) -----------------------------------------------------------------------
@pytest.mark.slow
def test_musk1_midr_beats_lda_as_in_table1(shared_data):
    """1 x 5-fold on musk1, fixed C1, C2 and MILR C.  Paper Table 1: MIDR 0.946, LDA 0.791; we
    reproduce LDA's gap but not MIDR's gain over ORI/PCA (see the report), so the check is
    MIDR > 0.85 and MIDR − LDA > 0.05."""
    from sklearn.model_selection import StratifiedKFold

    from milbench.classifiers.milr import MILR
    from milbench.data.sources import load_dataset
    bags = load_dataset("musk1", shared_data)
    aucs = {"midr": [], "lda": []}
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(bags.labels, bags.labels):
        btr, bte = bags.subset(tr), bags.subset(te)
        lo, hi = btr.instances.min(0), btr.instances.max(0)
        scale = np.where(hi > lo, hi - lo, 1.0)
        btr = btr.with_instances((btr.instances - lo) / scale)
        bte = bte.with_instances((bte.instances - lo) / scale)
        for key, sel in (("midr", MIDR(dims=0.3, C1=1e-3, C2=1.0)), ("lda", BagLDA())):
            sel.fit(btr, btr.labels)
            clf = MILR(C=1.0).fit(sel.transform(btr), btr.labels)
            aucs[key].append(roc_auc_score(bte.labels, clf.decision_function(sel.transform(bte))))
    assert np.mean(aucs["midr"]) > 0.85
    assert np.mean(aucs["midr"]) - np.mean(aucs["lda"]) > 0.05


def test_musk1_inner_cv_rows_with_reuse_equal_the_full_grid(shared_data, reuse_on):
    """musk1, a 3 x 3 C1 x C2 grid (C1 ≥ C2 and C1 < C2 points) joined with MILR's C: with fits
    reused (6 distinct MIDR fits per inner fold instead of 9 x 2, and MILR fitted once per
    distinct projection and C: 6 x 2 instead of 9 x 2) cv_results_ and the chosen point equal
    those of fitting every grid point afresh."""
    from milbench.classifiers import milr
    from milbench.data.sources import load_dataset
    from milbench.selectors.midr import FIT_CACHE, fits_not_reused
    bags = load_dataset("musk1", shared_data)
    grid = [1e-3, 1e-1, 10.0]
    sel = {"name": "midr", "dims": 0.05, "max_iter": 8, "tune": {"C1": grid, "C2": grid}}
    clf = {"name": "milr", "tune": {"C": [0.1, 10.0]}}
    solves, solve = [], MIDR._solve
    MIDR._solve = lambda self, *a: solves.append(1) or solve(self, *a)
    milr_solves, milr_solve = [], milr.MILR._solve
    milr.MILR._solve = lambda self, *a: milr_solves.append(1) or milr_solve(self, *a)
    out = []
    try:
        for reuse in (False, True):
            solves.clear()
            milr_solves.clear()
            FIT_CACHE.clear()
            milr.FIT_CACHE.clear()
            with contextlib.ExitStack() as stack:
                if not reuse:
                    stack.enter_context(fits_not_reused())
                    stack.enter_context(milr.FIT_CACHE.disabled())
                est = build_estimator("minmax", sel, clf, inner_folds=3, inner_metric="auroc")
                est.fit(bags, bags.labels)
            out.append((len(solves), len(milr_solves), est))
    finally:
        MIDR._solve = solve
        milr.MILR._solve = milr_solve
    (n_full, n_milr_full, full), (n_reused, n_milr_reused, reused) = out
    assert n_full == n_milr_full == 9 * 2 * 3 + 1
    assert n_reused <= 6 * 3 + 1          # C1 ≥ C2: one fit per C2 (3), C1 < C2: 3 more
    assert n_milr_reused <= 6 * 2 * 3 + 1
    assert full.best_params_ == reused.best_params_
    for k, v in full.cv_results_.items():
        if "time" not in k:
            np.testing.assert_array_equal(np.asarray(v), np.asarray(reused.cv_results_[k]),
                                          err_msg=k)


def test_line_search_on_F_converges_where_psi_crawls_at_large_C2():
    """C2 = 1e4 ≫ the loss's curvature, C1/C2 = 1e-8: backtracking on ψ (H fixed) anchors A to
    the lagging H, γ ≈ 1/C2 and the fit ends at max_iter far from the optimum; backtracking on
    F(A, soft(A)) reaches a lower objective in a few dozen steps, as does C2 = 100.  Both
    descend monotonically and keep A orthonormal."""
    from milbench.selectors.midr import fits_not_reused
    bags, y = random_bags(n_bags=40, d=10, seed=3)
    with fits_not_reused():
        fits = {(C2, ls): MIDR(dims=4, C1=1e-4, C2=C2, stop="excess", line_search=ls,
                               v_l2=0.01).fit(bags, y)
                for C2 in (1e2, 1e4) for ls in ("psi", "F")}
    for m in fits.values():
        h = m.objective_history_
        assert np.all(np.diff(h) <= 1e-9 * np.abs(h[:-1]))
        assert m.diagnostics_["A_orthonormality_error"] < 1e-10
    psi, F = fits[1e4, "psi"], fits[1e4, "F"]
    assert psi.n_iter_ == 100 and not psi.diagnostics_["converged"]
    assert F.n_iter_ < 50 and F.diagnostics_["converged"]
    assert F.objective_history_[-1] < 0.7 * psi.objective_history_[-1]
    assert F.objective_history_[-1] <= fits[1e2, "psi"].objective_history_[-1] + 1e-6


def test_fit_cache_is_bounded_and_least_recently_used_first_out():
    from milbench.selectors.midr import FitCache
    state = lambda: {"A": np.zeros((10, 10)), "amax": 0.5}     # 800 bytes
    c = FitCache(max_bytes=2000)
    key = ("data",)

    def slot(C1, C2):
        return MIDR.shared_fit_slot({"C1": C1, "C2": C2, "stop": "total"})

    for C1 in (1e-3, 1e-2):
        c.store(key, slot(C1, 1.0), C1, 1.0, state())
    assert c.lookup(key, slot(1e-3, 1.0), 1e-3, 1.0, "total") is not None   # now the most recent
    c.store(key, slot(1e-1, 1.0), 1e-1, 1.0, state())          # evicts (1e-2, 1)
    assert len(c) == 2 and c.nbytes <= 2000
    assert c.lookup(key, slot(1e-2, 1.0), 1e-2, 1.0, "total") is None
    assert c.lookup(key, slot(1e-3, 1.0), 1e-3, 1.0, "total") is not None
    # an H ≡ 0 fit (amax ≤ C1/C2) serves another C1 ≥ C2 of the same C2, not another C2
    c.store(key, slot(2.0, 1.0), 2.0, 1.0, state())
    assert c.lookup(key, slot(5.0, 1.0), 5.0, 1.0, "total") is not None
    assert c.lookup(key, slot(5.0, 2.0), 5.0, 2.0, "total") is None
    assert (c.hits, c.misses) == (3, 2)
