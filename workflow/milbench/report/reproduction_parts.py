"""Parts of a run longer than one working session, kept in the repository until it finishes:
``resources/reproductions/<paper>/parts/<experiment>/`` (a benchmark configuration's
experiment, e.g. deep-musk2 of config/deep.yaml: ``resources/reproductions/deep/parts/...``).

A method job's file (``results/<experiment>/runs/<dataset>/<selector>/<classifier>.parquet``,
every cell of one method) is the unit.  :func:`keep` copies each finished one, with its
Snakemake benchmark (its CPU), into the part folder and lists it in ``parts.yaml`` with the
:func:`~milbench.experiment.codehash.job_digest` its rows were computed from (method, settings,
cells, code; written into the file by the run rule).  :func:`restore` puts back, in a later
session's ``results/``, the kept files whose digest the config and code *now* give, so the
workflow runs only the missing methods; a kept file whose method, settings or code changed since
is not put back (and is named).  A file is put back only once its data set's inputs exist (the
bag store, the folds, a shared fold stage): Snakemake reruns an output older than its inputs.

    python -m milbench.report.reproduction keep results/<experiment> --config <file>
    python -m milbench.report.reproduction restore <experiment> --config <file>

A method job that had not finished when the session ended leaves its finished cells
(:mod:`milbench.experiment.finished_cells`); ``keep`` keeps those too (``cells/`` in the part
folder, listed under ``cells:``) when their job digest is the config's and code's now, and
``restore`` puts them back, so the job's next attempt runs only the cells it lacks; only those
whose whole key, with its hash of the job's input files (bag store, folds, fold stage), is that
of the inputs in results/ now: inputs rebuilt on another machine can differ in their bytes,
and the job would discard the cells and run them again.

Once the experiment has finished, :func:`~milbench.report.reproduction_archive.archive` keeps its
reproduction.csv; ``keep`` then drops the parts (``--drop``).
"""
from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import pandas as pd
import yaml

from milbench.data.folds import fold_keys
from milbench.data.store_folders import store_folders
from milbench.experiment.codehash import JOB_DIGEST, job_digest, method_code
from milbench.experiment.config import load_config, method_settings
from milbench.experiment.finished_cells import attempt_key, cell_cpu, cells_folder, read_cells
from milbench.experiment.grid import expand_methods
from milbench.experiment.stages import shared_stages
from milbench.registry import add_code_dirs
from milbench.report.reproduction_archive import (
    ARCHIVE_DIR,
    ArchiveError,
    cpu_seconds,
    file_attrs,
    session_walls,
)
from milbench.report.targets import archive_key

__all__ = ["keep", "restore", "part_dir", "file_digest", "kept_parts"]


def part_dir(experiment, archive_dir=ARCHIVE_DIR):
    """The part folder of ``experiment``; :class:`ArchiveError` for an experiment of neither a
    paper nor a benchmark configuration."""
    try:
        key = archive_key(experiment)
    except KeyError as e:
        raise ArchiveError(e.args[0]) from None
    return Path(archive_dir) / key / "parts" / experiment


def kept_parts(paper, archive_dir=ARCHIVE_DIR):
    """{experiment: its parts.yaml} of the experiments of ``paper`` (or benchmark) kept in
    parts."""
    folder = Path(archive_dir) / archive_key(paper) / "parts"
    return {p.parent.name: yaml.safe_load(p.read_text())
            for p in sorted(folder.glob("*/parts.yaml"))}


def file_digest(path):
    """The job digest a method file carries (None for a file written before digests)."""
    return file_attrs(path).get(JOB_DIGEST)


