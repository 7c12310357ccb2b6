import _paths  # noqa: F401 - puts workflow/ on sys.path
import re
from pathlib import Path

import pandas as pd
from milbench.runlog import setup

from milbench.pipeline import run_fold
from milbench.store import read_bags

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
wc, cfg = snakemake.wildcards, snakemake.params.experiment_cfg
bags = read_bags(Path(snakemake.input.bags[0]).parent)
row = run_fold(bags, pd.read_parquet(snakemake.input.folds), snakemake.params.method,
               experiment=wc.experiment, dataset=wc.dataset, scale=cfg.get("scale", "minmax"),
               repeat=int(wc.repeat), fold=int(wc.fold), seed=cfg["protocol"].get("seed", 0),
               inner_folds=cfg.get("inner_folds", 5), inner_metric=cfg.get("inner_metric", "accuracy"),
               n_jobs=snakemake.threads, transductive=cfg.get("transductive", False))
row.to_parquet(snakemake.output[0], index=False)
log.info("%s", row.iloc[0].to_dict())
