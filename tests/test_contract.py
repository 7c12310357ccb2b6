"""milbench.testing.check_mil_estimator: every registry classifier passes the MIL contract, and a
broken estimator fails it with the broken checks named."""
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import make_constraint

from milbench.experiment.grid import check_method
from milbench.preprocessing import BagScaler
from milbench.registry import CLASSIFIERS, SELECTORS, make, resolve
from milbench.testing import CHECKS, check_mil_estimator

# every estimator a config can name, and the pipeline's scaler
ESTIMATORS = ([("selector", n) for n in SELECTORS] + [("classifier", n) for n in CLASSIFIERS]
              + [("scale", "BagScaler")])
# wrong values a YAML config can hold: the first one a parameter's constraints refuse is used
WRONG_VALUES = (-1.5, "not-a-valid-value")


def estimator_class(kind, name):
    return BagScaler if kind == "scale" else resolve(kind, name)


@pytest.mark.parametrize("kind, name", ESTIMATORS, ids=[f"{k}-{n}" for k, n in ESTIMATORS])
def test_constraints_cover_every_parameter(kind, name):
    """scikit-learn's declaration of every parameter: what the parse-time check validates."""
    Est = estimator_class(kind, name)
    assert isinstance(getattr(Est, "_parameter_constraints", None), dict), \
        f"{Est.__name__} declares no _parameter_constraints"
    params = set(Est().get_params(deep=False))
    assert set(Est._parameter_constraints) == params, (
        f"{Est.__name__}: undeclared {sorted(params - set(Est._parameter_constraints))}, "
        f"not parameters {sorted(set(Est._parameter_constraints) - params)}")


def _wrong_value(constraints):
    """The first of WRONG_VALUES that no constraint accepts (None: the parameter takes all)."""
    for value in WRONG_VALUES:
        if not any(make_constraint(c).is_satisfied_by(value) for c in constraints):
            return value
    return None


@pytest.mark.parametrize("kind, name", [e for e in ESTIMATORS if e[0] != "scale"],
                         ids=[f"{k}-{n}" for k, n in ESTIMATORS if k != "scale"])
def test_wrong_value_fails_the_config_check_by_name(kind, name):
    """Every parameter refuses a wrong-typed value, and the check the workflow runs when it is
    parsed (``snakemake -n``) names the method and the parameter."""
    constraints = resolve(kind, name)._parameter_constraints
    for param in sorted(constraints):
        value = _wrong_value(constraints[param])
        assert value is not None, f"{name}: {param} accepts {WRONG_VALUES}"
        spec = {"name": name, param: value}
        selector, classifier = (spec, {"name": "milr"}) if kind == "selector" else \
            ({"name": "none"}, spec)
        with pytest.raises(ValueError, match=rf"^{kind} {name}: The '{param}' parameter of "):
            check_method(selector, classifier)
        with pytest.raises(ValueError, match=rf"'{param}' parameter"):   # and fit, the same
            make(kind, spec).fit(*_bags())


def test_scaler_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match=r"The 'kind' parameter of BagScaler must be a str "
                                         r"among \{.*'minmax'.*\}"):
        BagScaler(kind="minimax").fit(*_bags())


def _bags():
    rng = np.random.default_rng(0)
    return [rng.normal(size=(3, 4)) for _ in range(6)], np.array([0, 1] * 3)


@pytest.mark.filterwarnings("ignore:MILSD")
@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_registry_classifier_passes(name):
    results = check_mil_estimator(make("classifier", {"name": name}))
    assert set(results) == {c.__name__ for c in CHECKS}


class MeanPool(ClassifierMixin, BaseEstimator):
    """A minimal valid external method: mean of each bag's instances, nearest class centroid."""

    def fit(self, X, y):
        from milbench.data.bags import check_bags
        Xs, offsets, y01, self.classes_ = check_bags(X, y)
        Z = np.add.reduceat(Xs, offsets[:-1]) / np.diff(offsets)[:, None]
        self.centres_ = np.array([Z[y01 == k].mean(0) for k in (0, 1)])
        return self

    def decision_function(self, X):
        from milbench.data.bags import check_bags
        Xs, offsets, _, _ = check_bags(X)
        if Xs.shape[1] != self.centres_.shape[1]:
            raise ValueError("feature count differs from fit")
        Z = np.add.reduceat(Xs, offsets[:-1]) / np.diff(offsets)[:, None]
        d = ((Z[:, None, :] - self.centres_[None]) ** 2).sum(-1)
        return d[:, 0] - d[:, 1]

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


class Broken(MeanPool):
    """Ignores ±1 labels (keeps 0/1 classes), scores bags by their position among the test bags,
    and returns None from fit."""

    def fit(self, X, y):
        super().fit(X, (np.asarray(y) > 0).astype(int))
        self.classes_ = np.array([0, 1])

    def decision_function(self, X):
        return super().decision_function(X) + np.arange(len(X)) * 1e-3


def test_a_minimal_external_method_passes():
    assert not any(check_mil_estimator(MeanPool()).values())


def test_a_broken_method_fails_by_name():
    results = check_mil_estimator(Broken(), raise_on_failure=False)
    failed = {k for k, v in results.items() if v}
    assert {"check_fit_returns_self", "check_pm1_labels", "check_test_order"} <= failed, results
    with pytest.raises(AssertionError,
                       match=rf"Broken fails \d+ of {len(CHECKS)} MIL checks:\n  check_fit"):
        check_mil_estimator(Broken())


def test_method_reference_page_is_current():
    from milbench.report.reference import method_reference

    from conftest import REPO
    page = (REPO / "docs" / "methods.md").read_text()
    assert page == method_reference(), "regenerate: python -m milbench.report.reference > docs/methods.md"
    assert all(f"### `{n}`" in page for n in CLASSIFIERS)
