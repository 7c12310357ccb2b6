"""milbench.mil_assumption: Raff & Holt's (2023) algorithmic unit tests. The generators build
what their docstring says; hand-built scorers that follow the MIL assumption pass, scorers that
use the forbidden shortcut fail exactly the test built to catch it; registry names and
'module:Class' paths run; docs/mil-assumption.md is current."""
import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from conftest import REPO
from milbench.data.bags import check_bags
from milbench.mil_assumption import (
    CENTRE, CONCEPT_A, CONCEPT_B, POISON, SPLITS, TESTS, assumption_bags, assumption_table,
    check_mil_assumption, main, markdown_page, null_se)
from milbench.registry import CLASSIFIERS

PAGE = REPO / "docs" / "mil-assumption.md"
OWN = REPO / "examples" / "own_method"


def role_counts(bags):
    """(n_bags, 4) instances of each role per bag, read back from meta["roles"]."""
    bag = np.repeat(np.arange(len(bags)), bags.sizes)
    return np.stack([np.bincount(bag, bags.meta["roles"] == r, len(bags)) for r in range(4)],
                    axis=1).astype(int)


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("split", SPLITS)
def test_bags_follow_the_construction(test, split):
    bags = assumption_bags(test, split, 60, seed=3)
    c, y = role_counts(bags), bags.labels.astype(bool)
    a, b, poison, background = c[:, CONCEPT_A], c[:, CONCEPT_B], c[:, POISON], c[:, 0]
    assert y.sum() == 30 and ((background >= 1) & (background <= 9)).all()
    # every role's instances lie in its cluster (summed coordinates along the diagonal)
    s = bags.instances.sum(1) / bags.n_features
    roles = bags.meta["roles"]
    for r in (CONCEPT_A, CONCEPT_B, POISON):
        assert (np.abs(s[roles == r] - CENTRE[r]) < 0.5).all()
    shifted = split == "shifted"
    if test == "single-concept":
        np.testing.assert_array_equal(y, a > 0)                # the standard assumption
        assert (a[y] <= 3).all() and (b == 0).all()
        np.testing.assert_array_equal(poison, (y if shifted else ~y).astype(int))
    else:
        np.testing.assert_array_equal(y, (a > 0) & (b > 0))    # the threshold assumption
        assert ((a[~y] > 0) ^ (b[~y] > 0)).all()               # a negative holds A or B
    if test == "two-concept":
        np.testing.assert_array_equal(a[y], b[y])
        assert (a[y] <= 3).all() and (a[~y] + b[~y] == 1).all()
        np.testing.assert_array_equal(poison, (y if shifted else ~y).astype(int))
    if test == "false-frequency":
        assert (a[y] == 1).all() and (b[y] == 1).all() and (poison == 0).all()
        copies = a[~y] + b[~y]
        assert ((copies >= 35) & (copies <= 44)).all() if shifted else (copies == 1).all()


def test_bags_are_seeded():
    one, two = assumption_bags("two-concept", seed=5), assumption_bags("two-concept", seed=5)
    np.testing.assert_array_equal(one.instances, two.instances)
    np.testing.assert_array_equal(one.offsets, two.offsets)
    np.testing.assert_array_equal(one.labels, two.labels)
    other = assumption_bags("two-concept", seed=6)
    assert one.instances.shape != other.instances.shape \
        or not np.array_equal(one.instances, other.instances)
    # the splits of one seed are different draws
    assert not np.array_equal(assumption_bags("single-concept", "same").labels,
                              assumption_bags("single-concept", "train").labels)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"unknown MIL-assumption test 'three-concept'; known"):
        assumption_bags("three-concept")
    with pytest.raises(ValueError, match=r"split must be one of .*'test'"):
        assumption_bags("single-concept", "test")
    with pytest.raises(TypeError, match="expected an estimator, a classifier name"):
        check_mil_assumption(3)


class Scorer(ClassifierMixin, BaseEstimator):
    """A hand-built bag scorer (fit learns nothing): ``pool`` of an instance score."""

    def fit(self, X, y):
        _, _, _, self.classes_ = check_bags(X, y)
        return self

    def decision_function(self, X):
        Xs, offsets, _, _ = check_bags(X)
        return self.pool(self.instance_score(Xs), offsets)

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > np.median(
            self.decision_function(X))).astype(int)]

    @staticmethod
    def instance_score(Xs):            # along the diagonal: poison < background < A < B
        return Xs.sum(1)


class MaxOfDiagonal(Scorer):
    """Follows the standard assumption: a bag scores as its highest instance."""

    @staticmethod
    def pool(s, offsets):
        return np.maximum.reduceat(s, offsets[:-1])


class MeanOfDiagonal(Scorer):
    """Mean pooling: every instance, the poison too, moves the bag's score."""

    @staticmethod
    def pool(s, offsets):
        return np.add.reduceat(s, offsets[:-1]) / np.diff(offsets)


class NoPoisonMeansPositive(Scorer):
    """The shortcut of tests 1 and 2: minus the number of poison-like instances."""

    @staticmethod
    def pool(s, offsets):
        return -np.add.reduceat((s < -20).astype(float), offsets[:-1])


class CountsConcepts(Scorer):
    """The shortcut of test 3: how many concept-like instances a bag holds."""

    @staticmethod
    def pool(s, offsets):
        return np.add.reduceat((s > 6).astype(float), offsets[:-1])


class BothConcepts(Scorer):
    """The threshold assumption: a bag scores as its weaker concept's best instance."""

    def decision_function(self, X):
        Xs, offsets, _, _ = check_bags(X)
        near = [-((Xs - CENTRE[c]) ** 2).sum(1) for c in (CONCEPT_A, CONCEPT_B)]
        return np.minimum(*(np.maximum.reduceat(n, offsets[:-1]) for n in near))


