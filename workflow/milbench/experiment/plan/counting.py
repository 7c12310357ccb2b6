"""What a config's experiments count, from the config alone, as the workflow expands it
(``expand_methods`` x data sets x ``fold_keys``): cells, method jobs, fold-stage and report
jobs, fits per cell, and the SLURM resources of a method job (the functions of
:mod:`milbench.experiment.config` the rules call, so the plan and the workflow cannot
disagree).

Fits per cell: an untuned cell is 1 fit; a tuned cell is ``|grid| x inner_folds + 1``
(GridSearchCV: every grid point on every inner fold, plus the refit); a HyDR-MI cell is its
GA's distinct fitness evaluations x the fitness's inner folds (1 for ``fitness: train``), plus
the final fits (1, and one per seed for ``combine: per-seed``); ``threshold: auto`` repeats a
cell's fits on each inner fold, then refits.
"""
from __future__ import annotations

import math
import re

from milbench.data.folds import fold_keys
from milbench.experiment.config import job_mem_mb, job_runtime, job_threads
from milbench.experiment.grid import entry_methods, expand_methods, label
from milbench.experiment.stages import shared_stages
from milbench.registry import resolve


def job_resources(exp, max_threads):
    """{threads, mem_mb, runtime} of every method job of an experiment (defaults filled)."""
    n = len(fold_keys(exp["protocol"]))
    t = job_threads(n, max_threads)
    return {"threads": t, "mem_mb": job_mem_mb(t), "runtime": job_runtime(exp["runtime"], n, t)}



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
    return shorten(lab, 60)


def shorten(label, width):
    """``label`` in at most ``width`` characters, cut only between its parameters and words
    (after a space, a comma or an opening parenthesis): as much of its tail (the classifier
    entry, which tells families apart) as half the room holds (its last part at least), then
    its head, then more tail, around " ... "."""
    if len(label) <= width:
        return label
    parts = [p for p in re.split(r"(?<=[ ,(\[])", label) if p]
    room = width - 5
    head, tail = [], []

    def fill(side, limit):
        while parts and len("".join(head + tail)) + len(parts[0 if side is head else -1]) \
                <= limit:
            if side is head:
                head.append(parts.pop(0))
            else:
                tail.insert(0, parts.pop())
    fill(tail, min(room, max(room // 2, len(parts[-1]))))   # the last part whole
    fill(head, room)
    fill(tail, room)
    return "".join(head).rstrip(" ,") + " ... " + "".join(tail).lstrip(" ,")


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

