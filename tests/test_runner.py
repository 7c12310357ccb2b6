"""The run unit: one method's cells in one process, spread over forked workers."""
import json
import logging

import pandas as pd
import pytest

from milbench.data.folds import make_folds
from milbench.data.sources import load_builtin
from milbench.experiment.config import experiment_defaults, experiment_settings
from milbench.experiment.grid import expand_methods
from milbench.experiment.runner import CellError, parse_cell, run_method

TIMING = ["fit_seconds", "fit_cpu_seconds", "predict_seconds", "predict_cpu_seconds"]
EXP = experiment_defaults({"datasets": ["musk1"],
                           "protocol": {"kind": "kfold", "folds": 3, "repeats": 2, "seed": 0},
                           "classifiers": [{"name": "mi-simple", "estimator": "tree"}]})


@pytest.fixture(scope="module")
def musk1():
    bags = load_builtin("musk1", offline=True)
    return bags, make_folds(bags.bag_ids, bags.labels, EXP["protocol"])


def _run(musk1, method, threads, log=None):
    bags, folds = musk1
    cells = [(r, f) for r in (1, 0) for f in (2, 1, 0)]   # any order in, (repeat, fold) order out
    return run_method(bags, folds, method, experiment_settings(EXP), experiment="e",
                      dataset="musk1", cells=cells, threads=threads, log=log)


def test_rows_do_not_depend_on_threads(musk1):
    method = expand_methods(EXP)[0]
    one, two = _run(musk1, method, 1), _run(musk1, method, 2)
    assert list(zip(one.repeat, one.fold)) == [(r, f) for r in (0, 1) for f in (0, 1, 2)]
    pd.testing.assert_frame_equal(one.drop(columns=TIMING), two.drop(columns=TIMING),
                                  check_exact=True)


def test_progress_is_logged_per_cell(musk1, caplog):
    with caplog.at_level(logging.INFO, logger="t"):
        _run(musk1, expand_methods(EXP)[0], 2, log=logging.getLogger("t"))
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("cell ")]
    assert len(lines) == 6 and lines[-1].startswith("cell 6/6 r")


@pytest.mark.parametrize("threads", [1, 2])
def test_a_failing_cell_is_named(musk1, threads):
    method = expand_methods({**EXP, "classifiers": [{"name": "milr", "C": -1.0, "max_iter": "x"}]})[0]
    with pytest.raises(CellError, match=r"e/musk1 none \+ milr\(.*\): cell r\d_f\d \(repeat \d, "
                                        r"fold \d\) failed: InvalidParameterError: The .C. parameter"):
        _run(musk1, method, threads)


def test_parse_cell():
    assert parse_cell("r3_f12") == (3, 12)
    with pytest.raises(ValueError, match="expected r<repeat>_f<fold>"):
        parse_cell("3_12")


def _killed(bags, cell):
    import os
    import signal
    if cell == (0, 1):
        os.kill(os.getpid(), signal.SIGKILL)   # as the kernel's OOM killer would
    return cell


def test_a_killed_worker_stops_the_job_instead_of_hanging():
    from milbench.experiment.runner import map_cells
    with pytest.raises(CellError, match=r"m: a worker died after \d of 4 cells \(killed: out of memory"):
        map_cells(_killed, (None,), [(0, 0), (0, 1), (0, 2), (0, 3)], threads=2, what="m")


