"""Experiment plumbing: expand config grids into methods, run one (method, repeat, fold) job,
aggregate per-fold rows into scores and summaries.

Config conventions (workflow/schemas/config.schema.yaml):
* a selector / classifier entry is ``{name: <registry name>, <param>: value, ...}``;
* a list-valued parameter expands into a grid of separate methods (to pass a literal list,
  wrap it: ``[[a, b]]``); dict values are passed whole;
* ``tune: {param: [values]}`` is an inner-CV search space: the job runs a stratified
  ``inner_folds``-fold GridSearchCV on the training bags of the outer fold only;
* ``transductive: true`` (experiment level) gives every fit the dataset's other bags, labels
  removed, as unlabeled nodes (:class:`Unlabeled`, :class:`MILPipeline`) — the setting of
  the WebKB runs of Zhang et al. (2011, NIPS, §3.1), for classifiers whose ``fit`` takes
  ``unlabeled``.
"""
from __future__ import annotations

import copy
import hashlib
import inspect
import itertools
import json
import tempfile
import time
from dataclasses import replace

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.pipeline import Pipeline

from milbench.data.bags import Bags

RESERVED = ("name", "tune")


class Unlabeled:
    """A dataset's bags with their labels removed: the transductive context of a fit.

    Deliberately not array-like, so GridSearchCV hands it whole to every inner fit; each fit
    takes as unlabeled nodes the bags it is *not* trained on (:meth:`complement`): the outer
    test bags, and inside the inner CV also the inner validation bags.  Labels are zeroed and
    instance labels dropped here, so no fit can read them.
    """

    def __init__(self, bags: Bags):
        self.bags = replace(bags, labels=np.zeros(len(bags), np.int8), instance_labels=None)

    def complement(self, X):
        """Bags not in ``X`` (by bag id), keeping every bag-level edge of the dataset (so links
        between ``X`` and the unlabeled bags survive) and the instance edges among them."""
        keep = ~np.isin(self.bags.bag_ids, np.asarray(X.bag_ids).astype(str))
        rest = self.bags.subset(keep)
        edges = self.bags.edges
        if edges is not None:
            edges = pd.concat([edges[edges["level"] == "bag"],
                               rest.edges[rest.edges["level"] == "instance"]], ignore_index=True)
        return replace(rest, edges=edges)


class MILPipeline(Pipeline):
    """scikit-learn Pipeline whose ``fit(X, y, unlabeled=Unlabeled)`` passes the unlabeled
    bags, transformed by the steps fitted on ``X``, to a final estimator whose ``fit`` takes
    ``unlabeled`` (MILSD, LC-MF); other final estimators are fitted as usual."""

    def fit(self, X, y=None, unlabeled=None):
        if unlabeled is None or not self._transductive():
            return super().fit(X, y)
        Xt = X
        for _, step in self.steps[:-1]:
            Xt = step.fit_transform(Xt, y)
        return self._fit_final(Xt, X, y, unlabeled)

    def refit_final(self, X, y=None, unlabeled=None):
        """Refit only the final estimator, on X through the already fitted steps."""
        return self._fit_final(self[:-1].transform(X), X, y, unlabeled)

    def _transductive(self):
        return "unlabeled" in inspect.signature(self.steps[-1][1].fit).parameters

    def _fit_final(self, Xt, X, y, unlabeled):
        if unlabeled is not None and self._transductive():
            self.steps[-1][1].fit(Xt, y, unlabeled=self[:-1].transform(unlabeled.complement(X)))
        else:
            self.steps[-1][1].fit(Xt, y)
        return self


def expand_grid(spec):
    """One config entry -> list of concrete entries (lists expand, ``tune`` is kept whole)."""
    keys = [k for k, v in spec.items() if k not in RESERVED and isinstance(v, list)]
    out = []
    for combo in itertools.product(*(spec[k] for k in keys)):
        e = dict(spec)
        e.update(zip(keys, combo))
        out.append(e)
    return out


def _canon(spec):
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), default=str)


