"""Rule reddit_select: SNAP CSV -> submissions of the sampled positive / negative items."""
import _paths  # noqa: F401 - puts workflow/ on sys.path
import json

from milbench.chains import reddit as rd
from milbench.utils.hashing import sha256_file
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
c = snakemake.params.cfg
df = rd.read_submissions(snakemake.input.csv)
sub, labels, info = rd.select_bags(df, n_pos=c["n_pos"], n_neg=c["n_neg"],
                                   pos_threshold=c["pos_threshold"],
                                   neg_threshold=c["neg_threshold"], seed=c["seed"])
sub = sub.assign(label=sub["image_id"].map(labels).astype("int8"))
sub.to_parquet(snakemake.output.submissions, index=False)
info.update(source=str(snakemake.params.source_label), synthetic=bool(snakemake.params.synthetic),
            sha256={str(snakemake.input.csv): sha256_file(snakemake.input.csv)},
            n_rows_in_source=len(df))
with open(snakemake.output.info, "w") as f:
    json.dump(info, f, indent=2)
log.info("%s", info)