def verdicts(est, **kw):
    return dict(zip(TESTS, check_mil_assumption(est, **kw)["verdict"]))


def test_a_standard_mil_scorer_passes_every_test():
    res = check_mil_assumption(MaxOfDiagonal())
    assert list(res["verdict"]) == ["pass"] * 3, res
    single = res.iloc[0]
    assert single["auc_same"] == single["auc_shifted"] == 1.0
    # it cannot express "A and B": a detector of B, the better concept, ranks about 3/4 of the
    # pairs (a negative holding B ties with the positives but for the noise of their copies)
    assert ((res["auc_same"].iloc[1:] > 0.7) & (res["auc_same"].iloc[1:] < 0.9)).all()


def test_a_threshold_scorer_solves_the_threshold_tests():
    res = check_mil_assumption(BothConcepts()).set_index("test")
    threshold_tests = res.loc[["two-concept", "false-frequency"], ["auc_same", "auc_shifted"]]
    assert (threshold_tests == 1).all(axis=None)
    assert (res["verdict"] != "FAIL").all()


@pytest.mark.parametrize("scorer, fails", [
    (MeanOfDiagonal, {"single-concept", "two-concept", "false-frequency"}),
    (NoPoisonMeansPositive, {"single-concept", "two-concept"}),
    (CountsConcepts, {"false-frequency"}),
])
def test_a_shortcut_fails_the_test_built_for_it(scorer, fails):
    res = check_mil_assumption(scorer())
    assert set(res.loc[res["verdict"] == "FAIL", "test"]) == fails, res
    assert (res.loc[res["verdict"] == "FAIL", "auc_shifted"] < 0.2).all()


def test_a_scorer_that_learns_nothing_shows_no_signal():
    res = check_mil_assumption(NoPoisonMeansPositive()).set_index("test")
    assert res.loc["false-frequency", "verdict"] == "no signal"     # no poison in that test
    assert res.loc["false-frequency", "auc_same"] == 0.5


def test_threshold_is_three_null_standard_errors_below_chance():
    res = check_mil_assumption(MaxOfDiagonal(), tests=("single-concept",), n_test=100)
    assert res["threshold"].iloc[0] == pytest.approx(0.5 - 3 * null_se(50, 50))
    assert null_se(50, 50) == pytest.approx(np.sqrt(101 / 30000))


def test_runs_registry_names_and_module_class_paths(monkeypatch):
    assert verdicts("MI-svm")["single-concept"] == "pass"
    assert verdicts("mi-simple")["single-concept"] == "FAIL"       # bag min / max statistics
    assert verdicts({"name": "milr", "combine": "noisy-or"})["single-concept"] == "pass"
    # a user's own class by 'module:Class' (this module, and the README's worked example)
    assert verdicts(f"{__name__}:NoPoisonMeansPositive")["two-concept"] == "FAIL"
    monkeypatch.syspath_prepend(str(OWN))
    res = check_mil_assumption("pooling:MeanMaxPooling", seed=0)
    assert isinstance(res, pd.DataFrame) and len(res) == 3


def test_results_are_deterministic():
    pd.testing.assert_frame_equal(check_mil_assumption("mi-wrapper", seed=1),
                                  check_mil_assumption("mi-wrapper", seed=1))


def test_command_line(capsys):
    main(["milr", "pooling:MeanMaxPooling", "--code", str(OWN)])
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["method", *TESTS]
    assert out[2].split()[:3] == ["milr", "pass", "(1.00"]
    assert out[3].startswith("pooling:MeanMaxPooling")
    with pytest.raises(SystemExit):
        main(["no-such-method"])
    assert "unknown classifier 'no-such-method'" in capsys.readouterr().err


def test_a_method_that_cannot_run_is_listed_with_its_reason():
    out = assumption_table(["milr", "nomodule:Nothing"], skip={"milr": "too slow here"})
    assert out["milr"] == "not run: too slow here"
    assert out["nomodule:Nothing"].startswith("not run: classifier 'nomodule:Nothing': cannot "
                                              "import it (ModuleNotFoundError")
    page = markdown_page(out)
    assert "| `milr` | not run: too slow here |  |  |" in page


class Crashes(MaxOfDiagonal):
    def fit(self, X, y):
        raise ValueError("needs a graph of bags\nsecond line")


def test_a_method_that_crashes_is_listed_with_its_error():
    out = assumption_table([f"{__name__}:Crashes"])
    assert out[f"{__name__}:Crashes"] == "error: ValueError: needs a graph of bags"


# rows of the committed page recomputed by the test (every verdict kind among them); the
# integrator regenerates the whole page after adding a method
PINNED = ("milr", "mi-simple", "MI-svm", "citation-knn", "mildm", "lcmf")


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_committed_page_is_current():
    page = PAGE.read_text()
    regenerate = "python -m milbench.mil_assumption --all --markdown > docs/mil-assumption.md"
    fresh = markdown_page(assumption_table(PINNED))
    head, rows = fresh.split("| method |")
    assert page.startswith(head), f"the page's text is stale: {regenerate}"
    listed = [line.split("`")[1] for line in page.split("| method |")[1].splitlines()
              if line.startswith("| `")]
    assert listed == list(CLASSIFIERS), f"not every classifier has a row: {regenerate}"
    stale = [line for line in rows.splitlines() if line.startswith("| `") and line not in page]
    assert not stale, f"rows differ from a fresh run: {stale}; {regenerate}"
    assert {"pass", "FAIL", "no signal"} <= {c.split(" (")[0].strip()
                                             for line in rows.splitlines()[2:]
                                             for c in line.split("|")[2:-1]}

