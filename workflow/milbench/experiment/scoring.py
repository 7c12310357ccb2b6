"""Scores: the row of one fitted fold (accuracy, AUROC, timings, diagnostics), the method files
of an experiment checked and joined into its scores, and their summary per data set x method.
"""
from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from sklearn.metrics import accuracy_score, roc_auc_score

from milbench.experiment.grid import RESERVED, label, to_json

RUN_COLUMNS = ("dataset", "method", "repeat", "fold", "diagnostics")


def fitted_pipeline(est):
    """The fitted pipeline of a method's estimator: GridSearchCV's refit, or the pipeline."""
    return est.best_estimator_ if hasattr(est, "best_estimator_") else est


def score_row(est, train, test, method, experiment, dataset, repeat, fold, ratio, fit_wall,
              fit_cpu, bags, transductive):
    """The scores row of a fitted pipeline on one fold's test bags."""
    t1 = time.process_time(), time.perf_counter()
    scores = est.decision_function(test)
    pred = est.predict(test)
    predict_cpu, predict_seconds = time.process_time() - t1[0], time.perf_counter() - t1[1]
    pipe = fitted_pipeline(est)
    y = test.labels
    row = {
        "experiment": experiment, "dataset": dataset,
        "selector": method["selector"]["name"], "selector_params": to_json(
            {k: v for k, v in method["selector"].items() if k != "name"}),
        "classifier": method["classifier"]["name"], "classifier_params": to_json(
            {k: v for k, v in method["classifier"].items() if k != "name"}),
        "method": f"{label(method['selector'])} + {label(method['classifier'])}",
        "repeat": repeat, "fold": fold, "train_ratio": ratio,
        "accuracy": accuracy_score(y, (np.asarray(pred) > 0).astype(int)),
        "auroc": roc_auc_score(y, scores) if len(set(y.tolist())) == 2 else np.nan,
        "fit_seconds": fit_wall, "fit_cpu_seconds": fit_cpu, "predict_seconds": predict_seconds,
        "predict_cpu_seconds": predict_cpu,
        "n_features": int(pipe[:-1].transform(test.subset([0])).n_features),
        "n_train": len(train), "n_test": len(test),
        "best_params": to_json(getattr(est, "best_params_", {})),
        "diagnostics": to_json({f"{step}.{k}": v for step in ("select", "classify")
                                for k, v in getattr(pipe[step], "diagnostics_", {}).items()}),
        "synthetic": bool(bags.meta.get("synthetic", False)),
        "transductive": bool(transductive),
    }
    for prefix, spec in (("sel", method["selector"]), ("clf", method["classifier"])):
        for k, v in spec.items():
            if k not in RESERVED:
                row[f"{prefix}.{k}"] = v if np.isscalar(v) else json.dumps(v, sort_keys=True)
    return row


def check_run_files(run_files):
    """Read every method file whole; a missing column or an unreadable (truncated, corrupt) file
    is a ValueError naming it. Returns a DataFrame (file, rows)."""
    rows = []
    for f in run_files:
        try:
            table = pq.read_table(f)
        except Exception as e:
            raise ValueError(f"{f}: cannot read the method's rows ({type(e).__name__}: {e}); "
                             f"delete it and rerun to recompute that method") from e
        missing = [c for c in RUN_COLUMNS if c not in table.column_names]
        if missing or table.num_rows == 0:
            raise ValueError(f"{f}: expected rows with columns {list(RUN_COLUMNS)}; "
                             f"found {table.num_rows} rows, missing {missing}")
        rows.append((str(f), table.num_rows))
    return pd.DataFrame(rows, columns=["file", "rows"])


def aggregate(run_files):
    """The method files of an experiment -> its scores (:func:`aggregate_rows`)."""
    return aggregate_rows([pd.read_parquet(f) for f in run_files])


def aggregate_rows(frames):
    """Concatenate per-fold rows into scores; order rows deterministically.  Every numeric
    fit diagnostic (the JSON ``diagnostics`` column) also gets a column ``diag.<step>.<key>``
    (e.g. ``diag.select.orthonormality_loss``) for figures and pandas filters."""
    scores = pd.concat(frames, ignore_index=True)
    diag = pd.DataFrame([{k: v for k, v in json.loads(d).items()
                          if isinstance(v, (int, float)) and not isinstance(v, bool)}
                         for d in scores["diagnostics"]], index=scores.index)
    scores = scores.join(diag.add_prefix("diag.").sort_index(axis=1))
    return scores.sort_values(["dataset", "method", "repeat", "fold"], kind="stable",
                              ignore_index=True)


def summarise(scores, metrics=("accuracy", "auroc")):
    """Mean and std of each metric and of fit / predict time per dataset × method (× training
    ratio): CPU seconds (the process's own, whatever else runs on the machine) and wall seconds
    beside them, carrying each method's parameter columns (sel.*, clf.*) and the synthetic
    flag.  Per-seed rows (a ``seed`` column: HyDR-MI ``combine="per-seed"``) are averaged with
    the folds, as Zafra et al. (2013, §4) average their five runs; ``seeds`` counts them."""
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
    params = [c for c in scores.columns if c.startswith(("sel.", "clf."))]
    if params:
        out = out.join(g[params].first())
    out["synthetic"] = g["synthetic"].any()
    if "seed" in scores and scores["seed"].notna().any():   # per-seed results, averaged above
        out["seeds"] = g["seed"].nunique()
    return out.reset_index()
