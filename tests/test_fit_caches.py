"""Every cached estimator against :mod:`milbench.utils.cache`: a key that follows
``get_params()`` (every parameter not in the class's ``cache_ignores`` misses; every ignored one
leaves the fit as a fresh one gives it), hits equal to fresh fits, nothing cached outside
``reuse()``, and the runner and the planner switching reuse on."""
from __future__ import annotations

import multiprocessing as mp
import warnings

import numpy as np
import pytest

from milbench.classifiers import lcmf, milr, milsd
from milbench.classifiers.citation_knn import CitationKNN
from milbench.classifiers.lcmf import LCMF
from milbench.classifiers.milr import MILR
from milbench.classifiers.milsd import MILSD
from milbench.selectors import midr
from milbench.selectors.midr import MIDR
from milbench.utils import cache as C
from milbench.utils.cache import CACHE, ReusesFits, reuse, reusing

from conftest import toy_bags
from test_lcmf import graph_bags


def _midr_result(m, X):
    return [np.vstack(m.transform(X)), m.A_, m.H_, m.coef_, np.asarray(m.intercept_),
            m.objective_history_, m.orthonormality_history_, np.asarray(m.n_iter_)]


def _clf_result(m, X):
    out = [m.decision_function(X)]
    for name in ("coef_", "intercept_", "Z_train_"):
        if hasattr(m, name):
            out.append(np.asarray(getattr(m, name)))
    return out


# class -> (its cache, base parameters, one valid other value per parameter, data, result)
CASES = {
    MILR: (milr.FIT_CACHE, {"C": 1.0, "max_iter": 40},
           {"C": 2.0, "combine": "noisy-or", "alpha": 2.0, "fit_intercept": False,
            "max_iter": 20, "tol": 1e-3, "warm_start_si": True},
           lambda: toy_bags(n_bags=20, d=3, seed=1), _clf_result),
    # C1 = C2: H ≡ 0, the fit shared by every C1 ≥ C2 (and with stop="excess" every C2)
    MIDR: (midr.FIT_CACHE, {"dims": 2, "C1": 1.0, "C2": 1.0, "max_iter": 6, "stop": "excess",
                            "random_state": 0},
           {"dims": 3, "C1": 4.0, "C2": 0.5, "alpha": 2.0, "project": "H", "init": "random",
            "v_l2": 0.2, "max_iter": 4, "tol": 1e-3, "v_max_iter": 5, "stop": "total",
            "line_search": "F", "random_state": 1},
           lambda: toy_bags(n_bags=20, d=5, seed=2), _midr_result),
    LCMF: (lcmf.FACTOR_CACHE, {"n_factors": 4, "max_iter": 20, "random_state": 0},
           {"n_factors": 3, "alpha": 0.5, "gamma": 0.2, "beta": 0.2, "svm_C": 2.0,
            "max_iter": 10, "random_state": 1},
           lambda: graph_bags(n=24, seed=3), _clf_result),
    MILSD: (milsd.SETUP_CACHE, {"C": 1.0, "mu": 0.1, "max_cccp": 4},
            {"C": 2.0, "mu": 0.3, "graph": "both", "eps1": 1e-2, "eps2": 1e-2, "tol": 1e-2,
             "max_cccp": 3, "max_cp": 30, "degree": "total", "bias": 2.0, "scaling": "sum",
             "solver": "cd", "qp_gap": 0.1, "warm_C": True, "random_state": 1},
            lambda: graph_bags(n=24, seed=4), _clf_result),
}


