import _paths  # noqa: F401 - puts workflow/ on sys.path

from milbench.experiment.scoring import aggregate, summarise
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
scores = aggregate(snakemake.input.runs, snakemake.params.labels)
scores.to_parquet(snakemake.output.scores, index=False)
summary = summarise(scores, snakemake.params.metrics)
summary.to_csv(snakemake.output.summary, index=False, float_format="%.6g")
log.info("%d rows", len(scores))
for row in summary[summary["warnings"] != ""].itertuples():
    log.warning("%s / %s: %s", row.dataset, row.method, row.warnings)
