"""Rule webkb_bags: parsed site -> `webkb-<task>` bags (page = bag, passage = instance,
TF-IDF) with bag- and instance-level hyperlink edges."""
import _paths  # noqa: F401 - puts workflow/ on sys.path
from pathlib import Path

from milbench.chains import webkb as W
from milbench.data.store import write_bags
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
c = snakemake.params.cfg
task = snakemake.wildcards.task
site = W.load_site(Path(snakemake.input.pages).parent)
synthetic = bool(site.extra.get("synthetic", False))
bags, vocab, _ = W.build_task_bags(
    site, task, max_features=c["max_features"], min_df=c["min_df"], width=c["passage_words"],
    stride=c["passage_stride"], seed=c["seed"], synthetic=synthetic)
bags.meta.update(source=site.extra.get("source"), sha256=site.sha256,
                 chain="WebKB crawl -> pages (MIME header stripped, markup removed, stop words, "
                       "Porter) -> passages -> TF-IDF; hyperlinks resolved to pages",
                 params=dict(c), leakage="vocabulary and idf fitted on all linked pages without "
                                         "labels (unsupervised, before CV, as the paper)")
write_bags(bags, Path(snakemake.output[0]).parent)
log.info("webkb-%s: %d bags (%d positive), %d instances x %d terms (%.1f MB float32), "
         "%d bag edges, %d instance edges, synthetic=%s", task, len(bags), int(bags.labels.sum()),
         len(bags.instances), bags.n_features, bags.instances.nbytes / 1e6,
         bags.meta["n_bag_edges"], bags.meta["n_instance_edges"], synthetic)
