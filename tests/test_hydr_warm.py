"""HyDR-MI warm starts: the DD family's (EM-DD, MIDD, MDD) and MILR's
warm-started subset fitness -- cold fits equal the reference refit, warm-start sources come
only from earlier generations of the same run, the selection is deterministic (also with
parallel scoring), and the default stays the paper's."""
from __future__ import annotations

import numpy as np
import pytest
from joblib import parallel_config
from test_hydr import _ga_bags, _ga_data

from milbench.classifiers.diverse_density import EMDD, MDD, MIDD, WarmDD, scaled_sq_dists
from milbench.classifiers.milr import MILR, WarmMILR, milr_loss_grad
from milbench.classifiers.simple import MISimple
from milbench.classifiers.warm import restrict
from milbench.selectors.hydr import (
    HyDRMI,
    RefitEvaluator,
    _CachedFitness,
    _inner_folds,
    fitness_evaluator,
)

EMDD_SMALL = dict(max_starts=6, max_em_iter=4, max_iter=30, random_state=0)
HYDR_SMALL = dict(percent=0.5, population_size=8, n_generations=3, n_seeds=2, inner_cv=2)


def _evaluators(clf, restarts=2):
    X, offsets, y = _ga_data()
    folds = _inner_folds(y, 3, 5)
    return (fitness_evaluator(clf, X, offsets, y, folds, warm_restarts=restarts),
            fitness_evaluator(clf, X, offsets, y, folds), X.shape[1])


GLOBAL_SMALL = dict(max_starts=6, max_iter=40, screen_iter=5, n_refine=3, random_state=0)
DD = [EMDD(**EMDD_SMALL), EMDD(**EMDD_SMALL, threshold="train", select="nldd"),
      MIDD(**GLOBAL_SMALL), MIDD(**GLOBAL_SMALL, threshold=0.5, bag_rule="noisy-or"),
      MDD(**GLOBAL_SMALL), MDD(**GLOBAL_SMALL, threshold="train")]


@pytest.mark.parametrize("clf", DD, ids=lambda c: f"{type(c).__name__}-{c.threshold}")
def test_warm_dd_cold_fit_equals_reference_refit(clf):
    warm, ref, d = _evaluators(clf)
    assert isinstance(warm, WarmDD) and isinstance(ref, RefitEvaluator)  # no exact hook
    rng = np.random.default_rng(0)
    for _ in range(4):
        cols = np.flatnonzero(rng.random(d) < 0.5)
        pred, (kept_cols, hyp) = warm.predict_warm(cols, None)
        np.testing.assert_array_equal(pred, ref.predict(cols))
        np.testing.assert_array_equal(kept_cols, cols)
        assert hyp.shape == (3, 2, len(cols))


@pytest.mark.parametrize("kw", [{"combine": "noisy-or"}, {"warm_start_si": True}])
def test_warm_milr_cold_fit_equals_reference_refit(kw):
    warm, ref, d = _evaluators(MILR(**kw))
    assert isinstance(warm, WarmMILR) and isinstance(ref, RefitEvaluator)
    rng = np.random.default_rng(1)
    for _ in range(4):
        cols = np.flatnonzero(rng.random(d) < 0.5)
        np.testing.assert_array_equal(warm.predict_warm(cols, None)[0], ref.predict(cols))


def test_warm_milr_reaches_the_cold_optimum_of_a_convex_loss():
    """combine="geometric": the L2-penalised loss is strictly convex in (w, b), so L-BFGS from
    the parent's restricted weights must reach the cold fit's minimum (the oracle)."""
    clf = MILR(combine="geometric", tol=1e-9)
    warm, _, _ = _evaluators(clf)
    parent, child = np.array([0, 1, 2, 3, 6, 9]), np.array([0, 1, 3, 6, 9, 11])
    _, source = warm.predict_warm(parent, None)
    pred_w, (_, w_warm) = warm.predict_warm(child, source)
    pred_c, (_, w_cold) = warm.predict_warm(child, None)
    for f, (Xt, ot, yt, *_rest) in enumerate(warm.folds):
        loss = [milr_loss_grad(w[f], Xt[:, child], ot, yt.astype(float), clf.C, clf.combine,
                               clf.alpha)[0] for w in (w_warm, w_cold)]
        assert loss[0] == pytest.approx(loss[1], rel=1e-9)
        np.testing.assert_allclose(w_warm[f], w_cold[f], atol=1e-4)
    np.testing.assert_array_equal(pred_w, pred_c)


def test_warm_start_restricts_the_source_and_never_ends_worse_than_it():
    """The warm start is the source's fitted hypothesis on the shared features (a dropped
    feature is dropped, a new one starts at a positive instance's value with scale_init), and
    EM only accepts improving steps: with ``select="nldd"`` the kept hypothesis' NLDD on each
    fold is at most that of the warm start itself."""
    clf = EMDD(**{**EMDD_SMALL, "select": "nldd"})
    warm, _, _ = _evaluators(clf, restarts=0)
    parent = np.array([0, 1, 2, 3, 6, 9])
    child = np.array([0, 1, 3, 6, 9, 11])                   # 2 dropped, 11 added
    _, source = warm.predict_warm(parent, None)
    _, (_, hyp) = warm.predict_warm(child, source)
    for f, (Xs_all, po, off, ypos, *_rest) in enumerate(warm.folds):
        Xs = Xs_all[:, child]
        a, c = warm._warm_start(source, f, child, Xs, po[-1])
        shared = np.isin(child, parent)
        np.testing.assert_array_equal(a[shared], source[1][f, 0, np.isin(parent, child)])
        np.testing.assert_array_equal(c[shared], source[1][f, 1, np.isin(parent, child)])
        assert a[~shared] == clf.scale_init and np.any(np.all(Xs[:po[-1], ~shared] == c[~shared],
                                                              axis=1))
        start = clf._estep(Xs, Xs * Xs, off, ypos, a[None], c[None])[1][0]
        kept = clf._estep(Xs, Xs * Xs, off, ypos, hyp[f, :1], hyp[f, 1:])[1][0]
        assert kept <= start


