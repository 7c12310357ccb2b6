"""The run unit: one method (dataset × selector × classifier) runs all its (repeat, fold) cells in
one process, the cells spread over the job's threads (one single-threaded cell per worker).

Workers are forked from the job process after the bags, folds and library are loaded, so a
worker starts at once instead of re-importing pandas / scikit-learn (docs/performance.md).
Every cell is :func:`milbench.experiment.fold.run_fold` with ``n_jobs=1`` (``threads.cell`` in the
config gives a cell more), seeded by ``seed + repeat``, so a method's rows do not
depend on how many threads ran it or in which order its cells finished.

Debug one cell from the command line (after ``snakemake`` has built the bags and folds)::

    python -m milbench.experiment.runner --configfile config/config.yaml --experiment quickstart \\
        --dataset musk1 --selector none --classifier milr.1a2b3c4d --cell r0_f1

The selector / classifier ids are the folder names under ``results/<experiment>/runs/``; the
cell runs in this process, so an exception shows its full traceback (``python -m pdb`` works).
"""
from __future__ import annotations

import argparse
import logging
import multiprocessing
import re
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

from milbench.data.folds import fold_keys, make_folds, split
from milbench.data.store import read_bags
from milbench.experiment.config import (
    experiment_defaults,
    experiment_settings,
    load_config,
    method_settings,
)
from milbench.experiment.fold import dataset_views, run_fold
from milbench.experiment.grid import expand_methods, label, method_labels
from milbench.experiment.scoring import aggregate_rows
from milbench.experiment.stages import fit_stage, scale_bags, stage_to_frame
from milbench.registry import add_code_dirs
from milbench.utils.cache import bound_per_worker, clear_cell_caches, reuse

CELL = re.compile(r"r(\d+)_f(\d+)")


class CellError(RuntimeError):
    """A cell of a method failed; the message names the method, the cell and the cause."""


def cell_name(repeat, fold):
    return f"r{repeat}_f{fold}"


def parse_cell(name):
    m = CELL.fullmatch(name)
    if not m:
        raise ValueError(f"cell {name!r}: expected r<repeat>_f<fold>, e.g. r0_f3")
    return int(m.group(1)), int(m.group(2))


def run_cell(bags, folds, method, settings, *, experiment, dataset, repeat, fold, n_jobs=1,
             stage=None):
    """One (repeat, fold) cell of a method: the one-row DataFrame of :func:`run_fold`
    (``settings``: :func:`~milbench.experiment.config.experiment_settings`; ``stage``: the selector's stored fold stage for
    this cell, or None)."""
    tuning = {k: settings[k] for k in ("inner_folds", "inner_metric", "threshold")
              if k in settings}
    return run_fold(bags, folds, method, experiment=experiment, dataset=dataset,
                    scale=settings["scale"], repeat=repeat, fold=fold,
                    seed=settings["protocol"]["seed"], **tuning, n_jobs=n_jobs,
                    transductive="transductive" in settings, stage=stage)


def fit_stage_cell(bags, folds, selector, settings, cell):
    """The fold stage (:mod:`milbench.experiment.stages`) of ``selector`` on one cell's scaled
    training bags, seeded as the cell's selector is (seed + repeat)."""
    tr, _, _ = split(folds, cell[0], cell[1], bags.bag_ids)
    train = scale_bags(bags.subset(tr), settings["scale"])
    return fit_stage(train, train.labels, selector,
                     random_state=settings["protocol"]["seed"] + cell[0],
                     views=dataset_views(bags))


def run_stage(bags, folds, selector, settings, *, experiment, dataset, cells, threads=1,
              log=None):
    """The fold stage of a selector for every cell -> its Parquet-ready frame (one row a cell)."""
    what = f"{experiment}/{dataset} stage of {label(selector)}"
    states = map_cells(fit_stage_cell, (bags, folds, selector, settings), list(cells),
                       threads=threads, what=what, log=log)
    return stage_to_frame(states)


_JOB = {}   # what every worker of a method job reads (set before the fork)


def _init_worker(job):
    _JOB.update(job)
    threadpool_limits(_JOB["cell_threads"])   # one BLAS thread per cell unless asked
    _bound_cache(job["workers"])