def _slow_or_failing(pidfile, cell):
    import os
    import time
    if cell == (0, 0):
        while not os.path.exists(pidfile):   # fail once the other cell is running
            time.sleep(0.01)
        raise ValueError("bad cell")
    with open(pidfile + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(pidfile + ".tmp", pidfile)
    time.sleep(600)
    return cell


def test_a_failure_stops_the_cells_still_running(tmp_path):
    """The first failure ends the job at once: the worker still busy with a long cell is
    terminated, not waited for."""
    import os

    from milbench.experiment.runner import map_cells
    pidfile = str(tmp_path / "pid")
    with pytest.raises(CellError, match=r"cell r0_f0 \(repeat 0, fold 0\) failed: ValueError: bad cell"):
        map_cells(_slow_or_failing, (pidfile,), [(0, 0), (0, 1)], threads=2, what="m")
    with pytest.raises(ProcessLookupError):
        os.kill(int(open(pidfile).read()), 0)


def test_hydr_per_seed_rows_and_summary(musk1):
    """HyDR-MI combine="per-seed" (hydr-mi §4: five runs, results averaged): one row per seed
    and cell with a `seed` column; the best seed's row equals the combine="best" row (same GA
    runs); summarise averages over the seeds and folds."""
    from milbench.experiment.scoring import summarise

    hydr = {"name": "hydr-mi", "classifier": "@classifier", "percent": 0.1, "population_size": 6,
            "n_generations": 2, "n_seeds": 3, "inner_cv": 2}
    exp = {**EXP, "protocol": {**EXP["protocol"], "repeats": 1}}
    bags, _ = musk1
    folds = make_folds(bags.bag_ids, bags.labels, exp["protocol"])

    def run(combine):
        m = expand_methods({**exp, "selectors": [{**hydr, "combine": combine}]})[0]
        return run_method(bags, folds, m, experiment_settings(exp), experiment="e",
                          dataset="musk1", cells=[(0, 0), (0, 1)])

    per_seed, best = run("per-seed"), run("best")
    assert list(zip(per_seed.fold, per_seed.seed)) == [(f, s) for f in (0, 1) for s in range(3)]
    for fold, row in best.groupby("fold"):
        seeds = per_seed[per_seed.fold == fold]
        diag = [json.loads(d) for d in seeds.diagnostics]          # one selector fit per cell
        assert len({d["select.hydr_best_seed_fitness"] for d in diag}) == 1
        assert seeds.n_features.mean() == pytest.approx(diag[0]["select.hydr_mean_seed_n_features"])
        match = seeds[(seeds.accuracy == row.accuracy.iloc[0]) & (seeds.auroc == row.auroc.iloc[0])
                      & (seeds.n_features == row.n_features.iloc[0])]
        assert len(match) >= 1
    s = summarise(per_seed)
    assert s["n"].iloc[0] == 6 and s["seeds"].iloc[0] == 3
    assert s["accuracy_mean"].iloc[0] == pytest.approx(per_seed.accuracy.mean())
    with pytest.raises(CellError, match="per-seed results cannot be tuned"):
        m = expand_methods({**exp, "selectors": [{**hydr, "combine": "per-seed",
                                                 "tune": {"percent": [0.1, 0.2]}}]})[0]
        run_method(bags, folds, m, experiment_settings(exp), experiment="e", dataset="musk1",
                   cells=[(0, 0)])


def _cache_bound(cell):
    from milbench.utils.cache import CACHE, total_max_bytes
    return CACHE.max_bytes, total_max_bytes()


@pytest.mark.parametrize("threads", [1, 2])
def test_each_worker_caches_at_most_half_its_share_of_the_job_memory(monkeypatch, threads):
    """The kernel cache and all caches together (fits, MILSD's setup) of a worker."""
    from milbench.experiment.runner import map_cells
    from milbench.utils.cache import CACHE, DEFAULT_MAX_BYTES, set_total_max_bytes, total_max_bytes

    monkeypatch.setenv("MILBENCH_MAX_MEMORY_GB", "1")     # the job's memory (as SLURM's)
    was = CACHE.max_bytes, total_max_bytes()
    try:
        out = map_cells(_cache_bound, (), [(0, 0), (0, 1)], threads=threads)
    finally:
        CACHE.max_bytes = was[0]
        set_total_max_bytes(was[1])
    assert set(out.values()) == {(min(DEFAULT_MAX_BYTES, 2**30 // (2 * threads)),) * 2}
