"""A stopped method job keeps its finished cells; its next attempt runs only the rest
(milbench.experiment.finished_cells), with rows equal to an uninterrupted run's."""
import logging

import pandas as pd
import pytest

from milbench.data.folds import make_folds
from milbench.data.sources import load_builtin
from milbench.experiment.config import experiment_defaults, experiment_settings
from milbench.experiment.finished_cells import (
    RECORD,
    FinishedCells,
    attempt_key,
    cells_folder,
    read_cells,
)
from milbench.experiment.grid import expand_methods
from milbench.experiment.runner import CellError, map_cells, run_method

TIMING = ["fit_seconds", "fit_cpu_seconds", "predict_seconds", "predict_cpu_seconds"]
EXP = experiment_defaults({"datasets": ["musk1"],
                           "protocol": {"kind": "kfold", "folds": 3, "repeats": 2, "seed": 0},
                           "classifiers": [{"name": "milr", "C": 1.0}]})
CELLS = [(r, f) for r in (0, 1) for f in (0, 1, 2)]


@pytest.fixture(scope="module")
def musk1():
    bags = load_builtin("musk1", offline=True)
    return bags, make_folds(bags.bag_ids, bags.labels, EXP["protocol"])


def _run(musk1, cells, finished=None, threads=2, log=None):
    bags, folds = musk1
    return run_method(bags, folds, expand_methods(EXP)[0], experiment_settings(EXP),
                      experiment="e", dataset="musk1", cells=cells, threads=threads,
                      finished=finished, log=log)


@pytest.mark.parametrize("threads", [1, 2])
def test_resumed_job_equals_an_uninterrupted_one(musk1, tmp_path, caplog, threads):
    """Two cells finished by a stopped attempt are read back, not run again (their CPU figures
    are the first attempt's), and the rows equal one run of all six cells."""
    whole = _run(musk1, CELLS)
    finished = FinishedCells(tmp_path / "m.parquet.cells", "k")
    first = _run(musk1, CELLS[2:4], finished)
    with caplog.at_level(logging.INFO, logger="t"):
        resumed = _run(musk1, CELLS, finished, threads=threads, log=logging.getLogger("t"))
    log = [r.getMessage() for r in caplog.records]
    assert log[0].startswith("2 of 6 cells finished by an earlier attempt of this job")
    assert sum(m.startswith("cell ") for m in log) == 4 and log[-1].startswith("cell 6/6 r")
    pd.testing.assert_frame_equal(resumed.drop(columns=TIMING), whole.drop(columns=TIMING),
                                  check_exact=True)
    pd.testing.assert_frame_equal(resumed.iloc[2:4].reset_index(drop=True), first,
                                  check_exact=True)


def _fails_at(stop, cell):
    if cell == stop:
        raise RuntimeError("stopped")
    return pd.DataFrame({"repeat": [cell[0]], "fold": [cell[1]], "value": [cell[0] * 10.0 + cell[1]]})


def test_a_failed_job_keeps_the_cells_it_finished(tmp_path):
    finished = FinishedCells(tmp_path / "m.parquet.cells", "k")
    with pytest.raises(CellError, match="cell r1_f0"):
        map_cells(_fails_at, ((1, 0),), CELLS, finished=finished)
    assert [p.name for p in finished.path.iterdir()] == ["1.journal"]
    assert sorted(read_cells(finished.path)) == CELLS[:3]          # cells run before it, whole
    ran = []

    def counted(stop, cell):
        ran.append(cell)
        return _fails_at(stop, cell)
    out = map_cells(counted, (None,), CELLS, finished=finished)
    assert ran == CELLS[3:]
    assert {c: float(v.value.iloc[0]) for c, v in out.items()} == {
        c: c[0] * 10.0 + c[1] for c in CELLS}


def test_another_version_of_the_job_starts_afresh(tmp_path):
    folder = cells_folder(tmp_path / "m.parquet")
    assert folder.name == "m.parquet.cells"
    old = FinishedCells(folder, "old")
    old.save((0, 0), _fails_at(None, (0, 0)))
    assert FinishedCells(folder, "new").stale() == [folder / "old"]
    assert FinishedCells(folder, "new").load(CELLS) == {}
    assert [p.name for p in folder.iterdir()] == []                 # the old attempt's cells gone
    (folder / "new").mkdir()
    (folder / "new" / "1.journal").write_bytes(b"")                 # an attempt killed at once
    assert FinishedCells(folder, "new").load(CELLS) == {}
    FinishedCells(folder, "new").clear()
    assert not folder.exists()


def test_the_key_follows_the_digest_and_the_input_bytes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"folds v1")
    b.write_bytes(b"bags")
    key = attempt_key("d1", [b, a])
    assert key.startswith("d1-") and key == attempt_key("d1", [b, a])
    assert attempt_key("d2", [b, a]) != key
    a.write_bytes(b"folds v2")
    assert attempt_key("d1", [b, a]) != key


def _journal_of(tmp_path, cells):
    finished = FinishedCells(tmp_path / "m.parquet.cells", "k")
    for cell in cells:
        finished.save(cell, _fails_at(None, cell))
    return finished, finished.path / "1.journal"


@pytest.mark.parametrize("cut", [1, 15, 40, -1])
def test_a_torn_last_record_loses_only_its_cell(tmp_path, cut):
    """A job killed while appending a cell leaves part of its record (header or payload): the
    cells before it are read back whole, the torn one is run again by the next attempt, which
    writes its own journal."""
    finished, journal = _journal_of(tmp_path, CELLS[:3])
    data = journal.read_bytes()
    last = len(data) - len(_journal_of(tmp_path / "one", CELLS[2:3])[1].read_bytes())
    journal.write_bytes(data[:last + cut] if cut > 0 else data[:cut])
    again = FinishedCells(finished.folder, "k")
    out = again.load(CELLS)
    assert again.loaded == CELLS[:2]
    pd.testing.assert_frame_equal(out[(0, 1)], _fails_at(None, (0, 1)), check_exact=True)
    again.save((0, 2), _fails_at(None, (0, 2)))
    assert sorted(p.name for p in again.path.iterdir()) == ["1.journal", "2.journal"]
    assert sorted(FinishedCells(finished.folder, "k").load(CELLS)) == CELLS[:3]


def test_a_corrupt_record_is_not_read_back(tmp_path):
    """A record whose bytes changed after it was written (its checksum fails) ends what is
    read of its journal."""
    finished, journal = _journal_of(tmp_path, CELLS[:3])
    data = bytearray(journal.read_bytes())
    second = RECORD.size + RECORD.unpack_from(data, 0)[1]
    data[second + RECORD.size + 30] ^= 0xFF      # inside the second record's payload
    journal.write_bytes(bytes(data))
    assert sorted(read_cells(finished.path)) == CELLS[:1]
