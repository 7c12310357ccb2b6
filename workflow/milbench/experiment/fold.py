"""One (method, repeat, fold) cell: the estimator of a method (scale -> select -> classify, in
an inner-CV grid search when anything is tuned), fitted on the fold's training bags and scored
on its test bags.

``transductive: true`` (experiment level) gives every fit the dataset's other bags, labels
removed, as unlabeled nodes (:class:`Unlabeled`, :class:`MILPipeline`): the setting of the
WebKB runs of Zhang et al. (2011, NIPS, §3.1), for classifiers whose ``fit`` takes
``unlabeled``.
"""
from __future__ import annotations

import contextlib
import copy
import inspect
import tempfile
import time
from dataclasses import replace

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold, TunedThresholdClassifierCV
from sklearn.pipeline import Pipeline

from milbench.data.bags import Bags
from milbench.data.folds import split
from milbench.experiment.grid import PER_SEED_UNTUNED, label, strip_tune
from milbench.experiment.scoring import fitted_pipeline, inner_scorer, score_row
from milbench.preprocessing import BagScaler
from milbench.registry import make, resolve
from milbench.selectors.stage_store import STORE_PARAM, StageStore
from milbench.utils.cache import reuses_fits


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


def caches_selector_fits(selector, classifier):
    """True when an inner CV would refit the same selector once per classifier setting and
    the selector does not reuse its fits itself: the pipeline then caches selector fits with
    joblib (``Pipeline(memory=)``).  A selector class that reuses its own fits
    (:func:`milbench.utils.cache.reuses_fits`; MIDR: its C1 x C2 grid joined with MILR's C is
    served from its in-process cache, which the runner switches on for every cell) is left out,
    since the joblib cache's hashing, pickling and loading cost more than it saves there (11 %
    of a musk1 MIDR cell)."""
    return shares_selector_fits(selector, classifier) and not reuses_fits(
        resolve("selector", selector["name"]))


def shares_selector_fits(selector, classifier):
    """True when an inner CV fits each selector setting once for all classifier settings
    (through the joblib cache of :func:`caches_selector_fits`, or the selector's own
    in-process reuse)."""
    return selector["name"] != "none" and bool(classifier.get("tune"))


def build_estimator(scale, selector, classifier, seed=0, inner_folds=5, inner_metric="accuracy",
                    n_jobs=1, views=None, memory=None, stages=None, threshold=None):
    """Pipeline(scale -> select -> classify), wrapped in GridSearchCV when anything is tuned,
    and in scikit-learn's TunedThresholdClassifierCV (the bag-score threshold that maximises
    ``inner_metric`` over ``inner_folds`` stratified folds of the training bags, then a refit
    on all of them) when ``threshold="auto"``.
    ``memory``: a cache directory for the pipeline's transformer fits (scikit-learn
    ``Pipeline(memory=...)``), so a selector is fitted once per inner fold and setting
    (:func:`caches_selector_fits` says when ``run_fold`` passes one).  ``stages``: a
    :class:`~milbench.selectors.stage_store.StageStore` the selector's fits read their fold
    stage from (its ``stages`` parameter; every GridSearchCV clone shares it)."""
    # a selector parameter given as "@classifier" is this run's classifier (HyDR-MI's GA target)
    sel_spec = {k: (strip_tune(classifier) if v == "@classifier" else v)
                for k, v in strip_tune(selector).items()}
    sel, clf = make("selector", sel_spec), make("classifier", strip_tune(classifier))
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
    if stages is not None:
        sel.set_params(**{STORE_PARAM: stages})
    pipe = MILPipeline([("scale", BagScaler(scale)), ("select", sel), ("classify", clf)],
                       memory=memory)
    cv = StratifiedKFold(inner_folds, shuffle=True, random_state=seed)
    est = pipe if not grid else GridSearchCV(pipe, grid, cv=cv, scoring=inner_scorer(inner_metric),
                                             n_jobs=n_jobs, refit=True, error_score="raise")
    if threshold == "auto":
        est = TunedThresholdClassifierCV(est, scoring=inner_scorer(inner_metric), cv=cv,
                                         response_method="decision_function", refit=True)
    return est


def dataset_views(bags):
    """The view sizes a multi-view selector gets (None for a single-view dataset)."""
    return [b - a for a, b in bags.views.values()] if len(bags.views) > 1 else None


def run_fold(bags: Bags, folds, method, *, experiment, dataset, scale, repeat, fold,
             seed=0, inner_folds=5, inner_metric="accuracy", n_jobs=1, transductive=False,
             stage=None, threshold=None):
    """Fit on the training bags of one fold, score the test bags; returns a one-row DataFrame
    (one row per seed, with a ``seed`` column, when the fitted selector reports independent
    per-seed results in ``result_supports_``: HyDR-MI's ``combine="per-seed"``, the paper's
    protocol of averaging the results of independent runs).

    ``transductive``: the fit also sees every other bag of ``bags`` without labels.
    ``threshold``: None (score > 0 is positive) or "auto" (:func:`build_estimator`).
    ``stage``: the selector's stored fold stage (:mod:`milbench.experiment.stages`) for this
    fold; it must serve the selector's fit on the outer training bags (an error otherwise)."""
    tr, te, ratio = split(folds, repeat, fold, bags.bag_ids)
    train, test = bags.subset(tr), bags.subset(te)
    views = dataset_views(bags)
    store = None if stage is None else StageStore([stage])
    cached = caches_selector_fits(method["selector"], method["classifier"])
    with (tempfile.TemporaryDirectory(prefix="milbench-cache-") if cached
          else contextlib.nullcontext()) as cache:
        est = build_estimator(scale, method["selector"], method["classifier"], seed=seed + repeat,
                              inner_folds=inner_folds, inner_metric=inner_metric, n_jobs=n_jobs,
                              views=views, memory=cache, stages=store, threshold=threshold)
        unlabeled = {"unlabeled": Unlabeled(bags)} if transductive else {}
        t0 = time.process_time(), time.perf_counter()
        est.fit(train, train.labels, **unlabeled)
        fit_cpu, fit_wall = time.process_time() - t0[0], time.perf_counter() - t0[1]
    if store is not None:
        store.require_use()
    pipe = fitted_pipeline(est)
    per_seed = getattr(pipe["select"], "result_supports_", None)
    if per_seed is None:
        return pd.DataFrame([score_row(est, train, test, method, experiment, dataset, repeat,
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
        rows.append({**score_row(seed_pipe, train, test, method, experiment, dataset, repeat,
                                 fold, ratio, fit_wall + time.perf_counter() - t0[1],
                                 fit_cpu + time.process_time() - t0[0], bags, transductive),
                     "seed": seed})
    return pd.DataFrame(rows)
