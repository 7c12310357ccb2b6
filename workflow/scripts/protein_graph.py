"""Rule protein_graph: Trx protein bags + bag graph (user score table > threshold, else the
labelled kNN substitute) -> `protein-graph`."""
import _paths  # noqa: F401 - puts workflow/ on sys.path
from pathlib import Path

from milbench.chains.protein import build_protein_graph
from milbench.data.sources import load_builtin
from milbench.data.store import write_bags
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
c = snakemake.params.cfg
bags = load_builtin("protein", raw_dir="results/raw", offline=snakemake.params.offline)
out = build_protein_graph(bags, table=c["table"], threshold=c["threshold"], k=c["k"],
                          drop_position=c["drop_position"])
out.meta["params"] = dict(c)
write_bags(out, Path(snakemake.output[0]).parent)
log.info("protein-graph: %d bags, %d edges, graph source: %s", len(out), len(out.edges),
         out.meta["graph_source"])
