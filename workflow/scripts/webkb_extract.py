"""Rule webkb_extract: the WebKB archive -> folder (milbench.data.sources.safe_extract: no absolute
paths, no '..', no links out of the target)."""
import _paths  # noqa: F401 - puts workflow/ on sys.path

from milbench.chains.webkb import extract_archive
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
extract_archive(snakemake.input[0], snakemake.output[0])
log.info("extracted %s -> %s", snakemake.input[0], snakemake.output[0])