def _expected(config, experiment):
    """{runs/<dataset>/<selector>/<classifier>.parquet: (digest now, dataset, stage id)}."""
    cfg = load_config(config)
    if experiment not in cfg["experiments"]:
        raise ArchiveError(f"{config}: no experiment {experiment!r} (it has "
                           f"{sorted(cfg['experiments'])})")
    add_code_dirs(cfg["code"])      # users' own 'module:Class' methods, as the workflow does
    exp = cfg["experiments"][experiment]
    methods = {(m["selector_id"], m["classifier_id"]): m for m in expand_methods(exp)}
    stage_of, _ = shared_stages(methods)
    cells = fold_keys(exp["protocol"])
    out = {}
    for (sid, cid), m in methods.items():
        digest = job_digest(m, method_settings(exp, m), cells, method_code(m))
        for ds in exp["datasets"]:
            out[f"runs/{ds}/{sid}/{cid}.parquet"] = (digest, str(ds), stage_of.get((sid, cid)))
    return out


def keep(results_dir, config, archive_dir=ARCHIVE_DIR, drop=False):
    """Copy the finished method files of ``results_dir`` (``results/<experiment>``) whose
    digest the config and code give now, with their benchmarks, into the part folder, and the
    finished cells of unfinished jobs; returns (kept files, {file: cells kept}, skipped: {file:
    why}).  ``drop``: remove the part folder instead (the experiment has been archived whole)."""
    results_dir = Path(results_dir)
    experiment = results_dir.resolve().name
    folder = part_dir(experiment, archive_dir)
    if drop:
        shutil.rmtree(folder, ignore_errors=True)
        return [], {}, {}
    expected = _expected(config, experiment)
    bench = results_dir.parent / "benchmarks" / experiment
    listing_path = folder / "parts.yaml"
    listing = yaml.safe_load(listing_path.read_text()) if listing_path.is_file() else {}
    files = dict(listing.get("files", {}))
    cells = dict(listing.get("cells", {}))
    kept, kept_cells, skipped = [], {}, {}
    for rel, (digest, _, _) in sorted(expected.items()):
        src, tsv = results_dir / rel, (bench / rel).with_suffix(".tsv")
        if not src.is_file():
            if _keep_cells(results_dir, folder, rel, digest, cells):
                kept_cells[rel] = cells[rel]["cells"]
            continue
        had = file_digest(src)
        if not tsv.is_file():
            skipped[rel] = "its job has not finished (no benchmark file)"
        elif had != digest:
            skipped[rel] = ("written before job digests" if had is None else
                            "computed from other settings or code than the config's now")
        else:
            for a, b in ((src, folder / rel),
                         (tsv, (folder / "benchmarks" / rel).with_suffix(".tsv"))):
                b.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(a, b)
            files[rel] = digest
            kept.append(rel)
            if cells.pop(rel, None):        # the job finished: its kept cells are in the file
                shutil.rmtree(cells_folder(folder / "cells" / rel), ignore_errors=True)
    if kept or kept_cells:
        journals = [j for rel in kept_cells
                    for j in cells_folder(results_dir / rel).rglob("*.journal")]
        walls = session_walls(bench, listing, [j.stat().st_mtime for j in journals])
        listing = {"experiment": experiment, "config": str(config),
                   "date": str(dt.date.today()), "method_files": len(expected),
                   "cpu_seconds": cpu_seconds(folder / "benchmarks", folder / "runs"),
                   **({"walls": dict(sorted(walls.items()))} if walls else {}),
                   "files": dict(sorted(files.items()))}
        if cells:
            listing["cells"] = dict(sorted(cells.items()))
        listing_path.write_text(yaml.safe_dump(listing, sort_keys=False, width=100))
    return kept, kept_cells, skipped


def _keep_cells(results_dir, folder, rel, digest, cells):
    """Keep the finished cells of the unfinished job of ``rel`` (those of its attempt whose job
    digest is ``digest``), replacing what was kept of it before; lists them in ``cells``.
    Returns whether any were kept."""
    attempts = {p: read_cells(p) for p in cells_folder(results_dir / rel).glob(f"{digest}-*")}
    src = max(sorted(attempts), key=lambda p: len(attempts[p]), default=None)
    if src is None or not attempts[src]:
        return False
    dst = cells_folder(folder / "cells" / rel)
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst / src.name, ignore=shutil.ignore_patterns(".*"))
    cpu = cell_cpu(pd.concat(attempts[src].values())).to_numpy().sum()
    cells[rel] = {"key": src.name, "cells": len(attempts[src]),
                 "cpu_seconds": round(float(cpu), 1)}
    return True