@pytest.mark.parametrize("cls", [MIDD, MDD])
def test_warm_global_dd_never_ends_worse_than_its_start(cls):
    """MIDD / MDD from the restricted source alone (no restarts): L-BFGS descends, so the kept
    hypothesis' whole-data NLDD on each fold is at most the warm start's."""
    clf = cls(**GLOBAL_SMALL)
    warm, _, _ = _evaluators(clf, restarts=0)
    parent, child = np.array([0, 1, 2, 3, 6, 9]), np.array([0, 1, 3, 6, 9, 11])
    _, source = warm.predict_warm(parent, None)
    _, (_, hyp) = warm.predict_warm(child, source)
    for f, (Xs_all, po, _, _, no, *_rest) in enumerate(warm.folds):
        Xs = Xs_all[:, child]
        a, c = warm._warm_start(source, f, child, Xs, po[-1])
        nldd = [clf._nldd(scaled_sq_dists(Xs, A[None], B[None]), po, no)[0][0]
                for A, B in ((a, c), (hyp[f, 0], hyp[f, 1]))]
        assert nldd[1] <= nldd[0]


def test_warm_sources_are_the_closest_chromosome_of_earlier_generations():
    """A recording warm evaluator: a chromosome's source is the state of the closest (Hamming;
    ties: fitter, then first) chromosome seen in an earlier call of the same run -- never one
    of its own generation -- and a new run starts cold."""
    class Recorder:
        def predict_warm(self, cols, source):
            calls.append((tuple(cols), source))
            return np.arange(6) % 2 == (len(cols) % 2), tuple(cols)   # fitness 1 or 0

    calls = []
    fit = _CachedFitness(Recorder(), np.arange(6) % 2, None, 1)
    rng = np.random.default_rng(3)
    gen0, gen1 = rng.random((6, 10)) < 0.5, rng.random((7, 10)) < 0.5
    f0 = fit(gen0)
    assert all(src is None for _, src in calls)           # first generation: cold
    calls.clear()
    fit(gen1)
    for cols, src in calls:
        mask = np.isin(np.arange(10), cols)
        dist = (gen0 != mask).sum(axis=1)
        best = np.lexsort((np.arange(6), -f0, dist))[0]
        assert src == tuple(np.flatnonzero(gen0[best]))
    assert fit.n_warm == len(calls) > 0
    fit.new_run()
    calls.clear()
    fit(rng.random((4, 10)) < 0.5)
    assert all(src is None for _, src in calls)


def test_hydr_warm_start_deterministic_and_parallel_independent():
    bags, y = _ga_bags()
    kw = dict(classifier=EMDD(**EMDD_SMALL), warm_start=True, random_state=0, **HYDR_SMALL)
    a = HyDRMI(**kw).fit(bags, y)
    b = HyDRMI(**kw).fit(bags, y)
    with parallel_config(backend="threading"):
        c = HyDRMI(n_jobs=2, **kw).fit(bags, y)
    assert a.diagnostics_["hydr_warm_start"] == 1 and a.diagnostics_["hydr_fast_fitness"] == 0
    assert 0 < a.diagnostics_["hydr_warm_evaluations"] < a.diagnostics_["hydr_evaluations"]
    for other in (b, c):
        np.testing.assert_array_equal(a.support_, other.support_)
        np.testing.assert_array_equal(a.fitness_history_, other.fitness_history_)
        np.testing.assert_array_equal(a.seed_subsets_[1], other.seed_subsets_[1])
        assert a.diagnostics_ == other.diagnostics_


def test_warm_start_off_by_default_and_ignored_without_a_hook():
    """Default: EM-DD is scored by the reference refit (the paper's fitness); warm_start=True
    changes nothing for a classifier without a warm hook (MI-Simple)."""
    assert HyDRMI().get_params()["warm_start"] is False
    _, ref, _ = _evaluators(EMDD(**EMDD_SMALL))
    assert isinstance(ref, RefitEvaluator)
    bags, y = _ga_bags()
    kw = dict(classifier=MISimple(estimator="tree"), random_state=0, **HYDR_SMALL)
    a = HyDRMI(**kw).fit(bags, y)
    b = HyDRMI(warm_start=True, **kw).fit(bags, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_array_equal(a.fitness_history_, b.fitness_history_)
    assert b.diagnostics_["hydr_warm_start"] == 0 and b.diagnostics_["hydr_fast_fitness"] == 1
    with pytest.raises(ValueError, match="warm_restarts"):
        HyDRMI(warm_start=True, warm_restarts=-1, **kw).fit(bags, y)


def test_restrict_carries_shared_columns_and_fills_new_ones():
    vals, shared = restrict([1, 4, 7], np.array([[10., 40., 70.], [1., 4., 7.]]), [0, 4, 7, 9],
                            fill=-1.0)
    np.testing.assert_array_equal(shared, [False, True, True, False])
    np.testing.assert_array_equal(vals, [[-1, 40, 70, -1], [-1, 4, 7, -1]])
