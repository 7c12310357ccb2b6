import _paths  # noqa: F401 - puts workflow/ on sys.path
from pathlib import Path

from milbench.runlog import setup

from milbench.coverage import write_coverage

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
paths = write_coverage({ds: Path(p[0]).parent for ds, p in snakemake.params.bags.items()},
                       snakemake.params.entries, snakemake.params.scale, snakemake.output[0],
                       experiment=snakemake.wildcards.experiment)
log.info("wrote %s", [str(p) for p in paths])
