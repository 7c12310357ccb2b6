"""Rule reddit_bags: selected submissions -> 2-view Bags (title TF-IDF, 55 factors) -> Parquet."""
import _paths  # noqa: F401 - puts workflow/ on sys.path
import json
from pathlib import Path

import pandas as pd

from milbench.chains import reddit as rd
from milbench.data.store import write_bags
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
c = snakemake.params.cfg
sub = pd.read_parquet(snakemake.input.submissions)
sub["image_id"] = sub["image_id"].astype(str)
labels = sub.groupby("image_id", sort=False)["label"].first()
info = json.loads(Path(snakemake.input.info).read_text())
meta = {"source": info["source"], "synthetic": bool(info["synthetic"]), "sha256": info["sha256"],
        "chain": "SNAP web-Reddit -> bags per image_id -> title TF-IDF + 55 factors",
        "selection": {k: v for k, v in info.items() if k != "sha256"},
        "params": {k: v for k, v in c.items() if k != "synthetic"},
        "leakage": "title vocabulary/IDF and top subreddits fitted on all selected bags "
                   "without labels (unsupervised, before CV)"}
bags = rd.build_reddit_bags(sub, labels, n_terms=c["n_terms"], subreddits=c["subreddits"],
                            time_column=c["time_column"], meta=meta)
write_bags(bags, Path(snakemake.output[0]).parent)
log.info("reddit: %d bags (%d positive), %d instances, views %s, synthetic=%s", len(bags),
         int(bags.labels.sum()), len(bags.instances), bags.views, meta["synthetic"])
