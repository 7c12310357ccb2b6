"""Rule corel_select: image folder + keywords -> selected images (positives / negatives)."""
import _paths  # noqa: F401 - puts workflow/ on sys.path
import json

from milbench.chains import images as im
from milbench.chains.synthetic_scenes import is_synthetic
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
c = snakemake.params.cfg
table = im.read_image_table(snakemake.input.source)
sel, info = im.select_images(table, positive=c["positive"], negative=c["negative"],
                             exclude=c["exclude"], n_pos=c["n_pos"], n_neg=c["n_neg"],
                             seed=c["seed"])
if info["n_positive"] < (c["n_pos"] or 0) or info["n_negative"] < (c["n_neg"] or 0):
    log.warning("fewer images than requested: %s", info)
sel.to_csv(snakemake.output.table, index=False)
info.update(source=str(snakemake.params.source_label), synthetic=is_synthetic(snakemake.input.source),
            n_images_in_source=len(table))
with open(snakemake.output.info, "w") as f:
    json.dump(info, f, indent=2)
log.info("%s", info)
