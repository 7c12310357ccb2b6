"""Rule webkb_parse: crawl folder -> parsed pages (stemmed tokens) + resolved hyperlinks."""
import _paths  # noqa: F401 - puts workflow/ on sys.path
from pathlib import Path

from milbench.chains import webkb as W
from milbench.utils.hashing import sha256_file
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
synthetic = bool(snakemake.params.synthetic)
site = W.read_site(snakemake.input[0], hash_files=False)
raw = {}
for f in snakemake.params.raw_files:
    h = sha256_file(f) if Path(f).is_file() else None
    raw[str(f)] = h
site.sha256 = raw
keep = W.linked_nodes(site)
site.stats["linked_pages"] = int(len(keep))
W.save_site(site, Path(snakemake.output.pages).parent,
            extra={"synthetic": synthetic, "source": snakemake.params.source})
log.info("%s: %s; %d pages with an in- or out-link kept of %d (synthetic=%s)",
         snakemake.params.source, site.stats, len(keep), len(site.urls), synthetic)
