"""Fold stages (milbench.experiment.stages, milbench.selectors.stage_store): a selector fit served
from a precomputed, classifier-independent state is identical to a normal fit for every
downstream value; stage specs keep exactly the stage parameters; a state is never applied to
other data or other stage parameters; Parquet round trip is exact; the store survives clone
inside GridSearchCV."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.decomposition import PCA
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from test_cvfs import two_view_bags
from test_relieff import make_synthetic

from milbench.base import MILTransformer, StagedSelector
from milbench.classifiers.simple import MISimple
from milbench.data.bags import Bags
from milbench.experiment import stages
from milbench.preprocessing import BagScaler
from milbench.registry import SELECTORS, make, resolve
from milbench.selectors.relieff import ReliefFMI
from milbench.selectors.stage_store import STORE_PARAM, StageRule, StageStore, stage_rule
from milbench.selectors.view_baselines import BagInfoGain
from milbench.testing import CHECK_DATA, check_mil_estimator, check_stage_protocol, toy_bags

SEED = 7


# ------------------------------------------------------------------ helpers
def assert_identical(a, b, path="fit"):
    """Bitwise equality of fitted state: arrays (dtype, shape, bytes), containers, nested
    estimators (their __dict__), scalars (type and value)."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, path
        assert a.tobytes() == b.tobytes(), path
        # memory layout too: BLAS results may differ in the last bit between layouts
        assert (a.flags.c_contiguous, a.flags.f_contiguous) == \
            (b.flags.c_contiguous, b.flags.f_contiguous), path
    elif isinstance(a, Bags):
        assert_identical(a.instances, b.instances, path + ".instances")
        assert_identical(a.offsets, b.offsets, path + ".offsets")
        assert a.views == b.views, path
    elif isinstance(a, dict):
        assert set(a) == set(b), (path, set(a) ^ set(b))
        for k in a:
            assert_identical(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_identical(x, y, f"{path}[{i}]")
    elif isinstance(a, BaseEstimator):
        assert type(a) is type(b), path
        assert_identical(vars(a), vars(b), path)
    else:
        assert type(a) is type(b) and (a == b or (a != a and b != b)), (path, a, b)


def fitted(est):
    """An estimator's attributes without its stage store (a parameter that is no result)."""
    return {k: v for k, v in vars(est).items() if k != STORE_PARAM}


def served(est, *states):
    """``est`` reading its stage from a new store of ``states``: (est, store)."""
    store = StageStore(states)
    return est.set_params(**{STORE_PARAM: store}), store


def single_view():
    bags, y = make_synthetic(n_bags=30, d_inf=4, d_noise=16, seed=3)
    return Bags.from_list(bags, y), None


def two_views():
    B, _ = two_view_bags(n_bags=30, d1=10, d2=12, k=3, seed=2, shift=2.0)
    return B, [10, 12]


def scaled(B):
    return stages.scale_bags(B, "minmax")


def configured(spec, views):
    """The selector as the pipeline builds it: random_state / views filled where None."""
    sel = make("selector", spec)
    params = sel.get_params()
    if params.get("random_state", 0) is None:
        sel.set_params(random_state=SEED)
    if views is not None and "views" in params and params["views"] is None:
        sel.set_params(views=views)
    return sel


# ------------------------------------------------------------------ stage specs
def test_stage_spec_drops_exactly_downstream_params_and_fills_defaults():
    base = stages.stage_spec({"name": "relieff-mi"})
    assert base == {"name": "relieff-mi", "metric": "adapted", "k": 80, "m": 180,
                    "instance_metric": "manhattan", "block_size": 2 ** 21, "random_state": None}
    assert stages.stage_spec({"name": "relieff-mi", "k": 80, "percent": 0.3}) == base
    assert stages.stage_spec({"name": "relieff-mi", "k": 10})["k"] == 10
    assert stages.stage_spec({"name": "hydr-mi", "classifier": "@classifier", "percent": 0.7,
                              "population_size": 6, "metric": "max"}) == {
        "name": "hydr-mi", "metric": "max", "k": 80, "m": 180, "instance_metric": "manhattan",
        "random_state": None}
    for name in ("big", "iig", "fs"):
        spec = stages.stage_spec({"name": name, "m": 5, "strategy": "II", "view": "v1",
                                  "views": [3, 4]})
        assert spec == ({"name": "big", "bag_statistic": "max"} if name == "big" else
                        {"name": name})
    assert stages.stage_spec({"name": "big", "bag_statistic": "mean"})["bag_statistic"] == "mean"
    assert stages.stage_spec({"name": "cvfs", "m": 5, "r": -3, "max_iter": 3, "view": "v2"}) \
        == {"name": "cvfs", "views": None}
    assert stages.stage_spec({"name": "pca", "dims": 0.1, "random_state": 3}) == {"name": "pca"}
    assert stages.stage_spec({"name": "lda"}) == {"name": "lda", "solver": "svd",
                                                  "shrinkage": None, "tol": 1e-4}
    for name in ("none", "midr"):
        assert stages.stage_spec({"name": name}) is None
    # every parameter is either a stage parameter or downstream, never both
    staged = [n for n in SELECTORS if stages.stage_params(n) is not None]
    assert staged == ["pca", "lda", "relieff-mi", "hydr-mi", "cvfs", "big", "iig", "fs"]
    for name in staged:
        keep, down = set(stages.stage_params(name)), set(stages.downstream_params(name))
        assert not keep & down and keep | down == set(make("selector", {"name": name})
                                                      .get_params(deep=False))
    # tuning: a downstream parameter keeps the stage, a stage parameter has none
    assert stages.stage_spec({"name": "relieff-mi", "tune": {"percent": [0.1, 0.2]}}) == base
    assert stages.stage_spec({"name": "relieff-mi", "tune": {"k": [5, 10]}}) is None
    with pytest.raises(ValueError, match="unknown"):
        stages.stage_spec({"name": "relieff-mi", "kk": 3})
    with pytest.raises(KeyError):
        stages.stage_spec({"name": "no-such-selector"})
    assert stages.stage_id(base) == stages.stage_id(stages.stage_spec({"name": "relieff-mi"}))


# ------------------------------------------------------------------ served == normal
CASES = [
    ("relieff-mi", {"m": 12}, [{"percent": 0.1}, {"percent": 0.5}, {"percent": 3},
                               {"percent": None}], single_view),
    ("relieff-mi", {"metric": "max", "instance_metric": "euclidean"},
     [{"percent": 0.2}, {"percent": 7}], single_view),
    ("big", {}, [{"m": 6, "strategy": "I"}, {"m": 6, "strategy": "II"},
                 {"m": 0.25, "strategy": "III"}, {"m": 4, "view": "v2"}], two_views),
    ("iig", {}, [{"m": 6, "strategy": "I"}, {"m": 3, "strategy": "II"}], two_views),
    ("fs", {}, [{"m": 6, "strategy": "I"}, {"m": 0.5, "strategy": "II"},
                {"m": 2, "view": "v1"}], two_views),
    ("cvfs", {}, [{"m": 3}, {"m": 8, "r": -3.0}, {"m": 5, "view": "v2"},
                  {"m": 0.5, "max_iter": 2}], two_views),
    ("pca", {}, [{"dims": 0.1}, {"dims": 0.5}, {"dims": 1.0}, {"dims": 3}], single_view),
    ("lda", {}, [{}], single_view),
    ("lda", {"solver": "eigen", "shrinkage": "auto"}, [{}], two_views),
]


@pytest.mark.parametrize("name,base,downstream,data", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_served_fit_identical_to_normal_fit(name, base, downstream, data):
    B, views = data()
    X = scaled(B)
    state = stages.fit_stage(X, X.labels, {"name": name, **base}, random_state=SEED, views=views)
    assert set(state) >= {"_fingerprint", "_key"}
    for down in downstream:
        sel = configured({"name": name, **base, **down}, views)
        normal = clone(sel).fit(X, X.labels)
        got, p = served(clone(sel), state)
        got.fit(X, X.labels)
        assert p.hits == 1, down
        assert_identical(fitted(normal), fitted(got), f"{name}{down}")
        assert_identical(normal.transform(X), got.transform(X))
        assert_identical(normal.transform(X.as_list()), got.transform(X.as_list()))


def test_pca_stage_equals_a_k_component_fit_sign_included():
    B, _ = single_view()
    X = scaled(B)
    Xs = X.instances.astype(float)
    state = stages.fit_stage(X, X.labels, {"name": "pca"})
    for dims in (1, 0.1, 0.5, 1.0):
        sel, p = served(make("selector", {"name": "pca", "dims": dims, "random_state": 3}), state)
        sel.fit(X, X.labels)
        assert p.hits == 1
        ref = PCA(sel.n_components_, svd_solver="full", random_state=3).fit(Xs)
        assert_identical(vars(sel.pca_), vars(ref))
        np.testing.assert_array_equal(sel.pca_.transform(Xs), ref.transform(Xs))


def test_lda_stage_equals_a_direct_sklearn_fit():
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    B, _ = two_views()
    X = scaled(B)
    Xs, yi = X.instances.astype(float), np.repeat(X.labels, X.sizes)
    for params in ({"solver": "svd"}, {"solver": "eigen", "shrinkage": "auto"}):
        state = stages.fit_stage(X, X.labels, {"name": "lda", **params})
        sel, p = served(make("selector", {"name": "lda", **params}), state)
        sel.fit(X, X.labels)
        assert p.hits == 1
        ref = LinearDiscriminantAnalysis(n_components=1, **params).fit(Xs, yi)
        assert_identical(vars(sel.lda_), vars(ref))


def test_hydr_with_relieff_stage_same_support():
    B, _ = single_view()
    X = scaled(B)
    spec = {"name": "hydr-mi", "classifier": {"name": "mi-simple"}, "m": 12,
            "population_size": 6, "n_generations": 2, "n_seeds": 1}
    # the stage ignores the GA and the classifier (computed here with the default n_seeds=5)
    state = stages.fit_stage(X, X.labels, {"name": "hydr-mi", "m": 12}, random_state=SEED)
    for percent in (0.3, 0.6):
        sel = configured({**spec, "percent": percent}, None)
        normal = clone(sel).fit(X, X.labels)
        got, p = served(clone(sel), state)
        got.fit(X, X.labels)
        assert p.hits == 1
        np.testing.assert_array_equal(normal.support_, got.support_)
        assert_identical(fitted(normal), fitted(got))
    # a ReliefF-MI stage of the same seed is not a HyDR-MI stage (different key)
    other = stages.fit_stage(X, X.labels, {"name": "relieff-mi", "m": 12}, random_state=SEED)
    got, p = served(clone(sel), other)
    got.fit(X, X.labels)
    assert p.hits == 0


# ------------------------------------------------------------------ never the wrong state
def test_state_for_other_data_or_params_is_not_used():
    B, _ = single_view()
    X = scaled(B)
    state = stages.fit_stage(X, X.labels, {"name": "relieff-mi", "m": 12}, random_state=SEED)
    sel = ReliefFMI(m=12, percent=0.3, random_state=SEED)

    inst = X.instances.copy()
    inst[5, 3] = np.nextafter(inst[5, 3], np.float32(2))          # one float32 ulp
    X_value = replace(X, instances=inst)
    y_flip = X.labels.copy()
    y_flip[[0, 1]] = y_flip[[1, 0]]                               # same class counts
    for data, y in ((X_value, X.labels), (X, y_flip)):
        got, p = served(clone(sel), state)
        got.fit(data, y)
        assert p.hits == 0
        assert_identical(fitted(got), fitted(clone(sel).fit(data, y)))
    # other stage parameters / random state / a subclass: computed fresh
    for other in (ReliefFMI(m=12, k=5, random_state=SEED), ReliefFMI(m=12, random_state=SEED + 1),
                  ReliefFMI(m=12, metric="min", random_state=SEED), ReliefFMI(m=12),
                  ReliefFMI(m=12, random_state=np.random.RandomState(SEED)),
                  type("Sub", (ReliefFMI,), {})(m=12, random_state=SEED)):
        other, p = served(other, state)
        other.fit(X, X.labels)
        assert p.hits == 0, other
    # the same data as a list of arrays (not Bags) is the same data
    got, p = served(clone(sel), state)
    got.fit(X.as_list(), X.labels)
    assert p.hits == 1
    p.require_use()
    # unscaled data: the stage is unused, and require_use says so
    got, p = served(clone(sel), state)
    got.fit(B, B.labels)
    with pytest.raises(RuntimeError, match="served no fit"):
        p.require_use()


def test_cvfs_state_keyed_by_view_partition():
    B, views = two_views()
    X = scaled(B)
    state = stages.fit_stage(X, X.labels, {"name": "cvfs"}, views=views)
    flat = X.as_list()
    for partition, hits in (([10, 12], 1), ([12, 10], 0), ([22], 0)):
        got, p = served(make("selector", {"name": "cvfs", "m": 4, "views": partition}), state)
        got.fit(flat, X.labels)
        assert p.hits == hits, partition
        ref = make("selector", {"name": "cvfs", "m": 4, "views": partition}).fit(flat, X.labels)
        assert_identical(fitted(got), fitted(ref))


def test_fit_stage_refuses_what_it_cannot_key():
    B, _ = single_view()
    X = scaled(B)
    with pytest.raises(ValueError, match="no stage"):
        stages.fit_stage(X, X.labels, {"name": "none"})
    with pytest.raises(ValueError, match="int random_state"):
        stages.fit_stage(X, X.labels, {"name": "relieff-mi"}, random_state=None)
    # an explicit random_state in the spec wins over the argument, as in the pipeline
    a = stages.fit_stage(X, X.labels, {"name": "relieff-mi", "random_state": 3}, random_state=9)
    b = stages.fit_stage(X, X.labels, {"name": "relieff-mi"}, random_state=3)
    assert str(a["_key"]) == str(b["_key"])


# ------------------------------------------------------------------ clone inside GridSearchCV
def test_stage_serves_the_gridsearch_refit_only():
    B, _ = single_view()
    pipe = Pipeline([("scale", BagScaler("minmax")),
                     ("select", ReliefFMI(m=12, random_state=SEED)),
                     ("clf", MISimple())])
    gs = GridSearchCV(pipe, {"select__percent": [0.1, 0.3]},
                      cv=StratifiedKFold(3, shuffle=True, random_state=0))
    ref = clone(gs).fit(B, B.labels)
    state = stages.fit_stage(stages.scale_bags(B, "minmax"), B.labels,
                             {"name": "relieff-mi", "m": 12}, random_state=SEED)
    store = StageStore([state])
    got = clone(gs).set_params(**{f"estimator__select__{STORE_PARAM}": store}).fit(B, B.labels)
    assert store.hits == 1                   # the refit on all training bags; inner folds fresh
    assert got.best_estimator_["select"].stages is store      # clone shares the store
    assert got.best_params_ == ref.best_params_
    assert_identical(fitted(got.best_estimator_["select"]), fitted(ref.best_estimator_["select"]))
    np.testing.assert_array_equal(got.decision_function(B), ref.decision_function(B))


def test_store_is_a_parameter_that_changes_no_key_id_or_cache_hash():
    import pickle

    import joblib

    from milbench.experiment.grid import check_method
    from milbench.report.reference import method_reference

    B, _ = single_view()
    X = scaled(B)
    state = stages.fit_stage(X, X.labels, {"name": "relieff-mi", "m": 12}, random_state=SEED)
    sel, store = served(ReliefFMI(m=12, random_state=SEED), state)
    assert StageStore().lookup(sel, X.instances, X.offsets, X.labels) is None     # an empty store
    before = joblib.hash(sel)
    assert joblib.hash(clone(sel).set_params(stages=None)) != before   # hashed as a store
    sel.fit(X, X.labels)
    assert store.hits == 1 and joblib.hash(clone(sel)) == before     # hits change no hash
    assert len(pickle.loads(pickle.dumps(store))) == 0               # pickled empty
    assert clone(sel).stages is store and len(store) == 1
    # no stage spec, stage id or method reference lists it; a config cannot set it
    assert STORE_PARAM not in stages.stage_spec({"name": "relieff-mi"})
    assert STORE_PARAM in stages.downstream_params("relieff-mi")
    assert f"`{STORE_PARAM}`" not in method_reference()
    with pytest.raises(ValueError, match=STORE_PARAM):
        check_method({"name": "relieff-mi", STORE_PARAM: "x"}, {"name": "mi-simple"})


# ------------------------------------------------------------------ Parquet
def test_parquet_round_trip_exact(tmp_path):
    B, views = two_views()
    X = scaled(B)
    cv = StratifiedKFold(2, shuffle=True, random_state=0)
    folds = list(cv.split(np.zeros(len(X)), X.labels))
    for spec in ({"name": "relieff-mi", "m": 8}, {"name": "pca"}, {"name": "cvfs"},
                 {"name": "lda", "solver": "eigen", "shrinkage": "auto"}):
        states = {}
        for repeat in range(2):
            for fold, (tr, _) in enumerate(folds):
                train = scaled(B.subset(tr))
                states[(repeat, fold)] = stages.fit_stage(train, train.labels, spec,
                                                          random_state=SEED + repeat, views=views)
        path = tmp_path / f"{spec['name']}.parquet"
        stages.stage_to_frame(states).to_parquet(path, index=False)
        df = pd.read_parquet(path)
        assert len(df) == 4 and {"repeat", "fold", "_fingerprint", "_key"} <= set(df.columns)
        back = stages.frame_to_stages(df)
        assert_identical(back, states, spec["name"])
        # a round-tripped state serves a fit identical to a normal one
        train = scaled(B.subset(folds[1][0]))
        extra = {"percent": 0.2, "random_state": SEED + 1} if spec["name"] == "relieff-mi" else {}
        sel = configured({**spec, **extra}, views)
        got, p = served(clone(sel), back)
        got.fit(train, train.labels)
        assert p.hits == 1
        assert_identical(fitted(got), fitted(clone(sel).fit(train, train.labels)))


# ---------------------------------------------------------------------------------------------
# the protocol between the experiment layer and a selector with a stage
# ---------------------------------------------------------------------------------------------
STAGED = sorted(n for n in SELECTORS if stage_rule(resolve("selector", n)) is not None)
SMALL_HYDR = dict(percent=0.3, population_size=4, n_generations=2, n_seeds=2, inner_cv=2,
                  classifier={"name": "mi-simple"})


@pytest.mark.parametrize("name", STAGED)
def test_registry_selectors_with_a_stage_implement_the_protocol(name):
    sel = make("selector", {"name": name, **(SMALL_HYDR if name == "hydr-mi" else {})})
    assert isinstance(sel, StagedSelector)
    check_stage_protocol(sel, *toy_bags(**CHECK_DATA))


def test_every_selector_with_a_stage_is_checked():
    assert STAGED == ["big", "cvfs", "fs", "hydr-mi", "iig", "lda", "pca", "relieff-mi"]


class PrivateHook(MILTransformer):
    """Declares a stage but offers only a private hook: not a StagedSelector."""

    _stage_rule = StageRule()

    def __init__(self, stages=None):
        self.stages = stages

    def _stage_state(self, bags, y01):
        return {}

    def _fit(self, X, offsets, y01):
        pass


class NeverServed(BagInfoGain):
    """Computes its stage in every fit, never asking its store."""

    def _fit(self, X, offsets, y):
        self.scores_ = self.stage_state(X, offsets, y)["scores"]
        self.support_ = self._allocate(self.scores_)


def test_stage_protocol_check_names_what_is_missing():
    bags, y = toy_bags(**CHECK_DATA)
    assert not isinstance(PrivateHook(), StagedSelector)
    with pytest.raises(AssertionError, match=r"stage_state\(X, offsets, y01\)"):
        check_stage_protocol(PrivateHook(), bags, y)
    with pytest.raises(AssertionError, match="was not served"):
        check_stage_protocol(NeverServed(m=2), bags, y)
    check_stage_protocol(MISimple(), bags, y)            # no stage: nothing to check
    assert check_mil_estimator(PrivateHook(), raise_on_failure=False)["check_stage_protocol"]