def _bound_cache(workers):
    """Cap this worker's caches (:mod:`milbench.utils.cache`: the kernel cache and all of them
    together) at half of its share of the job's memory, so ``workers`` cells with full caches
    stay inside the job's ``mem_mb`` (a cache too small for a kernel or a fit only makes the
    method compute it afresh: same results)."""
    bound_per_worker(workers)


def _run_one(cell):
    # the previous cell's entries (its training bags) are never reused by this one
    clear_cell_caches()
    job = _JOB
    t0 = time.process_time()
    try:
        with reuse():   # this cell's fits reuse what its inner CV computes more than once
            row = job["fn"](*job["args"], cell, **job["kwargs"])
    except Exception as exc:   # reported by the parent with the cell's name
        return cell, None, f"{type(exc).__name__}: {exc}", traceback.format_exc()
    return cell, row, time.process_time() - t0, None


def map_cells(fn, args, cells, *, threads=1, cell_threads=1, what="", log=None, finished=None,
              **kwargs):
    """``{cell: fn(*args, cell, **kwargs)}`` for every (repeat, fold) cell, over ``threads``
    forked workers (in this process when ``threads`` is 1 or there is one cell). Logs each
    finished cell ("cell 17/50 r3_f6 0.42 s"); the first failure stops the job with a
    :class:`CellError` naming ``what`` and the cell (its traceback goes to the log).
    ``finished``: a :class:`~milbench.experiment.finished_cells.FinishedCells` whose cells are
    taken as they are and which keeps each cell run here as it finishes."""
    log = log or logging.getLogger("milbench.experiment.runner")
    out = {} if finished is None else finished.load(cells)
    if out:
        log.info("%d of %d cells finished by an earlier attempt of this job (%s): kept, "
                 "not run again", len(out), len(cells), finished.path)
    n_all, cells = len(cells), [c for c in cells if c not in out]
    n = len(cells)
    workers = max(1, min(int(threads), n))
    job = {"fn": fn, "args": args, "kwargs": kwargs, "cell_threads": cell_threads,
           "workers": workers}
    pool = limits = None
    if workers == 1:
        _JOB.update(job)
        limits = threadpool_limits(cell_threads)
        _bound_cache(1)
        results = map(_run_one, cells)
    else:
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                   initargs=(job,))
        results = (f.result() for f in as_completed([pool.submit(_run_one, c) for c in cells]))
    t0 = time.perf_counter()
    try:
        for done, (cell, value, info, tb) in enumerate(results, 1):
            name = cell_name(*cell)
            if value is None:
                log.error("cell %s of %s failed:\n%s", name, what, tb)
                raise CellError(f"{what}: cell {name} (repeat {cell[0]}, fold {cell[1]}) "
                                f"failed: {info}")
            out[cell] = value
            if finished is not None:
                finished.save(cell, value)
            log.info("cell %d/%d %s %.2f s CPU (%.0f s elapsed)", done + n_all - n, n_all, name,
                     info, time.perf_counter() - t0)
    except BrokenProcessPool as exc:   # a worker was killed (out of memory, signal)
        raise CellError(f"{what}: a worker died after {len(out)} of {n_all} cells (killed: out "
                        f"of memory? raise mem_mb or lower threads): {exc}") from exc
    finally:
        if pool is not None:
            if len(out) < n_all:   # stopped by a failure: do not wait for the cells still running
                for proc in list((pool._processes or {}).values()):
                    proc.terminate()
            pool.shutdown(wait=True, cancel_futures=True)
        if limits is not None:
            limits.restore_original_limits()
        _JOB.clear()
    return out


def _method_cell(bags, folds, method, settings, stages, cell, *, experiment, dataset, n_jobs):
    return run_cell(bags, folds, method, settings, experiment=experiment, dataset=dataset,
                    repeat=cell[0], fold=cell[1], n_jobs=n_jobs,
                    stage=None if stages is None else stages[cell])


def run_method(bags, folds, method, settings, *, experiment, dataset, cells, threads=1,
               cell_threads=1, stages=None, log=None, finished=None):
    """Every cell of one method -> its rows, ordered by (repeat, fold) whatever the threads.
    ``stages``: {(repeat, fold): state} of the selector's stored fold stage, or None;
    ``finished``: the job's :class:`~milbench.experiment.finished_cells.FinishedCells`."""
    what = f"{experiment}/{dataset} {label(method['selector'])} + {label(method['classifier'])}"
    rows = map_cells(_method_cell, (bags, folds, method, settings, stages), list(cells),
                     threads=threads, cell_threads=cell_threads, what=what, log=log,
                     finished=finished, experiment=experiment, dataset=dataset,
                     n_jobs=cell_threads)
    return pd.concat([rows[c] for c in sorted(rows)], ignore_index=True)


