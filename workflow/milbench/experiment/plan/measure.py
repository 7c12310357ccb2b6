"""What a draw times (in a forked child, :mod:`milbench.experiment.plan.sandbox`), in CPU
seconds on this machine's real data:

* an untuned draw runs the whole cell (``milbench.experiment.runner.run_cell``) on the cell's
  training bags, its fold stage provided as the workflow does, and counts its fit and the test
  bags' scoring (:func:`draw_untuned`);
* a tuned draw fits and scores grid points as GridSearchCV does on one inner fold, one after
  another in one process, in the groups :func:`milbench.experiment.plan.draws.tuned_groups`
  chose, and adds the refit and the test bags' scores (:func:`draw_tuned`);
* a HyDR-MI draw builds HyDR-MI's own problem on the cell's training bags
  (``HyDRMI.fitness_problem``: the ReliefF-MI filter, the inner folds, the classifier's subset
  evaluator), counts the GA's distinct evaluations by running HyDR-MI's GA
  (``HyDRMI.genetic_runs``) with a cheap surrogate fitness (:class:`Surrogate`: nearest class
  centroid of the bag means, on the same inner folds -- deterministic, a proxy for the count
  under the real classifier, since the GA's duplicates come from selection), and times the
  real evaluator on chromosomes spread over those runs (:func:`draw_hydr`).

Each draw first fits its pipeline on 20 bags, untimed (:func:`warm_up`): the first call's
imports are a job's cost, not a cell's.
"""
from __future__ import annotations

import contextlib
import tempfile
import time
import warnings

import numpy as np
from sklearn.metrics import get_scorer
from sklearn.model_selection import StratifiedKFold

from milbench.data.folds import split
from milbench.experiment.fold import Unlabeled, build_estimator, caches_selector_fits, dataset_views
from milbench.experiment.grid import strip_tune
from milbench.experiment.plan.counting import hydr_final_fits
from milbench.experiment.plan.draws import timed_enough
from milbench.experiment.runner import fit_stage_cell, run_cell
from milbench.experiment.scoring import inner_scorer
from milbench.experiment.stages import scale_bags
from milbench.registry import make


def spec_at(spec, point):
    out = {k: v for k, v in spec.items() if k != "tune"}
    out.update(point)
    return out


def draw_untuned(ctx, task):
    bags, folds, settings, m = ctx["bags"], ctx["folds"], ctx["settings"], task["method"]
    stage, stage_cpu = task.get("stage_state"), None
    if task["stage"] and stage is None:
        t = time.process_time()
        stage = fit_stage_cell(bags, folds, m["selector"], settings, task["cell"])
        stage_cpu = time.process_time() - t
    t = time.process_time()
    rows = run_cell(bags, folds, m, settings, experiment=ctx["experiment"],
                    dataset=ctx["dataset"], repeat=task["cell"][0], fold=task["cell"][1],
                    stage=stage)
    # the fit and the test bags' scoring, as a tuned draw times them: the cell's split, scaling
    # and row are the workflow's per-cell cost (CELL_OVERHEAD); a per-seed result (several rows)
    # is timed whole
    cpu = (float(rows["fit_cpu_seconds"].iloc[0] + rows["predict_cpu_seconds"].iloc[0])
           if len(rows) == 1 else time.process_time() - t)
    fits = ctx["exp"]["inner_folds"] + 1 if settings.get("threshold") == "auto" else 1
    return {"cell_cpu": cpu, "fits": [cpu / fits], "stage_cpu": stage_cpu, "stage_state": stage}


def inner_split(ctx, cell, n_folds, which=0):
    """The cell's training bags split as fold ``which`` of the inner CV the workflow runs
    (StratifiedKFold, shuffled, seed + repeat): (training, test, inner training, validation
    bags, seed)."""
    bags = ctx["bags"]
    tr, te, _ = split(ctx["folds"], cell[0], cell[1], bags.bag_ids)
    train = bags.subset(tr)
    seed = ctx["settings"]["protocol"]["seed"] + cell[0]
    itr, iva = list(StratifiedKFold(n_folds, shuffle=True, random_state=seed)
                    .split(np.zeros(len(train)), train.labels))[which]
    return train, bags.subset(te), train.subset(itr), train.subset(iva), seed


