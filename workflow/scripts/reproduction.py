import _paths  # noqa: F401 - puts workflow/ on sys.path

import pandas as pd

from milbench.report.reproduction import no_targets_table, reproduction_table
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
table = reproduction_table(pd.read_csv(snakemake.input[0]), snakemake.wildcards.experiment,
                           mapping=snakemake.params.mapping)
if table.empty:                     # no paper targets: one row saying so, not a bare header
    table = no_targets_table(snakemake.wildcards.experiment)
table.to_csv(snakemake.output[0], index=False, float_format="%.4f")
log.info("%d rows", len(table))
