import _paths  # noqa: F401 - puts workflow/ on sys.path

from milbench.experiment.scoring import check_run_files
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
table = check_run_files(snakemake.input)
table.to_csv(snakemake.output[0], sep="\t", index=False)
log.info("%d run files, %d rows", len(table), table["rows"].sum())
