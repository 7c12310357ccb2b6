"""milbench.testing.check_mil_estimator: every registry classifier passes the MIL contract, and a
broken estimator fails it with the broken checks named."""
import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from milbench.registry import CLASSIFIERS, make
from milbench.testing import CHECKS, check_mil_estimator


@pytest.mark.filterwarnings("ignore:MILSD")
@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_registry_classifier_passes(name):
    results = check_mil_estimator(make("classifier", {"name": name}))
    assert set(results) == {c.__name__ for c in CHECKS}


class MeanPool(ClassifierMixin, BaseEstimator):
    """A minimal valid external method: mean of each bag's instances, nearest class centroid."""

    def fit(self, X, y):
        from milbench.data.bags import check_bags
        bags, y01, self.classes_ = check_bags(X, y)
        Z = np.array([b.mean(0) for b in bags])
        self.centres_ = np.array([Z[y01 == k].mean(0) for k in (0, 1)])
        return self

    def decision_function(self, X):
        from milbench.data.bags import check_bags
        bags, _, _ = check_bags(X)
        if bags[0].shape[1] != self.centres_.shape[1]:
            raise ValueError("feature count differs from fit")
        Z = np.array([b.mean(0) for b in bags])
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
    with pytest.raises(AssertionError, match=r"Broken fails \d+ of 9 MIL checks:\n  check_fit"):
        check_mil_estimator(Broken())


def test_method_reference_page_is_current():
    from milbench.report.reference import method_reference

    from conftest import REPO
    page = (REPO / "docs" / "methods.md").read_text()
    assert page == method_reference(), "regenerate: python -m milbench.report.reference > docs/methods.md"
    assert all(f"### `{n}`" in page for n in CLASSIFIERS)
