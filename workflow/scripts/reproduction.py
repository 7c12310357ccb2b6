import _paths  # noqa: F401 - puts workflow/ on sys.path

import pandas as pd

from milbench.report.reproduction import reproduction_table
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
table = reproduction_table(pd.read_csv(snakemake.input[0]), snakemake.wildcards.experiment,
                           mapping=snakemake.params.mapping)
table.to_csv(snakemake.output[0], index=False, float_format="%.4f")
log.info("%d target rows", len(table))
