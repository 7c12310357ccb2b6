"""Scores: the row of one fitted fold (every metric of :data:`METRICS`, predicted positives,
timings, diagnostics), the method files of an experiment checked and joined into its scores, their
summary per data set x method, and the warnings a reader of accuracy must not miss
(imbalanced classes, one class predicted, fits stopped at their iteration cap).
"""
from __future__ import annotations

import json
import time
import warnings

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from scipy.integrate import trapezoid
from scipy.stats import rankdata
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import make_scorer
from sklearn.model_selection import TunedThresholdClassifierCV

from milbench.experiment.grid import RESERVED, method_label, to_json

RUN_COLUMNS = ("dataset", "method", "repeat", "fold", "diagnostics")

#: metric name (``metrics:``, ``inner_metric:``, score columns) -> scikit-learn scorer name
#: (the inner CV's ``scoring``); :func:`fold_metrics` gives what the same scorers' functions give.
METRICS = {
    "accuracy": "accuracy", "balanced_accuracy": "balanced_accuracy", "f1": "f1",
    "precision": "precision", "recall": "recall", "matthews_corrcoef": "matthews_corrcoef",
    "auroc": "roc_auc", "average_precision": "average_precision",
}


def rank_auroc(y_true, y_score):
    """Binary AUROC as the Mann-Whitney rank sum, (Σ ranks of the positives − n₊(n₊+1)/2) /
    (n₊n₋) with average ranks for ties: the area scikit-learn's ``roc_auc_score`` computes
    (tied scores count half), equal to it within 3e-16 (tests), without its input checks, which
    cost more than the area on an inner CV's small validation folds (docs/performance.md).
    The positive class is
    the larger label; one class gives NaN with ``UndefinedMetricWarning``, as scikit-learn."""
    y, s = np.asarray(y_true), np.asarray(y_score, dtype=float)
    if s.shape != y.shape or s.ndim != 1 or not np.isfinite(s).all():
        raise ValueError(f"rank_auroc: {y.shape[0]} labels need as many finite scores "
                         f"(got shape {s.shape})")
    classes = np.unique(y)
    if classes.size != 2:
        warnings.warn("Only one class is present in y_true. ROC AUC score is not defined in "
                      "that case.", UndefinedMetricWarning, stacklevel=2)
        return np.nan
    pos = y == classes[1]
    n_pos = int(pos.sum())
    n_neg = y.size - n_pos
    return float((rankdata(s)[pos].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def inner_scorer(metric):
    """The inner CV's ``scoring`` for ``metric``: scikit-learn's scorer :data:`METRICS` names;
    for auroc the same scorer (bag scores from ``decision_function``, else ``predict_proba``)
    around :func:`rank_auroc`."""
    if metric == "auroc":
        return make_scorer(rank_auroc, response_method=("decision_function", "predict_proba"))
    return METRICS[metric]


#: positive-bag share (of all test bags of a data set) below which, or above 1 minus which,
#: accuracy is flagged: it then mostly measures the majority rate.
IMBALANCE = 0.2


def fold_metrics(y, predictions, scores):
    """{metric: value} of one fold's test bags (:data:`METRICS`), each equal to the function
    behind scikit-learn's scorer (``accuracy_score``, ``balanced_accuracy_score``, the positive
    class's precision, recall and F1 of ``precision_recall_fscore_support(average="binary",
    zero_division=0.0)``, ``matthews_corrcoef``, ``roc_auc_score``, ``average_precision_score``)
    bit for bit, from one pass: the six label metrics from the 2 x 2 confusion matrix, AUROC and
    average precision from one sort of the bag scores (the true / false positive counts at each
    distinct score, as scikit-learn's ``confusion_matrix_at_thresholds``), without the input
    checks each scikit-learn call repeats (tests/test_method_rows.py compares them).
    ``y`` and ``predictions`` are 0 / 1; a precision with no predicted positive is 0, and
    AUROC and average precision are NaN on a one-class test set."""
    y, pred = np.asarray(y), np.asarray(predictions)
    if y.ndim != 1 or y.shape != pred.shape or not (np.isin(y, (0, 1)).all()
                                                   and np.isin(pred, (0, 1)).all()):
        raise ValueError(f"fold_metrics: labels and predictions must be 1-D arrays of 0 / 1 of "
                         f"one length (got shapes {y.shape} and {pred.shape}, values "
                         f"{np.unique(y).tolist()} and {np.unique(pred).tolist()})")
    n = y.size
    C = np.bincount(2 * y.astype(np.intp) + pred.astype(np.intp), minlength=4).reshape(2, 2)
    tp, true_sum, pred_sum = C[1, 1], C[1].sum(), C[:, 1].sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        per_class = np.diag(C) / C.sum(axis=1)      # recall of each class present in y
    # Matthews (1975) from the confusion matrix, as scikit-learn computes it
    t_sum, p_sum = C.sum(axis=1, dtype=np.float64), C.sum(axis=0, dtype=np.float64)
    n_samples = p_sum.sum()
    cov_ytyp = np.trace(C, dtype=np.float64) * n_samples - np.dot(t_sum, p_sum)
    cov_ypyp_ytyt = ((n_samples ** 2 - np.dot(p_sum, p_sum))
                     * (n_samples ** 2 - np.dot(t_sum, t_sum)))
    f1_denom = 1.0 * true_sum + pred_sum
    out = {"accuracy": float((C[0, 0] + tp) / n),
           "balanced_accuracy": float(np.mean(per_class[~np.isnan(per_class)])),
           "f1": float(2.0 * tp / f1_denom) if f1_denom else 0.0,
           "precision": float(tp / pred_sum) if pred_sum else 0.0,
           "recall": float(tp / true_sum) if true_sum else 0.0,
           "matthews_corrcoef": float(cov_ytyp / np.sqrt(cov_ypyp_ytyt)) if cov_ypyp_ytyt
           else 0.0,
           "auroc": np.nan, "average_precision": np.nan}
    if 0 < true_sum < n:
        out["auroc"], out["average_precision"] = _ranking_metrics(y, scores)
    return out


def _ranking_metrics(y, scores):
    """(AUROC, average precision) of 0 / 1 labels with both classes, by scikit-learn's
    arithmetic: the ROC curve without its collinear points (``roc_curve``'s
    ``drop_intermediate``) integrated by the trapezoidal rule, and the step integral of the
    precision-recall curve at every distinct score."""
    s = np.asarray(scores, dtype=float)
    if s.shape != y.shape or not np.isfinite(s).all():
        raise ValueError(f"fold_metrics: {y.size} labels need as many finite bag scores "
                         f"(got shape {s.shape}, {np.size(s) - np.isfinite(s).sum()} not finite)")
    order = np.argsort(s, kind="stable")[::-1]       # descending; ties end at the same index
    s = s[order]
    idx = np.r_[np.flatnonzero(np.diff(s)), y.size - 1]
    tps = np.cumsum(y[order].astype(np.float64))[idx]
    fps = 1 + idx.astype(np.float64) - tps
    roc_f, roc_t = fps, tps
    if fps.size > 2:
        corner = np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True]
        roc_f, roc_t = fps[corner], tps[corner]
    roc_f, roc_t = np.r_[0.0, roc_f], np.r_[0.0, roc_t]
    auroc = float(trapezoid(roc_t / roc_t[-1], roc_f / roc_f[-1]))
    precision = np.r_[(tps / (tps + fps))[::-1], 1.0]
    recall = np.r_[(tps / tps[-1])[::-1], 0.0]
    return auroc, float(max(0.0, -np.sum(np.diff(recall) * precision[:-1])))


def fitted_search(est):
    """A method's estimator without its tuned threshold (TunedThresholdClassifierCV's refit)."""
    return est.estimator_ if isinstance(est, TunedThresholdClassifierCV) else est


def fitted_pipeline(est):
    """The fitted pipeline of a method's estimator: GridSearchCV's refit, or the pipeline."""
    est = fitted_search(est)
    return est.best_estimator_ if hasattr(est, "best_estimator_") else est


def score_row(est, train, test, method, experiment, dataset, repeat, fold, ratio, fit_wall,
              fit_cpu, bags, transductive):
    """The scores row of a fitted pipeline on one fold's test bags."""
    t1 = time.process_time(), time.perf_counter()
    scores = est.decision_function(test)
    pred = (np.asarray(est.predict(test)) > 0).astype(int)   # labels 0 / 1 whatever classes_
    predict_cpu, predict_seconds = time.process_time() - t1[0], time.perf_counter() - t1[1]
    pipe = fitted_pipeline(est)
    y = test.labels
    row = {
        "experiment": experiment, "dataset": dataset,
        "selector": method["selector"]["name"], "selector_params": to_json(
            {k: v for k, v in method["selector"].items() if k != "name"}),
        "classifier": method["classifier"]["name"], "classifier_params": to_json(
            {k: v for k, v in method["classifier"].items() if k != "name"}),
        "method": method_label(method["selector"], method["classifier"]),
        "repeat": repeat, "fold": fold, "train_ratio": ratio,
        **fold_metrics(y, pred, scores),
        "n_positive": int(np.sum(y == 1)), "n_predicted_positive": int(np.sum(pred == 1)),
        "fit_seconds": fit_wall, "fit_cpu_seconds": fit_cpu, "predict_seconds": predict_seconds,
        "predict_cpu_seconds": predict_cpu,
        "n_features": int(pipe[:-1].transform(test.subset([0])).n_features),
        "n_train": len(train), "n_test": len(test),
        "best_params": to_json(getattr(fitted_search(est), "best_params_", {})),
        "diagnostics": to_json({f"{step}.{k}": v for step in ("select", "classify")
                                for k, v in getattr(pipe[step], "diagnostics_", {}).items()}),
        "synthetic": bool(bags.meta.get("synthetic", False)),
        "transductive": bool(transductive),
    }
    if isinstance(est, TunedThresholdClassifierCV):
        row["threshold"] = float(est.best_threshold_)
    for prefix, spec in (("sel", method["selector"]), ("clf", method["classifier"])):
        for k, v in spec.items():
            if k not in RESERVED:
                row[f"{prefix}.{k}"] = v if np.isscalar(v) else json.dumps(v, sort_keys=True)
    return row


def recompute_hint(f):
    """What brings a method file back: the default target remakes a missing method file (it
    names every one) and the scores over it; a target such as scores.parquet alone does not."""
    return (f"to recompute that method: rm {f} && snakemake --cores N (the same command with "
            f"your --configfile and no target)")


def check_run_files(run_files):
    """Read every method file whole; a missing column or an unreadable (truncated, corrupt) file
    is a ValueError naming it and the commands that recompute it. Returns a DataFrame
    (file, rows)."""
    rows = []
    for f in run_files:
        try:
            table = pq.read_table(f)
        except Exception as e:
            raise ValueError(f"{f}: cannot read the method's rows ({type(e).__name__}: {e}); "
                             f"{recompute_hint(f)}") from e
        missing = [c for c in RUN_COLUMNS if c not in table.column_names]
        if missing or table.num_rows == 0:
            raise ValueError(f"{f}: expected rows with columns {list(RUN_COLUMNS)}; "
                             f"found {table.num_rows} rows, missing {missing}; "
                             f"{recompute_hint(f)}")
        rows.append((str(f), table.num_rows))
    return pd.DataFrame(rows, columns=["file", "rows"])


def aggregate(run_files, labels=None):
    """The method files of an experiment -> its scores (:func:`aggregate_rows`)."""
    return aggregate_rows([pd.read_parquet(f) for f in run_files], labels)


def aggregate_rows(frames, labels=None):
    """Concatenate per-fold rows into scores; order rows deterministically.  ``labels``
    ({automatic method label: configured ``label:``}, :func:`~milbench.experiment.grid.method_labels`)
    renames methods here, so a new label reruns no fit.  Every numeric fit diagnostic (the
    JSON ``diagnostics`` column) also gets a column ``diag.<step>.<key>`` (e.g.
    ``diag.select.orthonormality_loss``) for figures and pandas filters."""
    scores = pd.concat(frames, ignore_index=True)
    if labels:
        scores["method"] = scores["method"].replace(labels)
    diag = pd.DataFrame([{k: v for k, v in json.loads(d).items()
                          if isinstance(v, (int, float)) and not isinstance(v, bool)}
                         for d in scores["diagnostics"]], index=scores.index)
    scores = scores.join(diag.add_prefix("diag.").sort_index(axis=1))
    return scores.sort_values(["dataset", "method", "repeat", "fold"], kind="stable",
                              ignore_index=True)


def fold_flags(rows):
    """Per row of a method's scores: ``one_class`` ("none" / "all" when every test bag was
    predicted negative / positive, else "") and ``not_converged`` (some fit of the fold stopped
    at its iteration cap: a ``*.converged`` diagnostic of 0)."""
    pred = rows.get("n_predicted_positive", pd.Series(np.nan, index=rows.index))
    one = np.where(pred == 0, "none", np.where(pred == rows["n_test"], "all", ""))
    capped = rows["diagnostics"].map(lambda d: any(
        k.endswith("converged") and v == 0 for k, v in json.loads(d).items()))
    return pd.DataFrame({"one_class": one, "not_converged": capped.astype(bool)},
                        index=rows.index)


def method_warnings(rows):
    """What a reader of one method's rows on one data set must not miss, in words: an
    imbalanced test set (accuracy then mostly measures the majority rate), folds where every
    bag was predicted one class, folds whose fit stopped at its iteration cap."""
    flags = fold_flags(rows)
    rate = (rows["n_positive"].sum() / rows["n_test"].sum()
            if "n_positive" in rows and rows["n_test"].sum() else np.nan)
    return _said(len(rows), rate, int((flags["one_class"] == "none").sum()),
                 int((flags["one_class"] == "all").sum()), int(flags["not_converged"].sum()))


def _said(n, rate, n_none, n_all, n_capped):
    """:func:`method_warnings` of ``n`` folds from their counts."""
    out = []
    if min(rate, 1 - rate) < IMBALANCE:          # False for NaN (no counts in old rows)
        out.append(f"positive rate {rate:.0%}: accuracy mostly measures the majority rate "
                   f"({max(rate, 1 - rate):.3f}); read balanced_accuracy, "
                   "matthews_corrcoef or auroc")
    out += [f"predicted {what} in {k} of {n} folds"
            for k, what in ((n_none, "no positive bag"), (n_all, "every bag positive")) if k]
    if n_capped:
        out.append(f"stopped at its iteration cap (not converged) in {n_capped} of {n} folds")
    return out


def summarise(scores, metrics=("accuracy", "auroc")):
    """Mean and std of each metric and of fit / predict time per dataset × method (× training
    ratio): CPU seconds (the process's own, whatever else runs on the machine) and wall seconds
    beside them, carrying each method's parameter columns (sel.*, clf.*) and the synthetic
    flag.  Per-seed rows (a ``seed`` column: HyDR-MI ``combine="per-seed"``) are averaged with
    the folds, as Zafra et al. (2013, §4) average their five runs; ``seeds`` counts them.
    ``positive_rate``, ``one_class_folds``, ``not_converged_folds`` and ``warnings``
    (:func:`method_warnings`) say where the means mislead."""
    keys = ["dataset", "method", "selector", "classifier"]
    if scores["train_ratio"].notna().any():
        keys.append("train_ratio")
    times = [c for c in ("fit_cpu_seconds", "predict_cpu_seconds", "fit_seconds",
                         "predict_seconds") if c in scores]
    cols = [m for m in metrics if m in scores] + times + ["n_features"]
    g = scores.groupby(keys, sort=True, dropna=False)
    out = g[cols].mean().add_suffix("_mean").join(g[cols].std(ddof=1).add_suffix("_std"))
    out["n"] = g.size()
    out = out[[f"{c}_{s}" for c in cols for s in ("mean", "std")] + ["n"]]
    rate = (g["n_positive"].sum() / g["n_test"].sum() if "n_positive" in scores
            else pd.Series(np.nan, index=out.index))
    if "n_positive" in scores:
        out["positive_rate"] = rate
    flags = fold_flags(scores)
    counts = (pd.DataFrame({"none": flags["one_class"] == "none",
                            "all": flags["one_class"] == "all",
                            "capped": flags["not_converged"]})
              .join(scores[keys]).groupby(keys, sort=True, dropna=False).sum())
    out["one_class_folds"] = counts["none"] + counts["all"]
    out["not_converged_folds"] = counts["capped"]
    out["warnings"] = ["; ".join(_said(n, r, a, b, c)) for n, r, a, b, c in zip(
        out["n"], rate, counts["none"], counts["all"], counts["capped"])]
    params = [c for c in scores.columns if c.startswith(("sel.", "clf."))]
    if params:
        out = out.join(g[params].first())
    out["synthetic"] = g["synthetic"].any()
    if "seed" in scores and scores["seed"].notna().any():   # per-seed results, averaged above
        out["seeds"] = g["seed"].nunique()
    return out.reset_index()
