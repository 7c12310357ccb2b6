"""HyDR-MI fitness: classifiers' fast path vs the reference refit, CPU per evaluation and GA run.

Measured in the same run on the same chromosomes.

Data: ``--dataset`` (default elephant: 200 bags, 1,391 instances x 230), one outer 10-fold training
part (fold 0, seed 0), min-max scaled, ReliefF-MI adapted 50 % filter (115 genes; 70 % for musk) --
the hydr-images / hydr-drug setting of config/paper/hydr.yaml -- and the inner 3-fold split HyDR-MI
uses (``--fitness train``: the resubstitution estimate instead). Chromosomes: the GA's own, i.e.
the distinct chromosomes of a paper-size GA run (population 100, 50 generations, one seed) driven
by the fast MI-Simple (tree) fitness; that run also gives the number of distinct evaluations per GA
run (cache hits excluded). Each classifier scores the first ``--evals`` of them (fewer for the
costly ones) by both paths; the fitnesses must agree. Per GA run = CPU per evaluation x evaluations
per run (extrapolated: a paper GA run of EM-DD takes hours on this machine); the paper runs 5 seeds
per outer fold, 10 folds.

``--full-run``: also one whole HyDR-MI fit (ReliefF-MI + a paper-size GA, one seed) per
fast-path classifier, ``fast_fitness`` False vs True, measured (not extrapolated); the two must
select the same subset.

``--fitness-study``: instead, the outer 10-fold CV test accuracy of HyDR-MI with
``fitness: cv`` vs ``fitness: train`` on elephant and musk1, target classifier
MI-Simple (tree) for the GA and the final model, REDUCED GA (``--population`` 50,
``--generations`` 20, one seed), with the selected subset sizes and the selector's CPU.

``--warm``: warm starts (``warm_start``) of the ``--classifiers`` that have them (emdd, midd,
mdd, milr), measured on GA runs rather than on a fixed chromosome list (a warm fit depends on
the run's history): one HyDR-MI GA (``--population``, ``--generations``, one seed) on the
elephant training part above per ``--settings`` entry -- ``cold`` (warm_start False, the
reference) or ``warmN`` (warm_start True, N data-driven DD restarts added to the warm start) --
with its distinct evaluations, CPU per evaluation and best inner fitness; per paper GA run = CPU
per evaluation x the paper-size run's evaluations (the MI-Simple-driven run above).

``--budget``: the budget of config/paper/hydr.yaml's HyDR-MI experiments (hydr-images,
hydr-drug): a thin caller of ``python -m milbench.experiment.plan`` (the one budget method of every config;
docs/budget.md), ``--seconds`` of sampled fits.

``--warm-study``: the outer ``--outer``-fold CV test accuracy of HyDR-MI + each warm-startable
``--classifiers`` entry (default emdd; the GA's and the final classifier) per ``--settings``
entry on ``--datasets`` (elephant, musk1), REDUCED GA (``--population``, ``--generations``,
one seed), with subset sizes, inner fitness, evaluations and the selector's CPU.

Usage: python -m benchmarks.methods.bench_hydr_ga [--data ../shared/data] [--evals 200]
       [--classifiers mi-simple mi-wrapper emdd mi-boost citation-knn] [--fitness cv]
       [--dataset elephant]
       [--full-run]
       python -m benchmarks.methods.bench_hydr_ga --fitness-study [--population 50] [--generations 20]
       python -m benchmarks.methods.bench_hydr_ga --warm --classifiers emdd midd mdd milr [--population 20]
           [--generations 10] [--settings cold warm2 warm0]
       python -m benchmarks.methods.bench_hydr_ga --warm-study [--outer 5] [--datasets musk1]
           [--classifiers emdd midd mdd]
           [--settings cold warm2 warm0]
       python -m benchmarks.methods.bench_hydr_ga --budget [--seconds 480]
"""
from __future__ import annotations

from benchmarks import DATA, REPO
import argparse
import time

import numpy as np

from benchmarks._timing import best_of

