"""Metrics are scikit-learn's scorers; an imbalanced set, a one-class prediction and a fit stopped
at its cap are said in words: milbench.experiment.scoring."""
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn import metrics as skm
from sklearn.exceptions import UndefinedMetricWarning

from conftest import REPO
from milbench.data.bags import Bags
from milbench.experiment.grid import expand_methods, method_labels
from milbench.experiment.runner import run_experiment
from milbench.experiment.scoring import (
    METRICS,
    fold_flags,
    fold_metrics,
    inner_scorer,
    method_warnings,
    rank_auroc,
    summarise,
)

SKLEARN = {   # metric -> (scikit-learn's own function, scored on the bag scores?)
    "accuracy": (skm.accuracy_score, False),
    "balanced_accuracy": (skm.balanced_accuracy_score, False),
    "f1": (skm.f1_score, False),
    "precision": (skm.precision_score, False),
    "recall": (skm.recall_score, False),
    "matthews_corrcoef": (skm.matthews_corrcoef, False),
    "auroc": (skm.roc_auc_score, True),
    "average_precision": (skm.average_precision_score, True),
}


def test_every_metric_has_a_sklearn_oracle_and_is_in_the_schema():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert set(schema["$defs"]["metric"]["enum"]) == set(METRICS) == set(SKLEARN)


@pytest.mark.parametrize("metric", sorted(SKLEARN))
@pytest.mark.parametrize("seed", [0, 1])
def test_metric_equals_sklearn_function(metric, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 37)
    scores = rng.normal(size=37) + 1.2 * y
    pred = (scores > 0.4).astype(int)
    fn, on_scores = SKLEARN[metric]
    assert fold_metrics(y, pred, scores)[metric] == pytest.approx(
        fn(y, scores if on_scores else pred), abs=1e-12)


def test_one_class_predictions_and_test_sets():
    y = np.array([0, 0, 0, 1])
    m = fold_metrics(y, np.zeros(4, int), np.linspace(-1, 1, 4))
    assert m["accuracy"] == 0.75 and m["balanced_accuracy"] == 0.5
    assert m["precision"] == 0.0 and m["recall"] == 0.0 and m["matthews_corrcoef"] == 0.0
    assert m["auroc"] == 1.0
    m = fold_metrics(np.ones(3, int), np.ones(3, int), np.zeros(3))
    assert np.isnan(m["auroc"]) and np.isnan(m["average_precision"]) and m["accuracy"] == 1.0


@pytest.mark.parametrize("ties", [False, True])
def test_rank_auroc_equals_roc_auc_score(ties):
    """The inner CV's AUROC (Mann-Whitney rank sum) is scikit-learn's roc_auc_score: 500
    random folds of 2-60 bags, with tied scores or without, labels 0/1 or -1/+1."""
    rng = np.random.default_rng(int(ties))
    done = 0
    while done < 500:
        n = int(rng.integers(2, 61))
        y = rng.integers(0, 2, n)
        if y.min() == y.max():
            continue
        s = rng.integers(0, 4, n).astype(float) if ties else rng.normal(size=n)
        y = 2 * y - 1 if done % 2 else y
        assert rank_auroc(y, s) == pytest.approx(skm.roc_auc_score(y, s), abs=1e-15)
        done += 1
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(rank_auroc([1, 1, 1], [0.1, 0.2, 0.3]))
    with pytest.raises(ValueError, match="finite scores"):
        rank_auroc([0, 1, 1], [0.1, np.nan, 0.3])


