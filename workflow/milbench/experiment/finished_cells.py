"""The finished cells of a method job that has not finished, kept so that its next attempt runs
only the cells it lacks.

A method job runs all (repeat, fold) cells of one method; a job stopped before its last cell (a
SLURM time limit, Ctrl-C, the end of a working session, a failing cell) would otherwise lose
every cell it had finished.  :class:`FinishedCells` writes each cell's rows, as it finishes, to
``<method file>.cells/<key>/r<repeat>_f<fold>.parquet`` beside the method file; the next
attempt of the same job reads them back and runs the rest; the folder goes once the method file
is written.  The key (:func:`attempt_key`) is the
:func:`~milbench.experiment.codehash.job_digest` (method, settings, cells, code) and a hash of
the job's input files (bag store, folds, fold stage), so an attempt after any change that could
change a row starts afresh and never mixes rows of two versions; a cell's rows do not depend on
the order or the process the cells ran in (:mod:`milbench.experiment.runner`), so a resumed
job's rows equal an uninterrupted one's.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pandas as pd

__all__ = ["EARLIER_CPU", "FinishedCells", "attempt_key", "cell_cpu", "cells_folder"]

#: key of a method file's ``DataFrame.attrs`` (kept in its Parquet metadata): the CPU seconds
#: (fit + predict) of the cells its job took from earlier attempts, which the job's Snakemake
#: benchmark, timing the last attempt only, does not count
EARLIER_CPU = "milbench_earlier_attempts_cpu_seconds"


def cell_cpu(rows):
    """Fit and predict CPU seconds per (repeat, fold) cell of a method's rows: per-seed rows
    (HyDR-MI ``combine: per-seed``) share their cell's selector fit, so it is counted once."""
    return rows.groupby(["repeat", "fold"])[["fit_cpu_seconds", "predict_cpu_seconds"]].max()


def cells_folder(method_file):
    """``<method file>.cells``: where a job writing ``method_file`` keeps its finished cells."""
    method_file = Path(method_file)
    return method_file.with_name(method_file.name + ".cells")


def attempt_key(digest, input_files):
    """``<job digest>-<hash of the input files' bytes>``: equal for two attempts of a job only
    when they compute the same rows."""
    h = hashlib.sha1()
    for path in input_files:
        h.update(Path(path).read_bytes())
    return f"{digest}-{h.hexdigest()[:12]}"


class FinishedCells:
    """The cells of the job attempt of ``key`` (:func:`attempt_key`) finished so far, under
    ``folder``/``key``."""

    def __init__(self, folder, key):
        self.folder = Path(folder)
        self.key = key
        self.loaded = []        # the cells :meth:`load` found

    @property
    def path(self):
        return self.folder / self.key

    def _file(self, cell):
        return self.path / f"r{cell[0]}_f{cell[1]}.parquet"

    def stale(self):
        """Folders of other keys: cells of another version of the job or of its inputs, which
        :meth:`load` removes."""
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if p.name != self.key)

    def load(self, cells):
        """{cell: rows} of the ``cells`` an earlier attempt finished; folders of other keys
        (another version of the job or of its inputs) are removed."""
        for other in self.stale():
            shutil.rmtree(other) if other.is_dir() else other.unlink()
        out = {c: pd.read_parquet(f) for c in cells if (f := self._file(c)).is_file()}
        self.loaded = sorted(out)
        return out

    def save(self, cell, rows):
        """Write one cell's rows (to a temporary name first: a kill leaves no half-written cell)."""
        self.path.mkdir(parents=True, exist_ok=True)
        target = self._file(cell)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        rows.to_parquet(tmp, index=False)
        os.replace(tmp, target)

    def clear(self):
        """Remove the folder (the job's method file is written)."""
        shutil.rmtree(self.folder, ignore_errors=True)
