"""Transductive runs (experiment key ``transductive``): unlabeled bags reach MILSD / LC-MF
through the pipeline, transformed by the steps fitted on the training bags, without labels."""
import json

import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV

from milbench.data.bags import Bags
from milbench.data.folds import make_folds
from milbench.experiment.fold import Unlabeled, build_estimator, run_fold

from conftest import toy_bags


def linked_bags(n=40, seed=0):
    """Toy bags plus random bag links and one instance link per bag pair (i, i+1)."""
    bags, y = toy_bags(n, d=3, seed=seed)
    ids = [f"b{i}" for i in range(n)]
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, 3 * n), rng.integers(0, n, 3 * n)
    keep = src != dst
    edges = pd.DataFrame({"src": [ids[i] for i in src[keep]], "dst": [ids[i] for i in dst[keep]],
                          "weight": 1.0, "level": "bag"}).drop_duplicates(["src", "dst"])
    return Bags.from_list(bags, y, bag_ids=ids, edges=edges)


MILSD_SPEC = {"name": "milsd", "C": 1.0, "mu": 1.0, "scaling": "sum"}


def fitted_milsd(bags, train_idx, scale="minmax"):
    est = build_estimator(scale, {"name": "none"}, MILSD_SPEC)
    train = bags.subset(train_idx)
    return est.fit(train, train.labels, unlabeled=Unlabeled(bags))[-1]


def test_complement_keeps_cross_links_and_drops_labels():
    bags = linked_bags()
    train = bags.subset(np.arange(25))
    rest = Unlabeled(bags).complement(train)
    assert set(rest.bag_ids) == set(bags.bag_ids[25:])
    assert (rest.labels == 0).all() and rest.instance_labels is None
    cross = bags.edges["src"].isin(train.bag_ids) & bags.edges["dst"].isin(rest.bag_ids)
    assert cross.any()
    assert len(rest.edges) == len(bags.edges)        # every bag-level link, train <-> rest too


def test_unlabeled_bags_join_the_graph_and_their_labels_are_never_read():
    bags = linked_bags()
    tr = np.arange(24)
    inductive = build_estimator("minmax", {"name": "none"}, MILSD_SPEC)
    inductive.fit(bags.subset(tr), bags.labels[tr])
    m = fitted_milsd(bags, tr)
    assert m.diagnostics_["n_bag_edges"] > inductive[-1].diagnostics_["n_bag_edges"]
    flipped = Bags(bags.instances, bags.offsets, np.where(np.arange(len(bags)) < 24,
                                                          bags.labels, 1 - bags.labels),
                   bags.bag_ids, edges=bags.edges)
    np.testing.assert_array_equal(fitted_milsd(flipped, tr).coef_, m.coef_)


def spy_on_milsd_fit(monkeypatch):
    """Record (labelled bags, unlabeled bags) of every MILSD fit."""
    from milbench.classifiers.milsd import MILSD
    seen, fit = [], MILSD.fit

    def spy(self, X, y, unlabeled=None):
        seen.append((X, unlabeled))
        return fit(self, X, y, unlabeled=unlabeled)

    monkeypatch.setattr(MILSD, "fit", spy)
    return seen


def test_unlabeled_bags_are_scaled_by_the_training_scaler(monkeypatch):
    """The unlabeled bags, shifted far away, go through the scaler fitted on the training
    instances (not one refitted on them)."""
    bags = linked_bags()
    far = bags.instances.copy()
    far[bags.offsets[24]:] += 100.0
    bags = Bags(far, bags.offsets, bags.labels, bags.bag_ids, edges=bags.edges)
    seen = spy_on_milsd_fit(monkeypatch)
    fitted_milsd(bags, np.arange(24))
    train = bags.instances[:bags.offsets[24]]
    lo, hi = train.min(0), train.max(0)
    np.testing.assert_allclose(seen[0][1].instances, (far[bags.offsets[24]:] - lo) / (hi - lo),
                               rtol=1e-5)


def test_inner_cv_fits_see_the_validation_bags_as_unlabeled(monkeypatch):
    bags = linked_bags()
    seen = spy_on_milsd_fit(monkeypatch)
    spec = dict(MILSD_SPEC, tune={"C": [0.5, 2.0]})
    est = build_estimator("minmax", {"name": "none"}, spec, inner_folds=3)
    assert isinstance(est, GridSearchCV)
    tr = np.arange(30)
    est.fit(bags.subset(tr), bags.labels[tr], unlabeled=Unlabeled(bags))
    seen = [(set(X.bag_ids), set(U.bag_ids)) for X, U in seen]
    assert len(seen) == 2 * 3 + 1
    for lab, unl in seen:
        assert not lab & unl and lab | unl == set(bags.bag_ids)
    assert seen[-1][1] == set(bags.bag_ids[30:])  # the refit: the outer test bags


def test_run_fold_transductive_flag_and_inductive_classifiers_unchanged():
    bags = linked_bags()
    folds = make_folds(bags.bag_ids, bags.labels, {"kind": "kfold", "folds": 4, "repeats": 1,
                                                   "seed": 0})
    kw = dict(experiment="t", dataset="d", scale="minmax", repeat=0, fold=0)
    method = {"selector": {"name": "none"}, "classifier": MILSD_SPEC}
    a = run_fold(bags, folds, method, transductive=True, **kw)
    b = run_fold(bags, folds, method, **kw)
    assert bool(a["transductive"].iloc[0]) and not bool(b["transductive"].iloc[0])
    edges = [json.loads(r["diagnostics"].iloc[0])["classify.n_bag_edges"] for r in (a, b)]
    assert edges[0] > edges[1]
    svm = {"selector": {"name": "none"}, "classifier": {"name": "MI-svm", "kernel": "linear"}}
    c, d = run_fold(bags, folds, svm, transductive=True, **kw), run_fold(bags, folds, svm, **kw)
    assert c["accuracy"].iloc[0] == d["accuracy"].iloc[0]
    assert c["auroc"].iloc[0] == d["auroc"].iloc[0]
