import _paths  # noqa: F401 - puts workflow/ on sys.path
from pathlib import Path

import pandas as pd

from milbench.data.store import read_bags
from milbench.experiment.runner import run_stage
from milbench.registry import add_code_dirs
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
add_code_dirs(snakemake.config["code"])
wc, p = snakemake.wildcards, snakemake.params
frame = run_stage(read_bags(Path(snakemake.input.bags).parent),
                  pd.read_parquet(snakemake.input.folds), p.selector, p.experiment_cfg,
                  experiment=wc.experiment, dataset=wc.dataset, cells=[tuple(c) for c in p.cells],
                  threads=snakemake.threads, log=log)
frame.to_parquet(snakemake.output[0], index=False)
log.info("%d cells of stage %s", len(frame), wc.stage)