def method_id(spec):
    """Stable, file-name safe id: name (a 'module:Class' path with ':' as '-'), plus a short
    hash of its parameters when it has any."""
    name = spec["name"].replace(":", "-")
    params = {k: v for k, v in spec.items() if k != "name"}
    if not params:
        return name
    return f"{name}.{hashlib.sha1(_canon(params).encode()).hexdigest()[:8]}"


def label(spec):
    """Readable label: name(param=value, ...)."""
    params = {k: v for k, v in spec.items() if k != "name"}
    if not params:
        return spec["name"]
    inner = ", ".join(f"{k}={json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v}"
                      for k, v in sorted(params.items()))
    return f"{spec['name']}({inner})"


def expand_methods(exp):
    """All (selector entry, classifier entry) pairs of an experiment (defaults filled), with ids."""
    sels = [e for s in exp["selectors"] for e in expand_grid(s)]
    clfs = [e for c in exp["classifiers"] for e in expand_grid(c)]
    return [{"selector": s, "classifier": c, "selector_id": method_id(s),
             "classifier_id": method_id(c)} for s in sels for c in clfs]


def caches_selector_fits(selector, classifier):
    """True when an inner CV would refit the same selector once per classifier setting and
    the selector does not reuse its fits itself: the pipeline then caches selector fits with
    joblib (``Pipeline(memory=)``).  A selector class that declares
    ``reuses_fits_in_process = True`` (MIDR: its C1 x C2 grid joined with MILR's C is served
    from an in-process cache) is left out, since the joblib cache's hashing, pickling and
    loading cost more than it saves there (11 % of a musk1 MIDR cell)."""
    from milbench.registry import resolve

    return shares_selector_fits(selector, classifier) and not getattr(
        resolve("selector", selector["name"]), "reuses_fits_in_process", False)


def shares_selector_fits(selector, classifier):
    """True when an inner CV fits each selector setting once for all classifier settings
    (through the joblib cache of :func:`caches_selector_fits`, or the selector's own
    in-process reuse)."""
    return selector["name"] != "none" and bool(classifier.get("tune"))


def check_method(selector, classifier):
    """Configuration errors of one method, found without data (called when the workflow is
    parsed): unknown names or parameters, ``tune`` keys the estimator lacks, values that an
    estimator's ``_parameter_constraints`` (scikit-learn's declaration) refuses, and an unknown
    single-instance ``estimator`` / ``estimator_params`` — every grid point and nested registry
    entry included. Raises ValueError naming the method and key."""
    from milbench.base import validate_params
    from milbench.registry import make
    from milbench.utils.learners import make_estimator

    for kind, spec in (("selector", selector), ("classifier", classifier)):
        base = {k: (_strip_tune(classifier) if v == "@classifier" else v)
                for k, v in spec.items() if k != "tune"}
        try:
            est = make(kind, base)
        except KeyError as e:
            raise ValueError(e.args[0]) from None
        for v in base.values():                  # a nested entry: an ensemble's base, ...
            if isinstance(v, dict) and "name" in v:
                check_method({"name": "none"}, v)
        params = est.get_params(deep=False)
        tune = spec.get("tune", {})
        bad = sorted(set(tune) - set(params))
        if bad:
            raise ValueError(f"{kind} {spec['name']}: tune key(s) {bad} are not parameters; "
                             f"valid: {sorted(params)}")
        for combo in itertools.product(*tune.values()):
            est.set_params(**dict(zip(tune, combo)))
            try:
                validate_params(est)
                if isinstance(est.get_params(deep=False).get("estimator"), str):
                    make_estimator(est.estimator, getattr(est, "estimator_params", None))
            except (ValueError, TypeError, KeyError) as e:
                raise ValueError(f"{kind} {spec['name']}: {e.args[0] if e.args else e}") from None
    per_seed = "per-seed" in [selector.get("combine"), *selector.get("tune", {}).get("combine", [])]
    if per_seed and (selector.get("tune") or classifier.get("tune")):
        raise ValueError(f"selector {selector['name']}: {PER_SEED_UNTUNED}")


PER_SEED_UNTUNED = ("per-seed results cannot be tuned (an inner grid search picks one "
                    "setting); drop `tune`")


def _strip_tune(spec):
    return {k: v for k, v in spec.items() if k != "tune"}


