import _paths  # noqa: F401 - puts workflow/ on sys.path

import pandas as pd

from milbench.data.folds import make_folds
from milbench.data.store import write_frame
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
bags = pd.read_parquet(snakemake.input.bags)
try:
    folds = make_folds(bags["bag_id"], bags["label"], snakemake.params.protocol)
except ValueError as e:                  # one class, too few bags: name the data set
    raise ValueError(f"data set {snakemake.wildcards.dataset} ({snakemake.input.bags}): {e}") from e
write_frame(folds, snakemake.output[0])
log.info("%d rows for %d bags", len(folds), len(bags))
