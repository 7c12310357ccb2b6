"""Rule corel_synthetic: SYNTHETIC scenes in Corel-5k layout (offline stand-in)."""
import _paths  # noqa: F401 - puts workflow/ on sys.path

from milbench.chains.synthetic_scenes import make_synthetic_scenes
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
p = snakemake.params.cfg
make_synthetic_scenes(snakemake.output[0], n_pos=p["n_pos"], n_neg=p["n_neg"],
                      n_other=p["n_other"], size=tuple(p["size"]), seed=p["seed"])
log.info("SYNTHETIC scenes written to %s (%s)", snakemake.output[0], p)
