import _paths  # noqa: F401 - puts workflow/ on sys.path
from pathlib import Path

from milbench.report.coverage import write_coverage
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
dirs = {Path(f).parent.name: Path(f).parent for f in snakemake.input}   # results/bags/<dataset>/
paths = write_coverage(dirs, snakemake.params.entries, snakemake.params.scale, snakemake.output[0],
                       experiment=snakemake.wildcards.experiment, seed=snakemake.params.seed)
log.info("wrote %s", [str(p) for p in paths])
