import _paths  # noqa: F401 - puts workflow/ on sys.path

import pandas as pd

from milbench.report.plots import make_figures
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
paths = make_figures(pd.read_parquet(snakemake.input[0]), snakemake.params.entries,
                     snakemake.output[0], metrics=snakemake.params.metrics, add_scores=True)
log.info("wrote %s", [str(p) for p in paths])