def _fit(cls, kw, data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # capped iterations on purpose: small fits
        return cls(**kw).fit(X, y)


def _assert_same(a, b, result, X):
    for u, v in zip(result(a, X), result(b, X), strict=True):
        np.testing.assert_array_equal(u, v)


def test_every_cached_estimator_is_covered():
    """A new class that reuses its fits needs its row in CASES."""
    def subclasses(cls):
        return {cls, *[s for c in cls.__subclasses__() for s in subclasses(c)]}
    library = {c for c in subclasses(ReusesFits) if c.__module__.startswith("milbench.")}
    assert library - {ReusesFits} == set(CASES)


@pytest.mark.parametrize("cls", list(CASES), ids=lambda c: c.__name__)
def test_alternatives_cover_every_parameter(cls):
    cache, base, alt, _, _ = CASES[cls]
    params = cls().get_params()
    assert set(alt) == set(params)
    assert set(cls.cache_ignores) <= set(params)
    for p, v in alt.items():
        assert v != {**params, **base}[p], p


@pytest.mark.parametrize("cls,param", [(c, p) for c in CASES for p in CASES[c][2]],
                         ids=lambda x: x if isinstance(x, str) else x.__name__)
def test_each_parameter_misses_or_is_ignored_and_the_fit_is_the_fresh_one(cls, param):
    """With the base setting's fit cached, changing one parameter misses when the key holds it
    (not in ``cache_ignores``); when it is ignored the cached result serves the new setting (a
    hit), and either way the model equals the fresh fit without reuse bit for bit."""
    cache, base, alt, data, result = CASES[cls]
    data = data()
    kw = {**base, param: alt[param]}
    with reuse():
        cache.clear()
        _fit(cls, base, data)
        assert (cache.hits, cache.misses) == (0, 1)
        reused = _fit(cls, kw, data)
    fresh = _fit(cls, kw, data)                     # reuse off: computed afresh
    _assert_same(reused, fresh, result, data[0])
    if param in cls.cache_ignores:
        assert (cache.hits, cache.misses) == (1, 1), f"{param} is ignored: the fit is shared"
    else:
        assert (cache.hits, cache.misses) == (0, 2), f"{param} is not in the key"


@pytest.mark.parametrize("cls", list(CASES), ids=lambda c: c.__name__)
def test_a_hit_returns_the_fresh_model_and_a_plain_fit_touches_no_cache(cls):
    cache, base, _, data, result = CASES[cls]
    data = data()
    for c in list(C._CACHES):
        c.clear()
    assert not reusing()
    fresh = _fit(cls, base, data)
    assert C.cached_bytes() == 0 and all(c.hits == c.misses == 0 for c in C._CACHES)
    with reuse():
        first = _fit(cls, base, data)
        again = _fit(cls, base, data)
    assert (cache.hits, cache.misses) == (1, 1)
    for m in (first, again):
        _assert_same(m, fresh, result, data[0])
    _fit(cls, base, data)                           # reuse off again: nothing read or written
    assert (cache.hits, cache.misses) == (1, 1)
    cache.clear()


def test_a_parameter_added_by_a_subclass_is_part_of_the_key():
    """No list of the parameters a key holds: a subclass's extra parameter misses by itself."""
    class Started(MILR):
        def __init__(self, C=1.0, combine="softmax", alpha=3.5, fit_intercept=True,
                     max_iter=1000, tol=1e-6, warm_start_si=False, start=0.0):
            super().__init__(C, combine, alpha, fit_intercept, max_iter, tol, warm_start_si)
            self.start = start

        def _theta0(self, X, offsets, y):
            return super()._theta0(X, offsets, y) + self.start

    X, y = toy_bags(n_bags=20, d=3, seed=5)
    with reuse():
        milr.FIT_CACHE.clear()
        Started(max_iter=5).fit(X, y)
        moved = Started(max_iter=5, start=0.5).fit(X, y)
        assert (milr.FIT_CACHE.hits, milr.FIT_CACHE.misses) == (0, 2)
        MILR(max_iter=5).fit(X, y)                    # another class: its own key
        assert milr.FIT_CACHE.misses == 3
    fresh = Started(max_iter=5, start=0.5).fit(X, y)
    np.testing.assert_array_equal(moved.coef_, fresh.coef_)
    milr.FIT_CACHE.clear()


def test_midr_shared_fit_slot_is_the_one_rule_the_planner_counts():
    from milbench.experiment.plan import selector_fit_slot
    grid = {"C1": [1.0], "C2": [1.0]}
    slot = selector_fit_slot({"name": "midr", "stop": "excess", "tune": grid})
    assert slot({"C1": 10.0, "C2": 1.0}) == slot({"C1": 1.0, "C2": 0.1}) == ("H0",)
    assert slot({"C1": 0.1, "C2": 1.0}) == (("C1", 0.1), ("C2", 1.0))
    total = selector_fit_slot({"name": "midr", "tune": grid})
    assert total({"C1": 10.0, "C2": 1.0}) == MIDR.shared_fit_slot(
        {"C1": 10.0, "C2": 1.0, "stop": "total"}) == ("H0", 1.0)


def test_kernel_cache_user_hits_only_where_its_tables_are_the_same():
    """Citation-kNN keeps its bag-distance tables in CACHE (keyed by the data and the metric):
    every other parameter hits, and every setting fits as it does without reuse."""
    X, y = toy_bags(n_bags=20, d=3, seed=6)
    alt = {"references": 3, "citers": 2, "metric": "avg"}
    for param, value in alt.items():
        with reuse():
            CACHE.clear()
            CitationKNN().fit(X, y).decision_function(X)
            reused = CitationKNN(**{param: value}).fit(X, y).decision_function(X)
            assert (CACHE.misses > 2) == (param == "metric"), param
        fresh = CitationKNN(**{param: value}).fit(X, y).decision_function(X)
        np.testing.assert_array_equal(reused, fresh)
    CACHE.clear()


def test_all_caches_together_stay_within_the_total_bound():
    """The least recently used entry over every cache goes first when the total is full."""
    was = C.total_max_bytes()
    a, b = C.LRUCache(10_000), C.LRUCache(10_000)
    try:
        C.set_total_max_bytes(3 * 800)
        with reuse():
            a.get("a1", lambda: np.zeros(100))
            b.get("b1", lambda: np.zeros(100))
            a.get("a1", lambda: None)                    # a1 is now more recent than b1
            a.get("a2", lambda: np.zeros(100))
            b.get("b2", lambda: np.zeros(100))           # evicts b1, not a1
        assert (len(a), len(b)) == (2, 1) and b.peek("b1") is None
        assert C.cached_bytes() <= 3 * 800
    finally:
        C.set_total_max_bytes(was)


def _cell_state(cell):
    state = (reusing(), len(CACHE), len(lcmf.FACTOR_CACHE))
    CACHE.put(("cell", cell), np.zeros(4))
    lcmf.FACTOR_CACHE.put(("cell", cell), (np.zeros(1),) * 3 + (type("R", (), {
        "x": np.zeros(1)})(),))
    return state


def test_the_runner_reuses_within_a_cell_and_clears_between_cells():
    """Each cell runs with reuse on and starts with empty caches, but for the LC-MF
    factorisations that serve the next cells of the same pages (``spans_cells``)."""
    from milbench.experiment.runner import map_cells
    CACHE.clear()
    lcmf.FACTOR_CACHE.clear()
    was = CACHE.max_bytes, C.total_max_bytes()
    try:
        out = map_cells(_cell_state, (), [(0, 0), (0, 1), (0, 2)], threads=1)
    finally:
        CACHE.clear()
        lcmf.FACTOR_CACHE.clear()
        CACHE.max_bytes = was[0]
        C.set_total_max_bytes(was[1])
    assert [out[c] for c in sorted(out)] == [(True, 0, 0), (True, 0, 1), (True, 0, 2)]
    assert not reusing()


def test_the_planner_draws_with_reuse_on(monkeypatch):
    from milbench.experiment.plan import sandbox
    monkeypatch.setattr(sandbox, "threadpool_limits", lambda n: None)
    monkeypatch.setattr(sandbox, "warm_up", lambda ctx, task: None)
    monkeypatch.setattr(sandbox, "draw_untuned", lambda ctx, task: {"reusing": reusing()})
    recv, send = mp.Pipe(duplex=False)
    sandbox._child(send, {}, {"kind": "untuned"})
    assert recv.recv() == {"reusing": True} and not reusing()
