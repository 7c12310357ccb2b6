"""Rule corel_extract: a Corel image archive (.tar.gz / .zip) -> folder (safe extraction)."""
import _paths  # noqa: F401 - puts workflow/ on sys.path

from milbench.data.sources import safe_extract
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
safe_extract(snakemake.input[0], snakemake.output[0])
log.info("extracted %s -> %s", snakemake.input[0], snakemake.output[0])