def test_inner_auroc_scorer_gives_sklearns_grid_search():
    """GridSearchCV with inner_scorer("auroc") and with scikit-learn's "roc_auc" scorer: the
    same cv_results_ test scores (to 1e-15) and the same choice, on musk1-sized bags."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from milbench.classifiers.milr import MILR

    bags = imbalanced_bags(90, 45, seed=4, shift=1.0)
    grid = {"C": [0.01, 0.1, 1.0, 10.0]}
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    ours = GridSearchCV(MILR(), grid, cv=cv, scoring=inner_scorer("auroc")).fit(bags, bags.labels)
    theirs = GridSearchCV(MILR(), grid, cv=cv, scoring="roc_auc").fit(bags, bags.labels)
    for k in range(5):
        np.testing.assert_allclose(ours.cv_results_[f"split{k}_test_score"],
                                   theirs.cv_results_[f"split{k}_test_score"], atol=1e-15)
    assert ours.best_params_ == theirs.best_params_
    assert inner_scorer("accuracy") == METRICS["accuracy"]


def imbalanced_bags(n_bags=60, n_pos=6, seed=0, shift=0.2):
    """``n_pos`` positive bags of ``n_bags`` (10 %), their witness shifted by ``shift`` (0.2:
    barely, a classifier trained on them predicts every bag negative)."""
    rng = np.random.default_rng(seed)
    bags = [rng.normal(size=(int(rng.integers(2, 5)), 3)) for _ in range(n_bags)]
    y = np.zeros(n_bags, int)
    y[rng.choice(n_bags, n_pos, replace=False)] = 1
    for b, lab in zip(bags, y):
        b[0, 0] += shift * lab
    return Bags.from_list(bags, y, bag_ids=[f"b{i}" for i in range(n_bags)])


@pytest.fixture(scope="module")
def imbalanced_scores():
    exp = {"protocol": {"kind": "kfold", "folds": 3, "seed": 0},
           "classifiers": [{"name": "mi-simple", "label": "simple"}, {"name": "milr"}],
           "metrics": ["balanced_accuracy", "accuracy", "auroc"]}
    return exp, run_experiment(exp, imbalanced_bags(), dataset="rare")


def test_imbalanced_set_accuracy_is_the_majority_rate_and_is_said(imbalanced_scores):
    exp, scores = imbalanced_scores
    simple = scores[scores["method"] == "none + simple"]
    assert len(simple) == 3 and (simple["n_predicted_positive"] == 0).all()
    # every bag predicted negative: accuracy is the share of negatives, balanced accuracy 0.5
    assert np.allclose(simple["accuracy"], 1 - simple["n_positive"] / simple["n_test"])
    assert np.allclose(simple["balanced_accuracy"], 0.5)
    assert scores.groupby("fold")["n_positive"].first().sum() == 6
    said = method_warnings(simple)
    assert said[0].startswith("positive rate 10%: accuracy mostly measures the majority rate "
                              "(0.900)")
    assert "predicted no positive bag in 3 of 3 folds" in said
    summary = summarise(scores, exp["metrics"]).set_index("method")
    row = summary.loc["none + simple"]
    assert row["one_class_folds"] == 3 and row["positive_rate"] == pytest.approx(0.1)
    assert "predicted no positive bag in 3 of 3 folds" in row["warnings"]
    assert list(summary.columns[:2]) == ["dataset", "selector"]  # method is the index here
    assert "balanced_accuracy_mean" in summary.columns


def test_not_converged_folds_are_counted():
    rows = pd.DataFrame({
        "dataset": "d", "method": "m", "selector": "none", "classifier": "c", "repeat": 0,
        "fold": [0, 1, 2], "train_ratio": np.nan, "accuracy": 0.5, "n_test": 4,
        "n_positive": 2, "n_predicted_positive": [1, 4, 2], "fit_cpu_seconds": 1.0,
        "n_features": 3, "synthetic": False,
        "diagnostics": [json.dumps(d) for d in ({"classify.converged": 0, "classify.n_iter": 5},
                                                {"classify.converged": 1},
                                                {"select.converged": 0})]})
    flags = fold_flags(rows)
    assert flags["not_converged"].tolist() == [True, False, True]
    assert flags["one_class"].tolist() == ["", "all", ""]
    assert method_warnings(rows) == [
        "predicted every bag positive in 1 of 3 folds",
        "stopped at its iteration cap (not converged) in 2 of 3 folds"]
    s = summarise(rows).iloc[0]
    assert s["not_converged_folds"] == 2 and s["one_class_folds"] == 1


def test_labels_rename_methods_and_must_be_unique(imbalanced_scores):
    exp, scores = imbalanced_scores
    exp = {"selectors": [{"name": "none"}], **exp}
    assert set(scores["method"]) == {"none + simple", "none + milr"}
    assert method_labels(exp) == {"none + mi-simple": "none + simple"}
    # a label names, never changes, a method: ids and specs are the unlabelled ones
    m = expand_methods(exp)[0]
    assert m["classifier"] == {"name": "mi-simple"} and m["classifier_id"] == "mi-simple"
    twice = {**exp, "classifiers": [{"name": "milr", "C": [1.0, 2.0], "label": "L"}]}
    with pytest.raises(ValueError, match="label 'none \\+ L' names 2 different methods"):
        expand_methods(twice)


def test_inner_metric_is_a_scorer():
    exp = {"protocol": {"kind": "kfold", "folds": 2, "seed": 0}, "inner_folds": 2,
           "inner_metric": "balanced_accuracy",
           "classifiers": [{"name": "milr", "tune": {"C": [0.1, 10.0]}}]}
    scores = run_experiment(exp, imbalanced_bags(40, 12, seed=3), dataset="d")
    assert scores["best_params"].map(json.loads).map(lambda p: p["classify__C"]).isin(
        [0.1, 10.0]).all()


def test_threshold_auto_is_sklearns_tuned_threshold():
    """``threshold: auto`` on a 10 %-positive set whose bag scores rank well: the default
    threshold (score > 0) predicts almost no positive bag, the tuned one is scikit-learn's
    TunedThresholdClassifierCV on the same training bags and raises balanced accuracy."""
    from sklearn.model_selection import StratifiedKFold, TunedThresholdClassifierCV
    from sklearn.pipeline import Pipeline

    from milbench.classifiers.milr import MILR
    from milbench.data.folds import make_folds, split
    from milbench.preprocessing import BagScaler

    bags = imbalanced_bags(200, 20, seed=1, shift=1.5)
    exp = {"protocol": {"kind": "kfold", "folds": 3, "seed": 0}, "inner_folds": 3,
           "inner_metric": "balanced_accuracy", "classifiers": [{"name": "milr"}]}
    plain = run_experiment(exp, bags, dataset="rare")
    tuned = run_experiment({**exp, "threshold": "auto"}, bags, dataset="rare")
    assert "threshold" not in plain.columns and tuned["threshold"].notna().all()
    assert tuned["balanced_accuracy"].mean() > plain["balanced_accuracy"].mean() + 0.1
    assert tuned["n_predicted_positive"].sum() > plain["n_predicted_positive"].sum()
    # the oracle: scikit-learn's own tuner and pipeline on fold 0's training bags
    folds = make_folds(bags.bag_ids, bags.labels, exp["protocol"])
    tr, _, _ = split(folds, 0, 0, bags.bag_ids)
    train = bags.subset(tr)
    ours = TunedThresholdClassifierCV(
        Pipeline([("scale", BagScaler("minmax")), ("classify", MILR())]),
        scoring="balanced_accuracy", response_method="decision_function",
        cv=StratifiedKFold(3, shuffle=True, random_state=0)).fit(train, train.labels)
    assert tuned.loc[tuned["fold"] == 0, "threshold"].iloc[0] == pytest.approx(
        ours.best_threshold_, rel=1e-9)


def protein_threshold_table():
    """Protein (Tao et al. 2004; 193 bags, 25 positive): the default run's ``imbalanced``
    experiment (config/config.yaml) with the default threshold and with its own
    ``threshold: auto``: the table docs/usage.md shows."""
    from milbench.data.sources import load_builtin

    bags = load_builtin("protein", offline=True)
    exp = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["experiments"]["imbalanced"]
    exp = {k: v for k, v in exp.items() if k not in ("datasets", "description", "threshold")}
    lines = ["| method | threshold | accuracy | balanced_accuracy | matthews_corrcoef | auroc "
             "| positive predictions / fold |", "|---|---|---|---|---|---|---|"]
    for thr in (None, "auto"):
        s = run_experiment({**exp, "threshold": thr}, bags, dataset="protein")
        for method, g in s.groupby("method"):
            m = g[["accuracy", "balanced_accuracy", "matthews_corrcoef", "auroc",
                   "n_predicted_positive"]].mean()
            lines.append(f"| {method} | {thr or 'null'} | {m.accuracy:.3f} | "
                         f"{m.balanced_accuracy:.3f} | {m.matthews_corrcoef:.3f} | "
                         f"{m.auroc:.3f} | {m.n_predicted_positive:.1f} |")
    return "\n".join(lines)


def test_protein_threshold_table_is_the_docs_table():
    table = protein_threshold_table()
    assert table in (REPO / "docs" / "usage.md").read_text(), table