def restore(experiment, config, results="results", archive_dir=ARCHIVE_DIR):
    """Put the kept files of ``experiment`` whose digest the config and code give now back
    into ``results`` (with their benchmarks, modified now), unless one is there already, and
    the kept cells of unfinished jobs; returns (restored files, {file: cells restored}, not
    restored: {file: why}).  Raises when a data set's inputs are
    missing (the message names them and the command that builds them)."""
    folder = part_dir(experiment, archive_dir)
    listing_path = folder / "parts.yaml"
    if not listing_path.is_file():
        return [], {}, {}
    listing = yaml.safe_load(listing_path.read_text())
    files = listing["files"]
    expected = _expected(config, experiment)
    results = Path(results)
    out_dir = results / experiment
    todo, skipped = [], {}
    for rel, digest in files.items():
        if rel not in expected:
            skipped[rel] = "no longer a method of the config"
        elif expected[rel][0] != digest:
            skipped[rel] = "its method, settings or code changed since it was kept: rerun"
        elif (out_dir / rel).exists():
            skipped[rel] = "already in results/"
        else:
            todo.append(rel)
    cells = listing.get("cells", {})
    needed = {p for rel in [*todo, *(r for r in cells if r in expected)]
              for p in _run_inputs(out_dir, expected[rel])}
    missing = sorted(str(p) for p in needed if not p.is_file())
    if missing:
        raise ArchiveError(
            "restore needs the inputs of the kept methods first (Snakemake reruns an output "
            "older than its inputs): snakemake --cores N --configfile " + str(config) + " -- "
            + " ".join(missing))
    restored_cells = _restore_cells(folder, results, out_dir, cells, expected, skipped)
    for rel in todo:
        for a, b in ((folder / rel, out_dir / rel),
                     ((folder / "benchmarks" / rel).with_suffix(".tsv"),
                      (results / "benchmarks" / experiment / rel).with_suffix(".tsv"))):
            b.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(a, b)
            os.utime(b)
    return todo, restored_cells, skipped


def _run_inputs(out_dir, expected):
    """A method job's folds and fold stage (if it has one) in ``out_dir``, in the order of the
    run rule's attempt key after the bag store; ``expected``: (digest, dataset, stage id)."""
    _, ds, stage = expected
    return [out_dir / "folds" / f"{ds}.parquet",
            *([out_dir / "stages" / ds / f"{stage}.parquet"] if stage else [])]


def _restore_cells(folder, results, out_dir, cells, expected, skipped):
    """Put back the kept cells of unfinished jobs whose attempt key is the one the config,
    code and inputs in ``results`` give now (and whose method file is not in results/);
    returns {file: cells put back}."""
    restored = {}
    for rel, entry in cells.items():
        key, dst = entry["key"], cells_folder(out_dir / rel) / entry["key"]
        what = f"{rel} ({entry['cells']} cells)"
        if rel not in expected:
            skipped[what] = "no longer a method of the config"
        elif not key.startswith(expected[rel][0] + "-"):
            skipped[what] = "its method, settings or code changed since they were kept: rerun"
        elif (out_dir / rel).exists() or dst.exists():
            skipped[what] = "already in results/"
        elif key not in {attempt_key(expected[rel][0],
                                     [s / "meta.json", *_run_inputs(out_dir, expected[rel])])
                         for s in store_folders(results / "bags", expected[rel][1])}:
            skipped[what] = ("kept on inputs whose bytes differ from those in results/ now (bag "
                             "store, folds, fold stage; rebuilt, or built on another machine): "
                             "its job runs them again")
        else:
            shutil.copytree(cells_folder(folder / "cells" / rel) / key, dst)
            restored[rel] = entry["cells"]
    return restored