def draw_tuned(ctx, task):
    """Grid points fitted and scored as GridSearchCV does on one inner fold (the pipeline's
    selector cache included), in groups: with the cache, one group is a selector setting with
    every classifier setting; else one point.  Fold = the groups that stand for themselves
    (``n_fixed``: the centre and corners) as timed + the other groups of the grid fitted afresh
    x the mean of the random ones + the groups served by another's fit (``n_shared``) x the one
    of them timed (``shared_group``); what the grid shares in-process is counted once.  In a
    transductive experiment every inner fold fits the same pages, so the first group is timed
    again on the second inner fold, which then stands for the first group of folds 2..K
    (LC-MF factorises the pages once for all of them: :mod:`milbench.classifiers.lcmf`)."""
    m, exp = task["method"], ctx["exp"]
    K = exp["inner_folds"]
    stage_cpu = None
    if task["stage"] and not task.get("stage_known"):   # the refit reads a fold stage
        t = time.process_time()
        fit_stage_cell(ctx["bags"], ctx["folds"], m["selector"], ctx["settings"], task["cell"])
        stage_cpu = time.process_time() - t
    train, test, inner, val, seed = inner_split(ctx, task["cell"], K)
    fit_kw = {"unlabeled": Unlabeled(ctx["bags"])} if exp["transductive"] else {}
    scorer = get_scorer(inner_scorer(exp["inner_metric"]))
    views = dataset_views(ctx["bags"])
    caching = caches_selector_fits(m["selector"], m["classifier"])
    groups, fits, shared = [], [], None
    start = time.process_time()
    with tempfile.TemporaryDirectory(prefix="milbench-plan-") as cache:
        def fit_group(group, record=True, split=(inner, val)):
            t0 = time.process_time()
            for point in group:
                t = time.process_time()
                sp = {k: v for (step, k), v in point if step == "select"}
                cp = {k: v for (step, k), v in point if step == "classify"}
                pipe = build_estimator(exp["scale"], spec_at(m["selector"], sp),
                                       spec_at(m["classifier"], cp), seed=seed, views=views,
                                       memory=cache if caching else None)
                pipe.fit(split[0], split[0].labels, **fit_kw)
                scorer(pipe, split[1], split[1].labels)
                if record:
                    fits.append(time.process_time() - t)
            return time.process_time() - t0

        for i, group in enumerate(task["groups"]):
            groups.append(fit_group(group))
            if i == task.get("shared_after"):       # served by the fit just timed
                shared = fit_group(task["shared_group"], record=False)
            if timed_enough(len(groups), task, time.process_time() - start):
                break
        if task.get("n_shared") and shared is None:    # its group not reached: fit it untimed
            fit_group(task["groups"][task["shared_after"]], record=False)
            shared = fit_group(task["shared_group"], record=False)
        first_again = groups[0]
        if fit_kw and K > 1:        # the other inner folds fit the same pages
            first_again = fit_group(task["groups"][0], record=False,
                                    split=inner_split(ctx, task["cell"], K, which=1)[2:4])
        # the refit on the cell's training bags at the first point, and the test bags' scores
        t = time.process_time()
        point = task["groups"][0][0]
        pipe = build_estimator(exp["scale"],
                               spec_at(m["selector"], {k: v for (st, k), v in point
                                                        if st == "select"}),
                               spec_at(m["classifier"], {k: v for (st, k), v in point
                                                          if st == "classify"}),
                               seed=seed, views=views)
        pipe.fit(train, train.labels, **fit_kw)
        pipe.decision_function(test)
        pipe.predict(test)
        refit = time.process_time() - t
    n, fixed = task["n_groups"], task["n_fixed"]
    if len(groups) > fixed:     # the centre and corners stand for themselves, random ones the rest
        fold = sum(groups[:fixed]) + (n - fixed) * sum(groups[fixed:]) / len(groups[fixed:])
    else:
        rest = sum(groups[1:]) / len(groups[1:]) if len(groups) > 1 else groups[0]
        fold = groups[0] + (n - 1) * rest
    if task.get("n_shared"):    # groups served by another's fit, as the one timed
        fold += task["n_shared"] * shared
    return {"cell_cpu": fold + (K - 1) * (fold - groups[0] + first_again) + refit,
            "fits": fits, "points_done": len(fits),
            "stage_cpu": stage_cpu}


class Surrogate:
    """Nearest class centroid of the bag means on the chosen columns: a cheap fitness with
    which the GA's distinct evaluations are counted (see the module docstring)."""

    def __init__(self, X, offsets, y, folds):
        sizes = np.diff(offsets)
        self.M = np.add.reduceat(X, offsets[:-1], axis=0) / sizes[:, None]
        self.parts = []
        for tr, va in folds:
            c0 = self.M[tr][y[tr] == 0].mean(axis=0)
            c1 = self.M[tr][y[tr] == 1].mean(axis=0)
            self.parts.append((self.M[va], c0, c1))

    def predict(self, cols):
        return np.concatenate([((V[:, cols] - c1[cols]) ** 2).sum(1)
                               < ((V[:, cols] - c0[cols]) ** 2).sum(1)
                               for V, c0, c1 in self.parts])


class _Recorder:
    """A GA's fitness that also keeps every distinct chromosome it is asked for, in order."""

    def __init__(self, fitness):
        self.fitness, self.seen, self.keys = fitness, [], set()

    def new_run(self):
        self.fitness.new_run()

    def __call__(self, pop):
        for ind in pop:
            key = np.packbits(ind).tobytes()
            if key not in self.keys:
                self.keys.add(key)
                self.seen.append(ind.copy())
        return self.fitness(pop)


