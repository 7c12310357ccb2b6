"""Config name -> estimator class. Adding a method = one class + one line here.

Values are 'module:Class' paths imported lazily, so importing milbench stays light.
"""
from __future__ import annotations

from importlib import import_module

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
    "view-ensemble": "milbench.selectors.view_baselines:ViewEnsemble",
    "milsd": "milbench.classifiers.milsd:MILSD",
    "lcmf": "milbench.classifiers.lcmf:LCMF",
}


def resolve(kind, name):
    table = {"selector": SELECTORS, "classifier": CLASSIFIERS}[kind]
    if name not in table:
        raise KeyError(f"unknown {kind} {name!r}; known: {sorted(table)}")
    mod, cls = table[name].split(":")
    return getattr(import_module(mod), cls)


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