def run_experiment(exp, bags, *, dataset, experiment="notebook", threads=1, log=None):
    """One experiment entry (a config's ``experiments.<name>`` dict, registry names or your
    own 'module:Class'; ``datasets`` may be left out) on in-memory :class:`~milbench.data.bags.Bags`,
    from a notebook: the pipeline's own folds, scaling, inner CV and scoring (the schema's
    defaults filled in as the Snakefile does), every method's cells over ``threads`` processes.
    Returns the rows ``scores.parquet`` holds for this data set (equal to a Snakemake run's on
    every column but the timings; tests/test_workflow_e2e.py)."""
    exp = experiment_defaults({"datasets": [dataset], **exp}, where=f"experiment {experiment}")
    folds = make_folds(bags.bag_ids, bags.labels, exp["protocol"])
    frames = []
    for m in expand_methods(exp):
        frames.append(run_method(bags, folds, m, method_settings(exp, m),
                                 experiment=experiment, dataset=dataset,
                                 cells=fold_keys(exp["protocol"]), threads=threads, log=log))
    return aggregate_rows(frames, method_labels(exp))


def main(argv=None):
    """``python -m milbench.experiment.runner``: one cell of one method, in this process (debugging)."""
    ap = argparse.ArgumentParser(prog="python -m milbench.experiment.runner", description=main.__doc__)
    ap.add_argument("--configfile", default="config/config.yaml")
    ap.add_argument("-d", "--directory", default=".", help="the run's working directory")
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--selector", required=True, help="selector id (folder under runs/<dataset>/)")
    ap.add_argument("--classifier", required=True, help="classifier id (file name without .parquet)")
    ap.add_argument("--cell", required=True, help="r<repeat>_f<fold>")
    ap.add_argument("--threads", type=int, default=1, help="n_jobs inside the cell")
    ap.add_argument("-o", "--output", help="also write the row to this Parquet file")
    ap.add_argument("--bags", help="the data set's bag store (default: found under results/bags)")
    a = ap.parse_args(argv)
    try:
        cfg = load_config(a.configfile)
    except ValueError as e:   # names the file and the key
        ap.error(str(e))
    root = Path(a.directory)
    add_code_dirs(cfg["code"], root)
    exps = cfg["experiments"]
    if a.experiment not in exps:
        ap.error(f"experiment {a.experiment!r} not in {a.configfile}; known: {sorted(exps)}")
    methods = {(m["selector_id"], m["classifier_id"]): m for m in expand_methods(exps[a.experiment])}
    if (a.selector, a.classifier) not in methods:
        ap.error(f"no method {a.selector}/{a.classifier} in experiment {a.experiment}; known: "
                 + ", ".join(f"{s}/{c}" for s, c in sorted(methods)))
    under = root / "results" / "bags"
    stores = ([Path(a.bags)] if a.bags else [under / a.dataset] if (under / a.dataset).is_dir()
              else sorted(under.glob(f"{a.dataset}@*")))        # chain-built: <dataset>@<source>
    if len(stores) != 1:
        ap.error(f"{len(stores)} bag stores for {a.dataset!r} under {under} "
                 f"({', '.join(p.name for p in stores) or 'none'}); pass --bags DIR")
    bags = read_bags(stores[0])
    folds = pd.read_parquet(root / "results" / a.experiment / "folds" / f"{a.dataset}.parquet")
    repeat, fold = parse_cell(a.cell)
    with reuse():   # as in a method job: the cell's inner CV reuses its repeated fits
        row = run_cell(bags, folds, methods[(a.selector, a.classifier)],
                       experiment_settings(exps[a.experiment]), experiment=a.experiment,
                       dataset=a.dataset, repeat=repeat, fold=fold, n_jobs=a.threads)
    if a.output:
        row.to_parquet(a.output, index=False)
    with pd.option_context("display.max_columns", None, "display.width", 200):
        print(row.T.to_string(header=False))


if __name__ == "__main__":
    main()
