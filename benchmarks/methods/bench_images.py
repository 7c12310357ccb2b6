"""Corel image chain: CPU per image and stage; codebook fit on 2 cores vs 1, wall s and speed-up.

    python -m benchmarks.methods.bench_images [--n 40] [--codebook 256] [--source PATH]

Images: the real Corel-5k archive (../shared/data/corel5k/corel5k.tar.gz, extracted to a temp
folder — 0.5 s) when present, else SYNTHETIC scenes of the same size (192 × 128).  It prints,
per stage, the mean CPU seconds per image (process time, robust to other load on the machine)
and wall seconds; then the codebook fit (pixel sampling + MiniBatchKMeans, 3 views) for N
images with 1 and 2 cores (joblib workers for the sampling and BLAS/OpenMP threads for
k-means), as wall time and the 2-core speed-up, measured in the same run.
"""
from __future__ import annotations

from benchmarks import DATA
import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def images(n, source=None):
    from milbench.chains import images as im
    from milbench.chains.synthetic_scenes import make_synthetic_scenes

    tmp = Path(tempfile.mkdtemp(prefix="bench_images_"))
    archive = Path(source) if source else DATA / "corel5k" / "corel5k.tar.gz"
    if archive.exists():
        from milbench.data.sources import safe_extract
        t = time.perf_counter()
        root = safe_extract(archive, tmp / "corel5k") if archive.is_file() else archive
        print(f"images: real Corel-5k ({archive}), extracted in {time.perf_counter() - t:.1f}s")
        kind = "real Corel-5k"
    else:
        root = make_synthetic_scenes(tmp / "syn", n_pos=n // 2 + 1, n_neg=n // 2 + 1, n_other=0,
                                     size=(128, 192))
        print("images: SYNTHETIC scenes 128x192 (Corel archive absent)")
        kind = "synthetic"
    table = im.read_image_table(root)
    sel, _ = im.select_images(table, n_pos=n // 2, n_neg=n - n // 2, seed=0)
    return sel["path"].tolist(), kind


def stage_costs(paths):
    from skimage.color import rgb2lab

    from milbench.chains import images as im

    stages = {k: [0.0, 0.0] for k in ("decode", "oversegment", "bipartite graph", "transfer cut",
                                      "connected regions", "hsv", "hog", "lbp")}

    def timed(name, fn, *a, **kw):
        w, c = time.perf_counter(), time.process_time()
        out = fn(*a, **kw)
        stages[name][0] += time.process_time() - c
        stages[name][1] += time.perf_counter() - w
        return out

    im.segment_image(im.load_rgb(paths[0]))                    # warm imports
    for p in paths:
        rgb = timed("decode", im.load_rgb, p)
        overs = timed("oversegment", im.oversegment, rgb)
        B, groups = timed("bipartite graph", im.bipartite_graph, rgb, overs)
        cl = timed("transfer cut", im.transfer_cut, B, rgb.shape[0] * rgb.shape[1], 5, groups)
        timed("connected regions", im.connected_regions, cl.reshape(rgb.shape[:2]), 5, rgb2lab(rgb))
        for v in ("hsv", "hog", "lbp"):
            timed(v, im.DESCRIPTORS[v], rgb)
    n = len(paths)
    print(f"\nper-image cost over {n} images (ms)      CPU    wall")
    tot = [0.0, 0.0]
    for k, (c, w) in stages.items():
        print(f"  {k:<22}{1000 * c / n:>16.1f}{1000 * w / n:>8.1f}")
        tot[0] += c
        tot[1] += w
    print(f"  {'total':<22}{1000 * tot[0] / n:>16.1f}{1000 * tot[1] / n:>8.1f}")


def codebook_cores(paths, n_words):
    """Codebook fit split in its two parts: pixel sampling (descriptors of every image; joblib
    worker processes) and MiniBatchKMeans (3 views; OpenMP/BLAS threads), on 1 and 2 cores."""
    import os

    from sklearn.cluster import MiniBatchKMeans
    from threadpoolctl import threadpool_limits

    from milbench.chains import images as im

    im.MIN_IMAGES_PER_WORKER = 4                       # let 2 workers start on small N
    seeds = np.random.SeedSequence(0).generate_state(len(paths))
    args = [(p, im.VIEWS, 500, int(s)) for p, s in zip(paths, seeds)]
    res = {}
    for cores in (1, 2):
        w = time.perf_counter()
        samples = im._parallel(im._sample_one, args, cores)
        t_sample = time.perf_counter() - w
        w = time.perf_counter()
        with threadpool_limits(cores):
            for v in im.VIEWS:
                X = np.concatenate([s[v] for s in samples])
                MiniBatchKMeans(n_clusters=n_words, random_state=0, n_init=3, batch_size=4096,
                                max_iter=100, reassignment_ratio=0.01).fit(X)
        res[cores] = (t_sample, time.perf_counter() - w)
    print(f"\ncodebook fit, {len(paths)} images x 500 px, {n_words} words x 3 views "
          f"(load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):")
    for cores, (a, b) in res.items():
        print(f"  {cores} core(s): pixel sampling {a:6.1f}s  k-means {b:6.1f}s  total {a + b:6.1f}s (wall)")
    print(f"  speed-up 2 vs 1 core: sampling {res[1][0] / res[2][0]:.2f}x, k-means "
          f"{res[1][1] / res[2][1]:.2f}x, total {sum(res[1]) / sum(res[2]):.2f}x")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--codebook", type=int, default=256)
    ap.add_argument("--source", default=None)
    a = ap.parse_args()
    paths, kind = images(a.n, a.source)
    stage_costs(paths)
    codebook_cores(paths, a.codebook)


if __name__ == "__main__":
    main()