def ga_evaluations(hydr, problem, n_sample=0):
    """Distinct fitness evaluations of HyDR-MI's GA runs (``hydr.genetic_runs``: all its
    seeds, one cache) on ``problem`` (``hydr.fitness_problem``), under the surrogate fitness;
    with ``n_sample``, also that many of the distinct chromosomes, evenly spaced over the runs
    (the ones a draw times)."""
    fitness = problem.fitness(Surrogate(problem.X, problem.offsets, problem.y, problem.folds))
    record = _Recorder(fitness)
    hydr.genetic_runs(record, problem)
    if not n_sample:
        return int(fitness.n_evaluations)
    seen = record.seen
    idx = np.unique(np.linspace(0, len(seen) - 1, min(n_sample, len(seen))).astype(int))
    return int(fitness.n_evaluations), np.array([seen[i] for i in idx])


def draw_hydr(ctx, task):
    """A HyDR-MI draw (the module docstring): a cell is the first evaluation (the evaluator's
    setup) + (E - 1) x the mean of the others + the final fits + ReliefF-MI unless staged."""
    m, cell = task["method"], task["cell"]
    bags = ctx["bags"]
    tr, _, _ = split(ctx["folds"], cell[0], cell[1], bags.bag_ids)
    train = scale_bags(bags.subset(tr), ctx["exp"]["scale"])
    spec = {k: (strip_tune(m["classifier"]) if v == "@classifier" else v)
            for k, v in strip_tune(m["selector"]).items()}
    hydr = make("selector", spec)
    if hydr.random_state is None:
        hydr.set_params(random_state=ctx["settings"]["protocol"]["seed"] + cell[0])
    relieff, relieff_cpu = task.get("relieff"), None
    if relieff is None:     # the ReliefF-MI step (a fold stage when several methods share it)
        t = time.process_time()
        relieff = hydr.fit_filter(train, train.labels)
        relieff_cpu = time.process_time() - t
    problem = hydr.fitness_problem(train, train.labels, relieff=relieff)
    n_eval, chromosomes = task.get("evaluations"), task.get("chromosomes")
    if n_eval is None:
        n_eval, chromosomes = ga_evaluations(hydr, problem, n_sample=200)
    cached = problem.fitness()
    # chromosomes spread over the (surrogate) GA runs, a different stride each draw
    order = np.random.default_rng(int(problem.run_seeds[0]) + task["draw"]).permutation(
        len(chromosomes))
    per = []
    start = time.process_time()
    while len(per) < min(task["max_evals"], len(order)) and (
            not per or time.process_time() - start < task["soft_cap"]):
        t = time.process_time()
        cached(chromosomes[order[len(per)]][None])
        per.append(time.process_time() - t)
    k = len(problem.folds)
    # the first evaluation pays the evaluator's one-time setup (a fast path's tables), once a
    # cell (one evaluator serves every seed): first + (E - 1) x the mean of the others
    mean = sum(per[1:]) / len(per[1:]) if len(per) > 1 else per[0]
    final = hydr_final_fits(m["selector"]) * mean / k
    staged = task["stage"]
    filter_cpu = task.get("relieff_cpu") if relieff_cpu is None else relieff_cpu
    cell_cpu = per[0] + (n_eval - 1) * mean + final + (0.0 if staged else filter_cpu)
    return {"cell_cpu": cell_cpu, "fits": [p / k for p in per], "evaluations": n_eval,
            "stage_cpu": relieff_cpu if staged else None, "relieff": relieff,
            "relieff_cpu": filter_cpu, "chromosomes": chromosomes}


def warm_up(ctx, task):
    """An untimed fit and predict of the draw's pipeline on 20 bags, so that the timed fits do
    not pay the first call's imports (a method job pays them once, not once a cell)."""
    bags, m = ctx["bags"], task["method"]
    y = np.asarray(bags.labels).astype(int)
    small = bags.subset(np.sort(np.r_[np.flatnonzero(y == 0)[:10], np.flatnonzero(y == 1)[:10]]))
    point = task["groups"][0][0] if task["kind"] == "tuned" else ()
    sel = spec_at(m["selector"], {k: v for (st, k), v in point if st == "select"})
    if task["kind"] == "hydr":
        sel.update(population_size=4, n_generations=1, n_seeds=1)
    # a warm-up only: an error here (20 bags can be too few) is left to the timed fit to report
    with warnings.catch_warnings(), contextlib.suppress(Exception):
        warnings.simplefilter("ignore")     # (20 bags: a graph method warns of missing edges)
        pipe = build_estimator(ctx["exp"]["scale"], strip_tune(sel),
                               spec_at(m["classifier"], {k: v for (st, k), v in point
                                                          if st == "classify"}),
                               seed=0, views=dataset_views(bags))
        pipe.fit(small, small.labels)
        pipe.decision_function(small)