# config/paper/hydr.yaml's entries; the share of --evals each one scores (costly ones fewer)
CLASSIFIERS = {
    "mi-simple": ({"name": "mi-simple", "estimator": "tree"}, 1.0),
    "mi-wrapper": ({"name": "mi-wrapper", "estimator": "naive-bayes"}, 1.0),
    "emdd": ({"name": "emdd"}, 0.05),
    "mi-boost": ({"name": "mi-boost", "estimator": "tree", "estimator_params": {"max_depth": 3}},
                 0.1),
    "citation-knn": ({"name": "citation-knn", "references": 2, "citers": 4}, 0.1),
    "milr": ({"name": "milr", "combine": "noisy-or"}, 0.2),
    "midd": ({"name": "midd"}, 0.05),
    "mdd": ({"name": "mdd"}, 0.05),
}
WARM = ("emdd", "midd", "mdd", "milr")     # classifiers with a warm_fitness_evaluator hook


def setup(data, fitness, dataset="elephant"):
    from sklearn.model_selection import StratifiedKFold

    from milbench.data.bags import stack
    from milbench.data.sources import load_dataset
    from milbench.preprocessing import BagScaler
    from milbench.selectors.hydr import HyDRMI, _inner_folds

    bags = load_dataset(dataset, data)
    tr, _ = next(StratifiedKFold(10, shuffle=True, random_state=0)
                 .split(np.zeros(len(bags)), bags.labels))
    train = BagScaler("minmax").fit_transform(bags.subset(tr))
    hydr = HyDRMI(metric="adapted", percent=0.7 if dataset.startswith("musk") else 0.5, k=80,
                  m=180, random_state=0)
    seeds = hydr._seeds()
    filt = hydr._relieff(int(seeds[1])).fit(train, train.labels).support_
    X, offsets = stack(train)
    Xf = np.ascontiguousarray(np.asarray(X, float)[:, filt])
    y = train.labels.astype(int)
    folds = (_inner_folds(y, 3, int(seeds[2])) if fitness == "cv"
             else [(np.arange(len(y)), np.arange(len(y)))])
    return hydr, seeds, Xf, offsets, y, folds


def paper_ga_chromosomes(hydr, seeds, X, offsets, y, folds):
    """The distinct chromosomes of one paper-size GA run (population 100, 50 generations)
    driven by the fast MI-Simple (tree) fitness, in order: (chromosomes, distinct evaluations,
    cache hits, CPU s of the run)."""
    from milbench.selectors.hydr import _CachedFitness, fitness_evaluator, genetic_search

    y_val = np.concatenate([y[va] for _, va in folds])
    fast_ms = fitness_evaluator(hydr.set_params(classifier=CLASSIFIERS["mi-simple"][0])
                                ._make_classifier(int(seeds[0])), X, offsets, y, folds)
    cached = _CachedFitness(fast_ms, y_val, None, 1)
    seen, keys = [], set()

    def record(pop):
        new = {np.packbits(ind).tobytes(): ind for ind in pop}
        seen.extend(ind for k, ind in new.items() if k not in keys)
        keys.update(new)
        return cached(pop)

    t = time.process_time()
    genetic_search(record, X.shape[1], np.random.default_rng(int(seeds[3])))
    return seen, cached.n_evaluations, cached.n_hits, time.process_time() - t


STUDY_DATASETS = ("elephant", "musk1")
CONFIG = REPO / "config"


def budget(seconds):
    """config/paper/hydr.yaml's HyDR-MI experiments through milbench.experiment.plan."""
    from milbench.experiment.plan import main as plan

    return plan([str(CONFIG / "paper" / "hydr.yaml"), "--experiments", "hydr-images",
                 "hydr-drug", "--seconds", str(seconds), "--data", str(DATA)])


def full_runs(data, names, fitness):
    from sklearn.model_selection import StratifiedKFold

    from milbench.data.sources import load_dataset
    from milbench.preprocessing import BagScaler
    from milbench.selectors.hydr import HyDRMI

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


