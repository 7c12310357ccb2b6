"""One cell of config/paper/milsd.yaml's ``milsd-webkb`` as the workflow fits it, for the
benchmarks of this folder that time one (bench_lcmf_cell, bench_passthrough, bench_misvm): the
config's protocol (fold = training-ratio index), scale, inner folds and metric, the workflow's
estimator (:func:`milbench.experiment.fold.build_estimator`), fitted transductively."""
from __future__ import annotations

import time

from benchmarks import REPO
from milbench.data.folds import make_folds, split
from milbench.data.store import read_bags
from milbench.experiment.config import load_config
from milbench.experiment.fold import Unlabeled, build_estimator
from milbench.utils.cache import reuse

EXP = load_config(REPO / "config" / "paper" / "milsd.yaml")["experiments"]["milsd-webkb"]
RATIOS = EXP["protocol"]["train_ratios"]            # fold = ratio index
BAGS = REPO / "results" / "bags"


def method_spec(name):
    """The config's classifier entry of ``name``."""
    return next(c for c in EXP["classifiers"] if c["name"] == name)


def load(path, repeats):
    """(bags, folds) of a WebKB store under the config's protocol, ``repeats`` repeats."""
    bags = read_bags(path)
    return bags, make_folds(bags.bag_ids, bags.labels, {**EXP["protocol"], "repeats": repeats})


def cell_split(bags, folds, repeat, fold):
    """(training bags, test bags) of a cell."""
    tr, te, _ = split(folds, repeat, fold, bags.bag_ids)
    return bags.subset(tr), bags.subset(te)


def fit_cell(bags, folds, spec, repeat, fold):
    """The cell's estimator for classifier entry ``spec``, fitted with the dataset's other pages
    unlabeled and reuse on, as in a run's cell: (estimator, test bags, CPU seconds of the fit)."""
    train, test = cell_split(bags, folds, repeat, fold)
    est = build_estimator(EXP["scale"], {"name": "none"}, spec,
                          seed=EXP["protocol"]["seed"] + repeat, inner_folds=EXP["inner_folds"],
                          inner_metric=EXP["inner_metric"])
    t = time.process_time()
    with reuse():
        est.fit(train, train.labels, unlabeled=Unlabeled(bags))
    return est, test, time.process_time() - t
