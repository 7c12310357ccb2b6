"""Rule corel_codebook: one k-means codebook per view (HSV, dense HOG, LBP) on a seeded pixel
sample over all selected images (unsupervised)."""
import _paths  # noqa: F401 - puts workflow/ on sys.path
import time

import pandas as pd

from milbench.chains import images as im
from milbench.utils.runlog import setup

log = setup(snakemake)  # noqa: F821 - injected by Snakemake
c = snakemake.params.cfg
table = pd.read_csv(snakemake.input.table, dtype={"image_id": str})
t0 = time.perf_counter()
books = im.fit_codebooks(table["path"].tolist(), n_words=c["codebook"],
                         pixels_per_image=c["pixels_per_image"], random_state=c["seed"],
                         n_jobs=snakemake.threads)
im.save_codebooks(snakemake.output[0], books, n_words=c["codebook"],
                  pixels_per_image=c["pixels_per_image"], seed=c["seed"], n_images=len(table))
log.info("codebooks %s fitted in %.1fs", {v: b.shape for v, b in books.items()},
         time.perf_counter() - t0)