def outer_cv(name, data, n_folds, make_selector, make_clf):
    """Outer ``n_folds``-fold CV of min-max scaling + ``make_selector(fold)`` + ``make_clf()``:
    mean test accuracy, AUROC, #features, inner fitness, GA evaluations; total selector CPU."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    from milbench.data.sources import load_dataset
    from milbench.experiment.fold import MILPipeline
    from milbench.preprocessing import BagScaler

    bags = load_dataset(name, data)
    rows, cpu = [], 0.0
    for f, (tr, te) in enumerate(StratifiedKFold(n_folds, shuffle=True, random_state=0)
                                 .split(np.zeros(len(bags)), bags.labels)):
        train, test = bags.subset(tr), bags.subset(te)
        sel = make_selector(f)
        pipe = MILPipeline([("scale", BagScaler("minmax")), ("select", sel),
                            ("clf", make_clf())])
        Z = pipe[:1].fit_transform(train, train.labels)
        t = time.process_time()
        sel.fit(Z, train.labels)
        cpu += time.process_time() - t
        pipe[2].fit(sel.transform(Z), train.labels)
        rows.append((np.mean(pipe.predict(test) == test.labels),
                     roc_auc_score(test.labels, pipe.decision_function(test)),
                     len(sel.support_), sel.best_fitness_, sel.n_evaluations_))
    return (*np.mean(rows, axis=0), cpu)


STUDY_HEADER = (f"{'accuracy':>9}{'auroc':>8}{'features':>9}{'inner fitness':>14}"
                f"{'evaluations':>12}{'selector CPU s':>15}")


def study_row(acc, auc, n_feat, inner, n_eval, cpu):
    return f"{acc:>9.3f}{auc:>8.3f}{n_feat:>9.1f}{inner:>14.3f}{n_eval:>12.1f}{cpu:>15.1f}"


def fitness_study(data, population, generations, datasets=("elephant", "musk1")):
    from milbench.classifiers.simple import MISimple
    from milbench.selectors.hydr import HyDRMI

    print(f"HyDR-MI + MI-Simple(tree), outer 10-fold CV, GA population {population}, "
          f"{generations} generations, 1 seed")
    print(f"{'dataset':<10}{'fitness':<8}" + STUDY_HEADER)
    for name in datasets:
        percent = 0.7 if name.startswith("musk") else 0.5
        for fitness in ("cv", "train"):
            res = outer_cv(name, data, 10, lambda f: HyDRMI(
                classifier=MISimple(estimator="tree"), percent=percent,
                population_size=population, n_generations=generations, n_seeds=1,
                fitness=fitness, random_state=f), lambda: MISimple(estimator="tree",
                                                                   random_state=0))
            print(f"{name:<10}{fitness:<8}" + study_row(*res))


def parse_setting(setting):
    """"cold" -> warm_start False; "warmN" -> warm_start True, N warm restarts."""
    if setting == "cold":
        return {"warm_start": False}
    if setting.startswith("warm") and setting[4:].isdigit():
        return {"warm_start": True, "warm_restarts": int(setting[4:])}
    raise SystemExit(f"--settings: 'cold' or 'warm<restarts>' (e.g. warm2), got {setting!r}")


def warm_study(data, population, generations, n_folds, settings, datasets, names=("emdd",)):
    from milbench.registry import make
    from milbench.selectors.hydr import HyDRMI

    for clf in names:
        spec = CLASSIFIERS[clf][0]
        print(f"HyDR-MI + {clf}, outer {n_folds}-fold CV, GA population {population}, "
              f"{generations} generations, 1 seed")
        print(f"{'dataset':<10}{'setting':<8}" + STUDY_HEADER, flush=True)
        for name in datasets:
            percent = 0.7 if name.startswith("musk") else 0.5
            for setting in settings:
                res = outer_cv(name, data, n_folds, lambda f: HyDRMI(
                    classifier=spec, percent=percent, population_size=population,
                    n_generations=generations, n_seeds=1, random_state=f,
                    **parse_setting(setting)),
                    lambda: make("classifier", {**spec, "random_state": 0}))
                print(f"{name:<10}{setting:<8}" + study_row(*res), flush=True)


def warm_runs(data, names, population, generations, settings, n_run):
    """One HyDR-MI GA per classifier on the elephant training part, cold vs warm."""
    from sklearn.model_selection import StratifiedKFold

    from milbench.data.sources import load_dataset
    from milbench.preprocessing import BagScaler

    bags = load_dataset("elephant", data)
    tr, _ = next(StratifiedKFold(10, shuffle=True, random_state=0)
                 .split(np.zeros(len(bags)), bags.labels))
    train = BagScaler("minmax").fit_transform(bags.subset(tr))
    print(f"HyDR-MI GA (population {population}, {generations} generations, 1 seed):")
    print(f"{'classifier':<11}{'setting':<8}{'evals':>6}{'warm evals':>11}{'CPU s':>8}"
          f"{'ms/eval':>9}{'best fitness':>13}{'features':>9}{'s/paper GA run':>16}", flush=True)
    for name in names:
        warm_pair(CLASSIFIERS[name][0], name, train, population, generations, settings, n_run)


def warm_pair(spec, name, train, population, generations, settings, n_run):
    from milbench.selectors.hydr import HyDRMI

    per_eval = {}
    for setting in settings:
        sel = HyDRMI(classifier=spec, percent=0.5, population_size=population,
                     n_generations=generations, n_seeds=1, random_state=0,
                     **parse_setting(setting))
        t = time.process_time()
        sel._relieff(int(sel._seeds()[1])).fit(train, train.labels)
        relieff = time.process_time() - t
        t = time.process_time()
        sel.fit(train, train.labels)
        cpu = time.process_time() - t - relieff              # the GA's share
        d = sel.diagnostics_
        per_eval[setting] = cpu / d["hydr_evaluations"]
        print(f"{name:<11}{setting:<8}{d['hydr_evaluations']:>6}"
              f"{d['hydr_warm_evaluations']:>11}{cpu:>8.1f}{per_eval[setting] * 1e3:>9.1f}"
              f"{sel.best_fitness_:>13.3f}"
              f"{len(sel.support_):>9}{per_eval[setting] * n_run:>16.0f}", flush=True)
    if "cold" in per_eval:
        print(f"{name}: CPU per evaluation, cold / " + ", ".join(
            f"{k}: {per_eval['cold'] / v:.2f}" for k, v in per_eval.items() if k != "cold"),
            flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--evals", type=int, default=200)
    ap.add_argument("--classifiers", nargs="*", default=None)
    ap.add_argument("--fitness", choices=("cv", "train"), default="cv")
    ap.add_argument("--fitness-study", action="store_true")
    ap.add_argument("--full-run", action="store_true")
    ap.add_argument("--population", type=int, default=50)
    ap.add_argument("--generations", type=int, default=20)
    ap.add_argument("--warm", action="store_true")
    ap.add_argument("--warm-study", action="store_true")
    ap.add_argument("--settings", nargs="+", default=["cold", "warm2", "warm0"])
    ap.add_argument("--outer", type=int, default=10)
    ap.add_argument("--budget", action="store_true")
    ap.add_argument("--seconds", type=float, default=480.0,
                    help="--budget: seconds of sampled fits (milbench.experiment.plan --seconds)")
    ap.add_argument("--datasets", nargs="*", default=None,
                    help="studies: default elephant musk1")
    ap.add_argument("--dataset", default="elephant",
                    help="data set of the per-evaluation table (musk*: 70 %% filter, else 50 %%)")
    args = ap.parse_args()
    chosen = args.classifiers or list(CLASSIFIERS)
    if args.fitness_study:
        return fitness_study(args.data, args.population, args.generations,
                             args.datasets or STUDY_DATASETS)
    if args.warm_study:
        return warm_study(args.data, args.population, args.generations, args.outer,
                          args.settings, args.datasets or STUDY_DATASETS,
                          [n for n in args.classifiers or ["emdd"] if n in WARM])

    if args.budget:
        return budget(args.seconds)

    from milbench.selectors.hydr import RefitEvaluator, _CachedFitness, fitness_evaluator

    hydr, seeds, X, offsets, y, folds = setup(args.data, args.fitness, args.dataset)
    y_val = np.concatenate([y[va] for _, va in folds])
    print(f"{args.dataset} fold 0 training part: {len(offsets) - 1} bags, {len(X)} instances, "
          f"{X.shape[1]} genes after ReliefF-MI; fitness {args.fitness}, "
          f"{len(folds)} inner fold(s)")

    seen, n_run, n_hits, ga_cpu = paper_ga_chromosomes(hydr, seeds, X, offsets, y, folds)
    print(f"one GA run (population 100, 50 generations): {n_run} distinct evaluations, "
          f"{n_hits} cache hits; MI-Simple(tree) fast path {ga_cpu:.1f} s CPU in total")

    print("" if args.warm else f"{'classifier':<14}{'evals':>6}{'ref ms/eval':>13}"
          f"{'fast ms/eval':>14}{'ratio':>7}{'ref s/GA run':>14}{'fast s/GA run':>15}")
    for name in [] if args.warm else chosen:
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
    if args.warm:
        return warm_runs(args.data, [n for n in chosen if n in WARM],
                         args.population, args.generations, args.settings, n_run)
    if args.full_run:
        full_runs(args.data, [n for n in chosen if n in ("mi-simple", "mi-wrapper")],
                  args.fitness)


if __name__ == "__main__":
    main()