def build_estimator(scale, selector, classifier, seed=0, inner_folds=5, inner_metric="accuracy",
                    n_jobs=1, views=None, memory=None):
    """Pipeline(scale -> select -> classify), wrapped in GridSearchCV when anything is tuned.
    ``memory``: a cache directory for the pipeline's transformer fits (scikit-learn
    ``Pipeline(memory=...)``), so a selector is fitted once per inner fold and setting
    (:func:`caches_selector_fits` says when ``run_fold`` passes one)."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from milbench.preprocessing import BagScaler
    from milbench.registry import make

    # a selector parameter given as "@classifier" is this run's classifier (HyDR-MI's GA target)
    sel_spec = {k: (_strip_tune(classifier) if v == "@classifier" else v)
                for k, v in _strip_tune(selector).items()}
    sel, clf = make("selector", sel_spec), make("classifier", _strip_tune(classifier))
    grid = {f"select__{k}": v for k, v in selector.get("tune", {}).items()}
    grid.update({f"classify__{k}": v for k, v in classifier.get("tune", {}).items()})
    for est in (sel, clf):
        params = est.get_params()
        if "random_state" in params and params["random_state"] is None:
            est.set_params(random_state=seed)
        if views is not None and "views" in params and params["views"] is None:
            est.set_params(views=views)
        if "n_jobs" in params and params["n_jobs"] is None and not grid:
            est.set_params(n_jobs=n_jobs)   # the rule's threads go to the method, or to the CV
    pipe = MILPipeline([("scale", BagScaler(scale)), ("select", sel), ("classify", clf)],
                       memory=memory)
    if not grid:
        return pipe
    scoring = {"accuracy": "accuracy", "auroc": "roc_auc"}[inner_metric]
    return GridSearchCV(pipe, grid, cv=StratifiedKFold(inner_folds, shuffle=True, random_state=seed),
                        scoring=scoring, n_jobs=n_jobs, refit=True, error_score="raise")


def _fitted_pipeline(est):
    return est.best_estimator_ if hasattr(est, "best_estimator_") else est


def dataset_views(bags):
    """The view sizes a multi-view selector gets (None for a single-view dataset)."""
    return [b - a for a, b in bags.views.values()] if len(bags.views) > 1 else None


def run_fold(bags: Bags, folds, method, *, experiment, dataset, scale, repeat, fold,
             seed=0, inner_folds=5, inner_metric="accuracy", n_jobs=1, transductive=False,
             stage=None):
    """Fit on the training bags of one fold, score the test bags; returns a one-row DataFrame
    (one row per seed, with a ``seed`` column, when the fitted selector reports independent
    per-seed results in ``result_supports_``: HyDR-MI's ``combine="per-seed"``, the paper's
    protocol of averaging the results of independent runs).

    ``transductive``: the fit also sees every other bag of ``bags`` without labels.
    ``stage``: the selector's stored fold stage (:mod:`milbench.experiment.stages`) for this fold; it must
    serve the selector's fit on the outer training bags (an error otherwise)."""

    from milbench.data.folds import split
    from milbench.experiment import stages

    tr, te, ratio = split(folds, repeat, fold, bags.bag_ids)
    train, test = bags.subset(tr), bags.subset(te)
    views = dataset_views(bags)
    with (tempfile.TemporaryDirectory(prefix="milbench-cache-") as cache,
          stages.provided(*([stage] if stage is not None else []), require_use=True)):
        est = build_estimator(scale, method["selector"], method["classifier"], seed=seed + repeat,
                              inner_folds=inner_folds, inner_metric=inner_metric, n_jobs=n_jobs,
                              views=views, memory=cache if caches_selector_fits(
                                  method["selector"], method["classifier"]) else None)
        unlabeled = {"unlabeled": Unlabeled(bags)} if transductive else {}
        t0 = time.process_time(), time.perf_counter()
        est.fit(train, train.labels, **unlabeled)
        fit_cpu, fit_wall = time.process_time() - t0[0], time.perf_counter() - t0[1]
    pipe = _fitted_pipeline(est)
    per_seed = getattr(pipe["select"], "result_supports_", None)
    if per_seed is None:
        return pd.DataFrame([_score_row(est, train, test, method, experiment, dataset, repeat,
                                        fold, ratio, fit_wall, fit_cpu, bags, transductive)])
    if pipe is not est:
        raise ValueError(f"{label(method['selector'])}: {PER_SEED_UNTUNED}")
    rows = []
    for seed, support in enumerate(per_seed):      # the classifier refitted on each seed's subset
        t0 = time.process_time(), time.perf_counter()
        sel = copy.copy(pipe["select"])
        sel.support_ = np.asarray(support)
        seed_pipe = MILPipeline([("scale", pipe["scale"]), ("select", sel),
                                 ("classify", clone(pipe["classify"]))])
        seed_pipe.refit_final(train, train.labels, **unlabeled)
        rows.append({**_score_row(seed_pipe, train, test, method, experiment, dataset, repeat,
                                  fold, ratio, fit_wall + time.perf_counter() - t0[1],
                                  fit_cpu + time.process_time() - t0[0], bags, transductive),
                     "seed": seed})
    return pd.DataFrame(rows)


