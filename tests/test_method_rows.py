"""A method's rows through the run unit (forked workers, finished cells appended to the job's
journal and read back by a resumed attempt) equal one-cell fits computed directly, and their
metric columns equal scikit-learn's metric functions on those fits' test predictions, bit for
bit (milbench.experiment.runner, finished_cells, scoring.fold_metrics)."""
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from milbench.data.folds import make_folds, split
from milbench.data.sources import load_builtin
from milbench.experiment.config import experiment_defaults, experiment_settings
from milbench.experiment.finished_cells import FinishedCells
from milbench.experiment.fold import build_estimator, run_fold
from milbench.experiment.grid import expand_methods
from milbench.experiment.runner import run_method
from milbench.experiment.scoring import fold_metrics

TIMING = ["fit_seconds", "fit_cpu_seconds", "predict_seconds", "predict_cpu_seconds"]
EXP = experiment_defaults({"datasets": ["musk1"],
                           "protocol": {"kind": "kfold", "folds": 3, "repeats": 2, "seed": 0},
                           "classifiers": [{"name": "mi-simple"},
                                           {"name": "citation-knn", "references": 2,
                                            "citers": 4}]})
CELLS = [(r, f) for r in (0, 1) for f in (0, 1, 2)]


def sklearn_metrics(y, pred, scores):
    """The eight metrics by scikit-learn's own functions (the scorers' functions)."""
    both = np.unique(y).size == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        precision, recall, f1, _ = skm.precision_recall_fscore_support(
            y, pred, average="binary", zero_division=0.0)
        return {"accuracy": skm.accuracy_score(y, pred),
                "balanced_accuracy": skm.balanced_accuracy_score(y, pred),
                "f1": f1, "precision": precision, "recall": recall,
                "matthews_corrcoef": skm.matthews_corrcoef(y, pred),
                "auroc": skm.roc_auc_score(y, scores) if both else np.nan,
                "average_precision": skm.average_precision_score(y, scores) if both else np.nan}


@pytest.fixture(scope="module")
def musk1():
    bags = load_builtin("musk1", offline=True)
    return bags, make_folds(bags.bag_ids, bags.labels, EXP["protocol"])


@pytest.mark.parametrize("method", expand_methods(EXP), ids=lambda m: m["classifier"]["name"])
def test_rows_of_the_run_unit_equal_direct_fits(musk1, tmp_path, method):
    bags, folds = musk1
    settings = experiment_settings(EXP)
    finished = FinishedCells(tmp_path / "m.parquet.cells", "k")
    run_method(bags, folds, method, settings, experiment="e", dataset="musk1",
               cells=CELLS[1:4], threads=2, finished=finished)     # a stopped attempt
    resumed = FinishedCells(tmp_path / "m.parquet.cells", "k")
    rows = run_method(bags, folds, method, settings, experiment="e", dataset="musk1",
                      cells=CELLS, threads=2, finished=resumed)
    assert resumed.loaded == CELLS[1:4]
    direct = pd.concat([run_fold(bags, folds, method, experiment="e", dataset="musk1",
                                 scale=settings["scale"], repeat=r, fold=f,
                                 seed=settings["protocol"]["seed"]) for r, f in CELLS],
                       ignore_index=True)
    pd.testing.assert_frame_equal(rows.drop(columns=TIMING), direct.drop(columns=TIMING),
                                  check_exact=True)
    for (r, f), row in zip(CELLS, rows.itertuples()):
        tr, te, _ = split(folds, r, f, bags.bag_ids)
        train, test = bags.subset(tr), bags.subset(te)
        est = build_estimator(settings["scale"], method["selector"], method["classifier"],
                              seed=settings["protocol"]["seed"] + r).fit(train, train.labels)
        pred = (np.asarray(est.predict(test)) > 0).astype(int)
        expected = sklearn_metrics(test.labels, pred, est.decision_function(test))
        assert {k: getattr(row, k) for k in expected} == expected


def test_fold_metrics_equal_sklearn_bit_for_bit():
    """300 random folds of 1-80 bags: scores with ties or without, one-class test sets and
    one-class predictions; every metric equal to scikit-learn's function exactly (NaN where it
    gives NaN)."""
    rng = np.random.default_rng(0)
    for i in range(300):
        n = int(rng.integers(1, 81))
        y = (rng.integers(0, 2, n) if i % 7 else np.full(n, i % 2)).astype(np.int8)
        s = [rng.normal(size=n) + y, rng.integers(-2, 3, n).astype(float),
             np.round(rng.normal(size=n) * (1 + y), 1), rng.normal(size=n) * 1e-3][i % 4]
        pred = (s > rng.normal(0, .5)).astype(int) if i % 5 else np.full(n, (i // 5) % 2)
        ours, ref = fold_metrics(y, pred, s), sklearn_metrics(y, pred, s)
        assert list(ours) == list(ref)
        for k, v in ref.items():
            assert ours[k] == v or (np.isnan(v) and np.isnan(ours[k])), (i, k, ours[k], v)


def test_fold_metrics_name_bad_inputs():
    with pytest.raises(ValueError, match=r"0 / 1 .*values \[-1, 1\]"):
        fold_metrics(np.array([-1, 1]), np.array([0, 1]), np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match="2 labels need as many finite bag scores"):
        fold_metrics(np.array([0, 1]), np.array([0, 1]), np.array([np.nan, 0.2]))
