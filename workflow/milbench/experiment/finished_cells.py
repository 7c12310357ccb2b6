"""The finished cells of a method job that has not finished, kept so that its next attempt runs
only the cells it lacks.

A method job runs all (repeat, fold) cells of one method; a job stopped before its last cell (a
SLURM time limit, Ctrl-C, the end of a working session, a failing cell) would otherwise lose
every cell it had finished.  :class:`FinishedCells` appends each cell's rows, as it finishes, to
a journal of the attempt, ``<method file>.cells/<key>/<n>.journal`` beside the method file (one
file per attempt, ``n`` counting the attempts): a record is a header (magic, payload length,
CRC-32 of the payload) and the pickled (cell, rows), written by one ``write``, so a job killed
while writing leaves a torn last record, which :func:`read_cells` stops at: only that cell is
lost, and nothing half-written is read back.  The next attempt of the same job reads every
journal of its key and runs the rest; the folder goes once the method file is written.  The
key (:func:`attempt_key`) is the :func:`~milbench.experiment.codehash.job_digest` (method,
settings, cells, code) and a hash of the job's input files (bag store, folds, fold stage), so
an attempt after any change that could change a row starts afresh and never mixes rows of two
versions; a cell's rows do not depend on the order or the process the cells ran in
(:mod:`milbench.experiment.runner`), so a resumed job's rows equal an uninterrupted one's.
The journals hold pickles: they are read back only from the job's own results folder.
"""
from __future__ import annotations

import hashlib
import pickle
import shutil
import struct
import zlib
from pathlib import Path

__all__ = ["EARLIER_CPU", "FinishedCells", "attempt_key", "cell_cpu", "cells_folder",
           "read_cells"]

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


#: a journal record's header: magic, payload length, CRC-32 of the payload
RECORD = struct.Struct("<4sQI")
MAGIC = b"MBC1"


def _records(data):
    """The payloads of the whole records at the start of a journal's bytes (up to a torn or
    corrupt one)."""
    pos = 0
    while pos + RECORD.size <= len(data):
        magic, size, crc = RECORD.unpack_from(data, pos)
        payload = data[pos + RECORD.size:pos + RECORD.size + size]
        if magic != MAGIC or len(payload) != size or zlib.crc32(payload) != crc:
            return
        yield payload
        pos += RECORD.size + size


def read_cells(folder):
    """{cell: rows} of every whole record of the journals in ``folder`` (an attempt key's
    folder), the later attempt's where two hold a cell.  A journal is read up to its first
    torn, corrupt or unreadable record (one pickled by another pandas): the cells from there
    on are run again."""
    out = {}
    for journal in sorted(Path(folder).glob("*.journal"), key=lambda p: int(p.stem)):
        for payload in _records(journal.read_bytes()):
            try:
                cell, rows = pickle.loads(payload)
            except Exception:
                break
            out[tuple(cell)] = rows
    return out


class FinishedCells:
    """The cells of the job attempts of ``key`` (:func:`attempt_key`) finished so far, in their
    journals under ``folder``/``key``."""

    def __init__(self, folder, key):
        self.folder = Path(folder)
        self.key = key
        self.loaded = []        # the cells :meth:`load` found
        self._journal = None    # this attempt's journal, made by the first :meth:`save`

    @property
    def path(self):
        return self.folder / self.key

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
        kept = read_cells(self.path)
        out = {c: kept[c] for c in cells if c in kept}
        self.loaded = sorted(out)
        return out

    def save(self, cell, rows):
        """Append one cell's rows to this attempt's journal (one record, one ``write``)."""
        if self._journal is None:
            self.path.mkdir(parents=True, exist_ok=True)
            n = max((int(p.stem) for p in self.path.glob("*.journal")), default=0) + 1
            self._journal = self.path / f"{n}.journal"
        payload = pickle.dumps((tuple(cell), rows), protocol=pickle.HIGHEST_PROTOCOL)
        with open(self._journal, "ab") as f:
            f.write(RECORD.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload)

    def clear(self):
        """Remove the folder (the job's method file is written)."""
        shutil.rmtree(self.folder, ignore_errors=True)
        self._journal = None
