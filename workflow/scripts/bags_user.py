import _paths  # noqa: F401 - puts workflow/ on sys.path
from pathlib import Path

from milbench.data.sources import read_any
from milbench.data.store import write_bags
from milbench.utils.hashing import sha256_file
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
spec = snakemake.params.spec
bags = read_any(spec["format"], spec["path"], spec.get("names"), positive=spec.get("positive"),
               mixed_labels=spec["mixed_labels"])
bags.meta.update(source=f"user {spec['format']}: {spec['path']}", dataset=snakemake.wildcards.dataset)
if Path(spec["path"]).is_file():
    bags.meta["sha256"] = {spec["path"]: sha256_file(spec["path"])}
write_bags(bags, Path(snakemake.output[0]).parent)
log.info("%d bags, %d instances, %d features", len(bags), len(bags.instances), bags.n_features)
