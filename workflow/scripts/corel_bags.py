"""Rule corel_bags: region histograms of codes -> 3-view Bags (hsv, hog, lbp) -> Parquet store."""
import _paths  # noqa: F401 - puts workflow/ on sys.path
import json
from pathlib import Path

import pandas as pd

from milbench.chains import images as im
from milbench.data.store import write_bags
from milbench.utils.hashing import sha256_file
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
c = snakemake.params.cfg
table = pd.read_csv(snakemake.input.table, dtype={"image_id": str})
info = json.loads(Path(snakemake.input.info).read_text())
src = Path(str(snakemake.params.source_file)) if snakemake.params.source_file else None
meta = {
    "source": info["source"],
    "synthetic": bool(info["synthetic"]),
    "sha256": {str(src): sha256_file(src)} if src is not None and src.is_file() else {},
    "chain": "corel images -> SAS segmentation -> HSV/HOG/LBP codebook histograms",
    "selection": info,
    "params": {k: v for k, v in c.items() if k != "synthetic"},
}
bags = im.build_bags(table, im.load_segments(snakemake.input.segments),
                     im.load_codebooks(snakemake.input.codebooks), meta=meta,
                     n_jobs=snakemake.threads)
write_bags(bags, Path(snakemake.output[0]).parent)
log.info("corel-cats: %d bags (%d positive), %d instances, views %s, synthetic=%s", len(bags),
         int(bags.labels.sum()), len(bags.instances), bags.views, meta["synthetic"])