def _score_row(est, train, test, method, experiment, dataset, repeat, fold, ratio, fit_wall,
               fit_cpu, bags, transductive):
    """The scores row of a fitted pipeline on one fold's test bags."""
    from sklearn.metrics import accuracy_score, roc_auc_score

    t1 = time.perf_counter()
    scores = est.decision_function(test)
    pred = est.predict(test)
    predict_seconds = time.perf_counter() - t1
    pipe = _fitted_pipeline(est)
    y = test.labels
    row = {
        "experiment": experiment, "dataset": dataset,
        "selector": method["selector"]["name"], "selector_params": _canon(
            {k: v for k, v in method["selector"].items() if k != "name"}),
        "classifier": method["classifier"]["name"], "classifier_params": _canon(
            {k: v for k, v in method["classifier"].items() if k != "name"}),
        "method": f"{label(method['selector'])} + {label(method['classifier'])}",
        "repeat": repeat, "fold": fold, "train_ratio": ratio,
        "accuracy": accuracy_score(y, (np.asarray(pred) > 0).astype(int)),
        "auroc": roc_auc_score(y, scores) if len(set(y.tolist())) == 2 else np.nan,
        "fit_seconds": fit_wall, "fit_cpu_seconds": fit_cpu, "predict_seconds": predict_seconds,
        "n_features": int(pipe[:-1].transform(test.subset([0])).n_features),
        "n_train": len(train), "n_test": len(test),
        "best_params": _canon(getattr(est, "best_params_", {})),
        "diagnostics": _canon({f"{step}.{k}": v for step in ("select", "classify")
                               for k, v in getattr(pipe[step], "diagnostics_", {}).items()}),
        "synthetic": bool(bags.meta.get("synthetic", False)),
        "transductive": bool(transductive),
    }
    for prefix, spec in (("sel", method["selector"]), ("clf", method["classifier"])):
        for k, v in spec.items():
            if k not in RESERVED:
                row[f"{prefix}.{k}"] = v if np.isscalar(v) else json.dumps(v, sort_keys=True)
    return row


RUN_COLUMNS = ("dataset", "method", "repeat", "fold", "diagnostics")


def check_run_files(run_files):
    """Read every method file whole; a missing column or an unreadable (truncated, corrupt) file
    is a ValueError naming it. Returns a DataFrame (file, rows)."""
    import pyarrow.parquet as pq

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
    """Mean and std of each metric and of fit time per dataset × method (× training ratio),
    carrying each method's parameter columns (sel.*, clf.*) and the synthetic flag.  Per-seed
    rows (a ``seed`` column: HyDR-MI ``combine="per-seed"``) are averaged with the folds, as
    Zafra et al. (2013, §4) average their five runs; ``seeds`` counts them."""
    keys = ["dataset", "method", "selector", "classifier"]
    if scores["train_ratio"].notna().any():
        keys.append("train_ratio")
    cols = [m for m in metrics if m in scores] + ["fit_seconds", "predict_seconds", "n_features"]
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
