import _paths  # noqa: F401 - puts workflow/ on sys.path
from pathlib import Path

from milbench.data.sources import load_builtin
from milbench.data.store import write_bags
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
name = snakemake.wildcards.dataset
bags = load_builtin(name, raw_dir="results/raw", offline=snakemake.params.offline)
write_bags(bags, Path(snakemake.output[0]).parent)
log.info("%s: %d bags, %d instances, %d features (%s)", name, len(bags), len(bags.instances),
         bags.n_features, bags.meta["source"])
