import _paths  # noqa: F401 - puts workflow/ on sys.path
from pathlib import Path

import pandas as pd

from milbench.report.stats import run_stats
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
out = Path(snakemake.output[0])
out.mkdir(parents=True, exist_ok=True)
tables = run_stats(pd.read_parquet(snakemake.input[0]), snakemake.params.entries,
                   metrics=snakemake.params.metrics)
for name, table in tables.items():
    table.to_csv(out / f"{name}.csv", index=False, float_format="%.6g")
    log.info("wrote %s (%d rows)", name, len(table))
