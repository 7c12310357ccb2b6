"""CPU per HyDR-MI fitness evaluation and per GA run (issue #17), reference refit path vs the
classifiers' fitness fast path, measured in the same run on the same chromosomes.

Data: elephant (200 bags, 1,391 instances x 230), one outer 10-fold training part (fold 0,
seed 0), min-max scaled, ReliefF-MI adapted 50 % filter (115 genes) -- the hydr-images setting
of config/paper/hydr.yaml -- and the inner 3-fold split HyDR-MI uses (``--fitness train``: the
resubstitution estimate instead).  Chromosomes: the GA's own, i.e. the distinct chromosomes of
a paper-size GA run (population 100, 50 generations, one seed) driven by the fast MI-Simple
(tree) fitness; that run also gives the number of distinct evaluations per GA run (cache hits
excluded).  Each classifier scores the first ``--evals`` of them (fewer for the costly ones)
by both paths; the fitnesses must agree.  Per GA run = CPU per evaluation x evaluations per
run (extrapolated: a paper GA run of EM-DD takes hours on this machine); the paper runs 5 seeds
per outer fold, 10 folds.

``--full-run``: also one whole HyDR-MI fit (ReliefF-MI + a paper-size GA, one seed) per
fast-path classifier, ``fast_fitness`` False vs True, measured (not extrapolated); the two must
select the same subset.

``--fitness-study``: instead, the outer 10-fold CV test accuracy of HyDR-MI with
``fitness: cv`` vs ``fitness: train`` (issue #17 item 4) on elephant and musk1, target classifier
MI-Simple (tree) for the GA and the final model, REDUCED GA (``--population`` 50,
``--generations`` 20, one seed), with the selected subset sizes and the selector's CPU.

Usage: python benchmarks/bench_hydr_ga.py [--data ../shared/data] [--evals 200]
       [--classifiers mi-simple mi-wrapper emdd mi-boost citation-knn] [--fitness cv]
       [--full-run]
       python benchmarks/bench_hydr_ga.py --fitness-study [--population 50] [--generations 20]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _timing import best_of

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# config/paper/hydr.yaml's entries; the share of --evals each one scores (costly ones fewer)
CLASSIFIERS = {
    "mi-simple": ({"name": "mi-simple", "estimator": "tree"}, 1.0),
    "mi-wrapper": ({"name": "mi-wrapper", "estimator": "naive-bayes"}, 1.0),
    "emdd": ({"name": "emdd"}, 0.05),
    "mi-boost": ({"name": "mi-boost", "estimator": "tree", "estimator_params": {"max_depth": 3}},
                 0.1),
    "citation-knn": ({"name": "citation-knn", "references": 2, "citers": 4}, 0.1),
}


def setup(data, fitness):
    from sklearn.model_selection import StratifiedKFold

    from milbench.bags import stack
    from milbench.preprocessing import BagScaler
    from milbench.selectors.hydr import HyDRMI, _inner_folds
    from milbench.sources import load_dataset

    bags = load_dataset("elephant", data)
    tr, _ = next(StratifiedKFold(10, shuffle=True, random_state=0)
                 .split(np.zeros(len(bags)), bags.labels))
    train = BagScaler("minmax").fit_transform(bags.subset(tr))
    hydr = HyDRMI(metric="adapted", percent=0.5, k=80, m=180, random_state=0)
    seeds = hydr._seeds()
    filt = hydr._relieff(int(seeds[1])).fit(train, train.labels).support_
    X, offsets = stack(train)
    Xf = np.ascontiguousarray(np.asarray(X, float)[:, filt])
    y = train.labels.astype(int)
    folds = (_inner_folds(y, 3, int(seeds[2])) if fitness == "cv"
             else [(np.arange(len(y)), np.arange(len(y)))])
    return hydr, seeds, Xf, offsets, y, folds


def full_runs(data, names, fitness):
    from sklearn.model_selection import StratifiedKFold

    from milbench.preprocessing import BagScaler
    from milbench.selectors.hydr import HyDRMI
    from milbench.sources import load_dataset

    bags = load_dataset("elephant", data)
    tr, _ = next(StratifiedKFold(10, shuffle=True, random_state=0)
                 .split(np.zeros(len(bags)), bags.labels))
    train = BagScaler("minmax").fit_transform(bags.subset(tr))
    print("whole HyDR-MI fits (population 100, 50 generations, 1 seed), CPU s:")
    for name in names:
        cpu = {}
        for fast in (False, True):
            sel = HyDRMI(classifier=CLASSIFIERS[name][0], percent=0.5, n_seeds=1,
                         fitness=fitness, fast_fitness=fast, random_state=0)
            t = best_of(lambda: sel.fit(train, train.labels))
            cpu[fast] = (t.cpu, sel.support_, sel.diagnostics_["hydr_evaluations"])
        assert np.array_equal(cpu[False][1], cpu[True][1])
        print(f"  {name:<12} reference {cpu[False][0]:7.1f}  fast {cpu[True][0]:7.1f}  "
              f"ratio {cpu[False][0] / cpu[True][0]:.2f}  ({cpu[True][2]} evaluations, "
              f"same {len(cpu[True][1])} features selected)")


def fitness_study(data, population, generations, datasets=("elephant", "musk1")):
    from sklearn.model_selection import StratifiedKFold

    from milbench.classifiers.simple import MISimple
    from milbench.pipeline import MILPipeline
    from milbench.preprocessing import BagScaler
    from milbench.selectors.hydr import HyDRMI
    from milbench.sources import load_dataset

    print(f"HyDR-MI + MI-Simple(tree), outer 10-fold CV, GA population {population}, "
          f"{generations} generations, 1 seed")
    print(f"{'dataset':<10}{'fitness':<8}{'accuracy':>9}{'auroc':>8}{'features':>9}"
          f"{'inner fitness':>14}{'selector CPU s':>15}")
    from sklearn.metrics import roc_auc_score
    for name in datasets:
        bags = load_dataset(name, data)
        percent = 0.7 if name.startswith("musk") else 0.5
        cv = list(StratifiedKFold(10, shuffle=True, random_state=0)
                  .split(np.zeros(len(bags)), bags.labels))
        for fitness in ("cv", "train"):
            acc, auc, n_feat, inner, cpu = [], [], [], [], 0.0
            for f, (tr, te) in enumerate(cv):
                train, test = bags.subset(tr), bags.subset(te)
                sel = HyDRMI(classifier=MISimple(estimator="tree"), percent=percent,
                             population_size=population, n_generations=generations,
                             n_seeds=1, fitness=fitness, random_state=f)
                pipe = MILPipeline([("scale", BagScaler("minmax")), ("select", sel),
                                    ("clf", MISimple(estimator="tree", random_state=0))])
                t = time.process_time()
                pipe.fit(train, train.labels)
                cpu += time.process_time() - t
                acc.append(np.mean(pipe.predict(test) == test.labels))
                auc.append(roc_auc_score(test.labels, pipe.decision_function(test)))
                n_feat.append(len(sel.support_))
                inner.append(sel.best_fitness_)
            print(f"{name:<10}{fitness:<8}{np.mean(acc):>9.3f}{np.mean(auc):>8.3f}"
                  f"{np.mean(n_feat):>9.1f}{np.mean(inner):>14.3f}{cpu:>15.1f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--evals", type=int, default=200)
    ap.add_argument("--classifiers", nargs="*", default=list(CLASSIFIERS))
    ap.add_argument("--fitness", choices=("cv", "train"), default="cv")
    ap.add_argument("--fitness-study", action="store_true")
    ap.add_argument("--full-run", action="store_true")
    ap.add_argument("--population", type=int, default=50)
    ap.add_argument("--generations", type=int, default=20)
    args = ap.parse_args()
    if args.fitness_study:
        return fitness_study(args.data, args.population, args.generations)

    from milbench.selectors.hydr import (RefitEvaluator, _CachedFitness, fitness_evaluator,
                                         genetic_search)

    hydr, seeds, X, offsets, y, folds = setup(args.data, args.fitness)
    y_val = np.concatenate([y[va] for _, va in folds])
    print(f"elephant fold 0 training part: {len(offsets) - 1} bags, {len(X)} instances, "
          f"{X.shape[1]} genes after ReliefF-MI; fitness {args.fitness}, "
          f"{len(folds)} inner fold(s)")

    # the chromosomes of one paper-size GA run (MI-Simple tree, fast path)
    seen = []
    fast_ms = fitness_evaluator(hydr.set_params(classifier=CLASSIFIERS["mi-simple"][0])
                                ._make_classifier(int(seeds[0])), X, offsets, y, folds)
    cached = _CachedFitness(fast_ms, y_val, None, 1)

    def record(pop):
        new = {np.packbits(ind).tobytes(): ind for ind in pop}
        seen.extend(ind for k, ind in new.items() if k not in keys)
        keys.update(new)
        return cached(pop)

    keys = set()
    t = time.process_time()
    genetic_search(record, X.shape[1], np.random.default_rng(int(seeds[3])))
    ga_cpu = time.process_time() - t
    n_run = cached.n_evaluations
    print(f"one GA run (population 100, 50 generations): {n_run} distinct evaluations, "
          f"{cached.n_hits} cache hits; MI-Simple(tree) fast path {ga_cpu:.1f} s CPU in total")

    print(f"{'classifier':<14}{'evals':>6}{'ref ms/eval':>13}{'fast ms/eval':>14}{'ratio':>7}"
          f"{'ref s/GA run':>14}{'fast s/GA run':>15}")
    for name in args.classifiers:
        spec, share = CLASSIFIERS[name]
        clf = hydr.set_params(classifier=spec)._make_classifier(int(seeds[0]))
        masks = seen[:max(3, int(args.evals * share))]
        ref = fitness_evaluator(clf, X, offsets, y, folds, fast=False)
        fast = fitness_evaluator(clf, X, offsets, y, folds)

        def score(ev):
            return _CachedFitness(ev, y_val, None, 1)(np.array(masks))

        t_ref = best_of(lambda: score(ref))
        has_fast = not isinstance(fast, RefitEvaluator)
        t_fast = best_of(lambda: score(fast)) if has_fast else t_ref
        if has_fast:
            np.testing.assert_allclose(t_fast.out, t_ref.out, rtol=0, atol=1e-12)
        r, f = t_ref.cpu / len(masks), t_fast.cpu / len(masks)
        print(f"{name:<14}{len(masks):>6}{r * 1e3:>13.2f}"
              f"{(f'{f * 1e3:.2f}' if has_fast else 'none'):>14}{r / f:>7.2f}"
              f"{r * n_run:>14.1f}{f * n_run:>15.1f}")
    if args.full_run:
        full_runs(args.data, [n for n in args.classifiers if n in ("mi-simple", "mi-wrapper")],
                  args.fitness)


if __name__ == "__main__":
    main()
