"""Config name -> estimator class. Adding a method = one class + one line here, or, without
touching the library, a 'module:Class' path as the config name (a researcher's own estimator).

Values are 'module:Class' paths imported lazily, so importing milbench stays light.
"""
from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path

SELECTORS = {
    "none": "milbench.selectors.identity:NoSelection",
    "pca": "milbench.selectors.pca:BagPCA",
    "lda": "milbench.selectors.lda:BagLDA",
    "midr": "milbench.selectors.midr:MIDR",
    "relieff-mi": "milbench.selectors.relieff:ReliefFMI",
    "hydr-mi": "milbench.selectors.hydr:HyDRMI",
    "cvfs": "milbench.selectors.cvfs:CVFS",
    "big": "milbench.selectors.view_baselines:BagInfoGain",
    "iig": "milbench.selectors.view_baselines:InstanceInfoGain",
    "fs": "milbench.selectors.view_baselines:PairwiseBagReliability",
}

CLASSIFIERS = {
    "milr": "milbench.classifiers.milr:MILR",
    "mi-simple": "milbench.classifiers.simple:MISimple",
    "midd": "milbench.classifiers.diverse_density:MIDD",
    "emdd": "milbench.classifiers.diverse_density:EMDD",
    "mdd": "milbench.classifiers.diverse_density:MDD",
    "mi-optimal-ball": "milbench.classifiers.optimal_ball:MIOptimalBall",
    "mi-wrapper": "milbench.classifiers.wrapper:MIWrapper",
    "mi-boost": "milbench.classifiers.miboost:MIBoost",
    "mi-bagging": "milbench.classifiers.ensembles:MIBagging",
    "mi-adaboost": "milbench.classifiers.ensembles:MIAdaBoost",
    "mi-svm": "milbench.classifiers.misvm:MiSVM",
    "MI-svm": "milbench.classifiers.misvm:MISVM",
    "mi-kernel-svm": "milbench.classifiers.set_kernel:SetKernelSVM",
    "citation-knn": "milbench.classifiers.citation_knn:CitationKNN",
    "miordm": "milbench.classifiers.miordm:MIORDM",
    "kisvm": "milbench.classifiers.kisvm:KISVM",
    "mildm": "milbench.classifiers.mildm:MILDM",
    "mirsvm": "milbench.classifiers.mirsvm:MIRSVM",
    "view-ensemble": "milbench.classifiers.view_ensemble:ViewEnsemble",
    "milsd": "milbench.classifiers.milsd:MILSD",
    "lcmf": "milbench.classifiers.lcmf:LCMF",
    "mi-net": "milbench.classifiers.deep_mil:MiNet",
    "MI-net": "milbench.classifiers.deep_mil:MINet",
    "attention-mil": "milbench.classifiers.deep_mil:AttentionMIL",
    "gated-attention-mil": "milbench.classifiers.deep_mil:GatedAttentionMIL",
    "dsmil": "milbench.classifiers.deep_mil:DSMIL",
}


def add_code_dirs(dirs, root="."):
    """Put the directories a config lists under ``code:`` (relative to the working directory
    ``root``) first on sys.path: the users' own methods."""
    for d in reversed([str((Path(root) / d).resolve()) for d in dirs or []]):
        if d not in sys.path:
            sys.path.insert(0, d)


def import_path(kind, name):
    """'module:Class' behind a registry name, or the name itself when it is such a path."""
    table = {"selector": SELECTORS, "classifier": CLASSIFIERS}[kind]
    if name in table:
        return table[name]
    if ":" in name:
        return name
    raise KeyError(f"unknown {kind} {name!r}; known: {sorted(table)}, or a 'module:Class' "
                   f"path to your own estimator")


def resolve(kind, name):
    """The estimator class of a registry name or of a user's 'module:Class' path; a user class
    must be a scikit-learn style estimator of that kind (checked here, with a clear error)."""
    mod, cls = import_path(kind, name).split(":", 1)
    try:
        Est = getattr(import_module(mod), cls)
    except (ImportError, AttributeError) as e:
        raise KeyError(f"{kind} {name!r}: cannot import it ({type(e).__name__}: {e}); the module "
                       f"must be importable: installed, or under a directory listed in `code:`") \
            from None
    if name in SELECTORS or name in CLASSIFIERS:
        return Est
    need = ["get_params", "set_params", "fit"] + (["predict"] if kind == "classifier" else
                                                  ["transform"])
    missing = [m for m in need if not callable(getattr(Est, m, None))]
    if kind == "classifier" and not (hasattr(Est, "decision_function")
                                     or hasattr(Est, "predict_proba")):
        missing.append("decision_function or predict_proba")
    if not isinstance(Est, type) or missing:
        raise KeyError(f"{kind} {name!r} is not a scikit-learn style {kind}: it lacks "
                       f"{', '.join(missing) or 'a class'} (milbench.testing.check_mil_estimator "
                       f"checks the whole contract)")
    return Est


def make(kind, spec):
    """Estimator from a config entry {name: ..., param: value, ...}."""
    spec = dict(spec)
    Est = resolve(kind, spec.pop("name"))
    valid = Est().get_params()
    unknown = set(spec) - set(valid)
    if unknown:
        raise ValueError(f"{kind} {Est.__name__}: unknown parameter(s) {sorted(unknown)}; "
                         f"valid: {sorted(valid)}")
    return Est(**spec)
