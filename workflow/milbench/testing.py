"""Is an estimator a valid MIL classifier for this pipeline? The contract our own estimators
pass, in the spirit of scikit-learn's ``check_estimator``, for a researcher's own method:

    from milbench.testing import check_mil_estimator
    check_mil_estimator(MyMIL())            # AssertionError naming every failed check

Each check fits a fresh clone on a small seeded data set of bags (positives hold one shifted
"witness" instance); the checks are named after what they require.  Also the generators of
the test suite: :func:`toy_bags` (bags), :func:`sparse_bags` (TF-IDF-like bags) and
:func:`synthetic_scores` (a scores table).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import clone

from milbench.base import StagedSelector
from milbench.data.bags import Bags, check_bags
from milbench.selectors.stage_store import StageStore, stage_rule, stamped_stage


def toy_bags(n_bags=30, d=4, seed=0, max_size=5, witness_shift=3.0, singletons=False):
    """Bags (list of arrays) and 0/1 labels under the standard MI assumption: positive bags hold
    one 'witness' instance shifted by ``witness_shift`` in feature 0; with ``singletons`` every
    bag has one instance. (The test suite's generator too, tests/conftest.py.)"""
    rng = np.random.default_rng(seed)
    bags, y = [], []
    for i in range(n_bags):
        size = 1 if singletons else int(rng.integers(1, max_size + 1))
        b = rng.normal(size=(size, d))
        if i % 2:
            b[0, 0] += witness_shift
        bags.append(b)
        y.append(i % 2)
    return bags, np.array(y)


def sparse_bags(seed=0, n_bags=60, d=300, density=0.02):
    """TF-IDF-like bags (list of arrays) and 0/1 labels: non-negative, ~``density`` non-zero
    (below odm.SPARSE_MAX_DENSITY, so kernels go through CSR); a positive bag has a passage
    using some of the first ten terms."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    bags, y = [], rng.integers(0, 2, n_bags)
    for label in y:
        m = int(rng.integers(2, 7))
        x = sp.random(m, d, density=density, random_state=rng, format="csr").toarray()
        x[:, :10] = 0.0
        if label:
            x[rng.integers(m), rng.choice(10, 3, replace=False)] = rng.uniform(0.5, 1.0, 3)
        bags.append(x / max(x.max(), 1e-12))
    return bags, y


def synthetic_scores(seed=0, datasets=("musk1", "musk2", "elephant", "fox", "tiger"),
                     methods=None, repeats=2, folds=5, n_features=(None,),
                     train_ratios=(np.nan,), experiment="demo"):
    """A generated scores table in the ``scores.parquet`` schema (synthetic=True), used by
    the tests and for trying the statistics/figures without running the pipeline.

    ``methods``: list of (selector, classifier, effect) -- ``effect`` is added to the
    accuracy/AUROC of that method (default: four methods of increasing strength).
    ``n_features``: feature counts per selector run (None = all 100 features).
    """
    rng = np.random.default_rng(seed)
    if methods is None:
        methods = [("none", "milr", 0.0), ("pca", "milr", 0.01), ("relieff-mi", "milr", 0.03),
                   ("midr", "milr", 0.06)]
    rows = []
    base = {d: 0.65 + 0.25 * rng.random() for d in datasets}
    for d in datasets:
        for ratio in train_ratios:
            for sel, clf, eff in methods:
                for nf in n_features:
                    nfeat = 100 if nf is None else int(nf)
                    label = f"{sel}" + ("" if nf is None else f"(n_features={nfeat})") + f"+{clf}"
                    for rep in range(repeats):
                        for fold in range(folds):
                            r_eff = 0.0 if np.isnan(ratio) else 0.15 * (ratio - 0.3)
                            f_eff = 0.0 if nf is None else -0.02 * abs(np.log(nfeat / 40.0))
                            acc = base[d] + eff + r_eff + f_eff + rng.normal(0, 0.03)
                            rows.append(dict(
                                experiment=experiment, dataset=d, selector=sel,
                                selector_params="{}" if nf is None else
                                f'{{"n_features": {nfeat}}}',
                                classifier=clf, classifier_params="{}", method=label,
                                repeat=rep, fold=fold, train_ratio=ratio,
                                accuracy=float(np.clip(acc, 0, 1)),
                                auroc=float(np.clip(acc + 0.05 + rng.normal(0, 0.02), 0, 1)),
                                fit_seconds=float((0.2 + 0.1 * len(sel)) * (1 + nfeat / 100)
                                                  * rng.lognormal(0, 0.1)),
                                predict_seconds=float(0.01 * rng.lognormal(0, 0.1)),
                                n_features=nfeat, n_train=80, n_test=20, diagnostics="{}",
                                synthetic=True, **{"sel.n_features": nfeat}))
    scores = pd.DataFrame(rows)
    scores["fit_cpu_seconds"] = 0.9 * scores["fit_seconds"]         # CPU: a share of the wall
    scores["predict_cpu_seconds"] = 0.9 * scores["predict_seconds"]
    return scores


# the contract's data: 24 bags of 1-4 instances in 3 features
CHECK_DATA = {"n_bags": 24, "d": 3, "max_size": 4}


def _seeded(est):
    """A clone with ``random_state=0`` where the estimator has one (None draws anew per fit)."""
    twin = clone(est)
    return twin.set_params(random_state=0) if "random_state" in twin.get_params(deep=False) else twin


def _fit(est, bags, y):
    return _seeded(est).fit(bags, y)


def _scores(model, bags):
    if hasattr(model, "decision_function"):
        return np.asarray(model.decision_function(bags), dtype=float)
    return np.asarray(model.predict_proba(bags), dtype=float)[:, 1]


def check_clone(est, bags, y):
    params = est.get_params(deep=False)
    twin = clone(est)
    assert twin is not est and twin.get_params(deep=False).keys() == params.keys(), \
        "clone(est) must give an unfitted copy with the same parameters"
    assert est.set_params(**params) is est, "set_params must return the estimator"


def check_fit_returns_self(est, bags, y):
    model = clone(est)
    assert model.fit(bags, y) is model, "fit must return self"
    assert hasattr(model, "classes_"), "a fitted classifier has classes_"


def check_scores_shape(est, bags, y):
    model = _fit(est, bags, y)
    assert hasattr(model, "decision_function") or hasattr(model, "predict_proba"), \
        "needs decision_function or predict_proba (AUROC uses it)"
    s = _scores(model, bags)
    assert s.shape == (len(bags),) and np.isfinite(s).all(), \
        f"bag scores must be a finite array of shape ({len(bags)},), got {s.shape}"
    pred = np.asarray(model.predict(bags))
    assert pred.shape == (len(bags),) and set(pred.tolist()) <= set(model.classes_.tolist()), \
        "predict must return one of classes_ per bag"


def check_bags_container(est, bags, y):
    """Fit on the same training bags given as a Bags container and as a list of arrays, score
    the same new bags (other ids: a method may keep what it learnt of a training bag by id)."""
    train = [b.astype(np.float32) for b in bags]          # the values a Bags container holds
    test, yt = toy_bags(seed=1, **CHECK_DATA)
    test = [b.astype(np.float32) for b in test]
    ids = [f"new-{i}" for i in range(len(test))]
    a = _scores(_fit(est, Bags.from_list(train, y), y), Bags.from_list(test, yt, bag_ids=ids))
    b = _scores(_fit(est, train, y), test)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9,
                               err_msg="a Bags container and a list of arrays must fit alike")


def check_pm1_labels(est, bags, y):
    model = _fit(est, bags, 2 * y - 1)
    assert sorted(model.classes_.tolist()) == [-1, 1], "classes_ must be the labels given"
    np.testing.assert_allclose(_scores(model, bags), _scores(_fit(est, bags, y), bags),
                               rtol=1e-6, atol=1e-9,
                               err_msg="labels ±1 and 0/1 must give the same scores")
    assert set(np.asarray(model.predict(bags)).tolist()) <= {-1, 1}, "predict returns ±1 labels"


def check_singleton_bags(est, bags, y):
    one, y1 = toy_bags(singletons=True, **CHECK_DATA)
    s = _scores(_fit(est, one, y1), one)
    assert s.shape == (len(one),) and np.isfinite(s).all(), "bags of one instance must work"


def check_test_order(est, bags, y):
    model = _fit(est, bags, y)
    perm = np.random.default_rng(1).permutation(len(bags))
    np.testing.assert_allclose(_scores(model, [bags[i] for i in perm]), _scores(model, bags)[perm],
                               rtol=1e-6, atol=1e-9,
                               err_msg="a bag's score must not depend on the other test bags")


def check_deterministic(est, bags, y):
    np.testing.assert_array_equal(_scores(_fit(est, bags, y), bags),
                                  _scores(_fit(est, bags, y), bags),
                                  err_msg="two fits with the same random_state must agree")


def check_bad_input(est, bags, y):
    cases = {"NaN feature": ([np.full_like(bags[0], np.nan)] + bags[1:], y),
             "a single class": (bags, np.zeros_like(y)),
             "labels and bags of different lengths": (bags, y[:-1]),
             "an empty bag": ([bags[0][:0]] + bags[1:], y)}
    for what, (X, labels) in cases.items():
        try:
            clone(est).fit(X, labels)
        except ValueError:
            continue
        raise AssertionError(f"fit must raise ValueError on {what}")
    model = _fit(est, bags, y)
    try:
        model.predict([b[:, :-1] for b in bags])
    except ValueError:
        return
    raise AssertionError("predict must raise ValueError on a different number of features")


def check_stage_protocol(est, bags, y):
    """A selector that claims a fold stage (declares ``_stage_rule``) implements
    :class:`~milbench.base.StagedSelector`, and a fit served its stage from a ``StageStore``
    uses it and transforms exactly as a fit that computes it.  Nothing to check for an
    estimator without a stage."""
    rule = stage_rule(type(est))
    if rule is None:
        return
    name = type(est).__name__
    assert isinstance(est, StagedSelector) and "stages" in est.get_params(deep=False), \
        f"{name} declares _stage_rule: it needs a stages parameter and " \
        "stage_state(X, offsets, y01)"
    assert not rule.views or callable(getattr(est, "resolve_views", None)), \
        f"{name}'s stage depends on its views: it needs resolve_views(X, n_features)"
    X, offsets, y01, _ = check_bags(bags, y)
    sel = _seeded(est)
    if rule.views:
        sel.resolve_views(bags, X.shape[1])
    store = StageStore([stamped_stage(sel, X, offsets, y01)])
    served = _seeded(est).set_params(stages=store).fit(bags, y)
    assert store.hits == 1, f"{name}: a fit on the stage's data and parameters was not served it"
    np.testing.assert_array_equal(
        np.concatenate(served.transform(bags)), np.concatenate(_fit(est, bags, y).transform(bags)),
        err_msg=f"{name}: a fit served its stage must transform as one that computes it")


def check_subset_fitness(est, bags, y):
    """A classifier offering HyDR-MI a subset fitness (:mod:`milbench.selectors.fitness`)
    predicts, for every feature subset, what refitting it predicts
    (:class:`~milbench.selectors.hydr.RefitEvaluator`); a warm evaluator's cold start
    (``source=None``) too.  Nothing to check for an estimator that offers neither."""
    from sklearn.model_selection import StratifiedKFold

    from milbench.selectors.fitness import SubsetFitness, WarmSubsetFitness, offered
    from milbench.selectors.hydr import RefitEvaluator

    clf = _seeded(est)
    fast, warm = offered(clf, SubsetFitness), offered(clf, WarmSubsetFitness)
    if fast is None and warm is None:
        return
    X, offsets, y01, _ = check_bags(bags, y)
    X = np.ascontiguousarray(X)
    folds = list(StratifiedKFold(2, shuffle=True, random_state=0).split(y01, y01))
    reference = RefitEvaluator(clf, X, offsets, y01, folds)
    name = type(est).__name__
    evaluators = [(fast, lambda ev, cols: ev.predict(cols), ())] if fast else []
    if warm:
        evaluators.append((warm, lambda ev, cols: ev.predict_warm(cols, None)[0], (2,)))
    for hook, predict, extra in evaluators:
        ev = hook(X, offsets, y01, folds, *extra)
        if ev is None:                    # the classifier declines these settings
            continue
        for cols in (np.arange(X.shape[1]), np.array([0, 2])):
            np.testing.assert_array_equal(
                np.asarray(predict(ev, cols)) > 0, reference.predict(cols),
                err_msg=f"{name}.{hook.__name__}: predictions on features {cols.tolist()} "
                        "differ from refitting the classifier")


CHECKS = (check_clone, check_fit_returns_self, check_scores_shape, check_bags_container,
          check_pm1_labels, check_singleton_bags, check_test_order, check_deterministic,
          check_bad_input, check_stage_protocol, check_subset_fitness)


def check_mil_estimator(est, *, raise_on_failure=True):
    """Run every check on ``est``; return {check name: None or its failure message}. With
    ``raise_on_failure``, an AssertionError names every failed check."""
    bags, y = toy_bags(**CHECK_DATA)
    results = {}
    for check in CHECKS:
        try:
            check(est, bags, y)
            results[check.__name__] = None
        except Exception as e:               # a crash is a failed check too, named
            results[check.__name__] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
    failed = {k: v for k, v in results.items() if v}
    if failed and raise_on_failure:
        raise AssertionError(f"{type(est).__name__} fails {len(failed)} of {len(CHECKS)} MIL "
                             "checks:\n" + "\n".join(f"  {k}: {v}" for k, v in failed.items()))
    return results
