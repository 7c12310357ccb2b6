import _paths  # noqa: F401 - puts workflow/ on sys.path
from pathlib import Path

import pandas as pd

from milbench.data.store import read_bags
from milbench.experiment.codehash import JOB_DIGEST, job_digest
from milbench.experiment.finished_cells import (
    EARLIER_CPU,
    FinishedCells,
    attempt_key,
    cell_cpu,
    cells_folder,
)
from milbench.experiment.runner import run_method
from milbench.experiment.scoring import method_warnings
from milbench.experiment.stages import frame_to_stages
from milbench.registry import add_code_dirs
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
add_code_dirs(snakemake.config["code"])
wc, p = snakemake.wildcards, snakemake.params
stage = snakemake.input.stage
# what the rows are computed from: names the finished cells of a stopped attempt, and marks the
# method file for a run kept in parts (milbench.report.reproduction_parts)
digest = job_digest(p.method, p.experiment_cfg, p.cells, p.code)
finished = FinishedCells(cells_folder(snakemake.output[0]),
                         attempt_key(digest, [snakemake.input.bags, snakemake.input.folds, *stage]))
for other in finished.stale():
    log.warning("%s: cells kept by an attempt with other settings, code or inputs (key %s, "
                "now %s): removed, not reused", other.parent, other.name, finished.key)
rows = run_method(read_bags(Path(snakemake.input.bags).parent),
                  pd.read_parquet(snakemake.input.folds), p.method, p.experiment_cfg,
                  experiment=wc.experiment, dataset=wc.dataset, cells=[tuple(c) for c in p.cells],
                  threads=snakemake.threads, cell_threads=p.cell_threads, log=log,
                  stages=frame_to_stages(pd.read_parquet(stage[0])) if stage else None,
                  finished=finished)
rows.attrs[JOB_DIGEST] = digest
cpu = cell_cpu(rows)
if finished.loaded:     # cells of earlier attempts: not in this job's Snakemake benchmark
    rows.attrs[EARLIER_CPU] = round(float(cpu.loc[finished.loaded].to_numpy().sum()), 1)
rows.to_parquet(snakemake.output[0], index=False)
finished.clear()
log.info("%d cells: accuracy %.4f, balanced accuracy %.4f, auroc %.4f, fit %.1f s CPU in all "
         "(%d rows)", len(p.cells), rows.accuracy.mean(), rows.balanced_accuracy.mean(),
         rows.auroc.mean(), cpu.fit_cpu_seconds.sum(), len(rows))
for warning in method_warnings(rows):
    log.warning("%s", warning)
