"""Single-instance scikit-learn estimators by config name (used by mi-simple, mi-wrapper, ...)."""
from __future__ import annotations

from importlib import import_module
from numbers import Integral

import sklearn

SKLEARN_ESTIMATORS = {
    "logistic": "sklearn.linear_model:LogisticRegression",
    "linear-svm": "sklearn.svm:LinearSVC",
    "svm": "sklearn.svm:SVC",
    "tree": "sklearn.tree:DecisionTreeClassifier",
    "stump": "sklearn.tree:DecisionTreeClassifier",   # max_depth=1 added below (DecisionStump)
    "random-forest": "sklearn.ensemble:RandomForestClassifier",
    "naive-bayes": "sklearn.naive_bayes:GaussianNB",
    "knn": "sklearn.neighbors:KNeighborsClassifier",
    "adaboost-tree": "sklearn.ensemble:AdaBoostClassifier",  # AdaBoost over trees (AdaBoost&PART)
    "bagging-tree": "sklearn.ensemble:BaggingClassifier",    # Bagging over trees (Bagging&PART)
}


def _tree():
    # not at import: every workflow parse imports this module (check_method)
    from sklearn.tree import DecisionTreeClassifier
    return DecisionTreeClassifier(min_samples_leaf=2)  # a pruned-ish tree standing in for PART


DEFAULTS = {"stump": {"max_depth": 1}, "adaboost-tree": {"estimator": _tree},
            "bagging-tree": {"estimator": _tree}}


def make_estimator(name, params=None, random_state=None):
    """A fresh scikit-learn classifier from a config name or a 'module:Class' path."""
    path = SKLEARN_ESTIMATORS.get(name, name)
    if ":" not in path:
        raise KeyError(f"unknown estimator {name!r}; known: {sorted(SKLEARN_ESTIMATORS)} "
                       "or a 'module:Class' path")
    mod, cls = path.split(":")
    Est = getattr(import_module(mod), cls)
    kw = {k: (v() if callable(v) else v) for k, v in DEFAULTS.get(name, {}).items()}
    kw.update(params or {})
    if random_state is not None and "random_state" in Est().get_params():
        kw.setdefault("random_state", random_state)
    return Est(**kw)


def reusable(est):
    """Does refitting ``est`` in place give the model a fresh ``clone(est)`` would?  True unless
    it warm-starts or draws from a shared ``RandomState`` (a seed or None is re-read per fit)."""
    params = est.get_params(deep=True)
    return not any(v for k, v in params.items() if k.split("__")[-1] == "warm_start") and all(
        v is None or isinstance(v, Integral)
        for k, v in params.items() if k.split("__")[-1] == "random_state")


def sklearn_checked():
    """A scikit-learn config context for refitting an estimator whose parameters were validated
    and on data checked finite once (a feature-subset evaluator): skips both re-checks, results
    unchanged."""
    return sklearn.config_context(assume_finite=True, skip_parameter_validation=True)
