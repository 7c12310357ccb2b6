"""Rule corel_segment: SAS bipartite-graph segmentation of every selected image (npz of region
maps) plus overlay PNGs of a sample of images."""
import _paths  # noqa: F401 - puts workflow/ on sys.path
from pathlib import Path

import cv2
import pandas as pd

from milbench.chains import images as im
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
c = snakemake.params.cfg
table = pd.read_csv(snakemake.input.table, dtype={"image_id": str})
segs = im.segment_images(table["path"].tolist(), n_regions=c["regions"],
                         oversegmentations=c["oversegmentations"], alpha=c["alpha"],
                         beta=c["beta"], nb=c["nb"], random_state=c["seed"],
                         n_jobs=snakemake.threads)
im.save_segments(snakemake.output.segments, table["image_id"], segs)
out = Path(snakemake.output.overlays)
out.mkdir(parents=True, exist_ok=True)
half = max(1, c["overlays"] // 2)
sample = pd.concat([table[table["label"] == 1].head(half), table[table["label"] == 0].head(half)])
for i, row in sample.iterrows():
    pic = im.overlay(im.load_rgb(row["path"]), segs[i])
    name = f"{'pos' if row['label'] else 'neg'}_{str(row['image_id']).replace('/', '_')}.png"
    cv2.imwrite(str(out / name), cv2.cvtColor(pic, cv2.COLOR_RGB2BGR))
log.info("segmented %d images into %d regions; %d overlays in %s", len(table), c["regions"],
         len(sample), out)
