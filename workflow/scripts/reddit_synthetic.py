"""Rule reddit_synthetic: SYNTHETIC submissions CSV in SNAP's web-Reddit schema."""
import _paths  # noqa: F401 - puts workflow/ on sys.path

from milbench.chains.synthetic_reddit import make_synthetic_reddit
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
p = snakemake.params.cfg
make_synthetic_reddit(snakemake.output[0], n_pos=p["n_pos"], n_neg=p["n_neg"], n_mid=p["n_mid"],
                      seed=p["seed"])
log.info("SYNTHETIC SNAP-schema CSV written to %s (%s)", snakemake.output[0], p)
