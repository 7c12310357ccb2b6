import _paths  # noqa: F401 - puts workflow/ on sys.path

from milbench.data.sources import fetch
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
log.info("fetching %s", snakemake.wildcards.relpath)
fetch(snakemake.params.entry, snakemake.output[0], mirror=snakemake.params.mirror)
log.info("ok, sha256 verified")
